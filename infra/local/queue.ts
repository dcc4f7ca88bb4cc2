/**
 * The local lab's stand-in for the SQS queue and its event source mapping: S3
 * notifications go in, SQS-shaped batches go to the very same ingest handler;
 * messages it reports as failed come back after a backoff, and after the last
 * receive they are dead-lettered, as with the real queue's redrive policy.
 *
 * - Durable (with a journal, see journal.ts): a message is on disk when `send`
 *   returns and leaves it only once its handler is done with it; on start, every
 *   message kept is delivered again, its receive count carried on.
 * - Concurrent: up to `workers` batches are in flight at once, so one slow
 *   message (a huge file, a gzip bomb being refused) does not hold the others.
 *   A worker is one execution environment: it runs one batch at a time.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { INGEST_LIMITS } from '../../shared/config.ts';
import { sqsRecord, type S3Notification } from './events.ts';
import type { DeadLetter, Journal, JournalEntry, LoadedJournal } from './journal.ts';

export type { DeadLetter } from './journal.ts';

/** The handler of one worker: `worker` says which (0 .. workers-1), for handlers that keep state per environment. */
export type QueueHandler = (event: SQSEvent, context: Context, worker: number) => Promise<SQSBatchResponse | void>;

export interface LocalQueueOptions {
  handler: QueueHandler;
  context: () => Context;
  /** Where messages are kept until done with; in memory only without one. */
  journal?: Journal;
  /**
   * Deliver nothing until start() is called (the lab sets up its handlers first); by default
   * deliveries begin at once.
   */
  held?: boolean;
  /** Batches in flight at once (default 1). */
  workers?: number;
  /** Messages per batch (default: the stack's, INGEST_LIMITS.batchSize). */
  batchSize?: number;
  /** How long a batch waits to fill up before it goes anyway. */
  batchWindowMs?: number;
  /** Receives before a message is dead-lettered (default: the stack's redrive policy, INGEST_LIMITS). */
  maxReceiveCount?: number;
  /**
   * Wait before the first redelivery, doubled for each later one. SQS waits out
   * the visibility timeout instead; the lab retries sooner.
   */
  retryDelayMs?: number;
  /**
   * Before the first delivery of a message sent `unprepared`: its final body, or
   * undefined when there is nothing left to deliver. A failure counts as a failed receive.
   */
  prepare?: (body: string) => Promise<string | undefined>;
  /** Called for every dead letter before it leaves the queue; what it throws goes to onError. */
  onDeadLetter?: (letter: DeadLetter) => void | Promise<void>;
  onError?: (error: unknown) => void;
}

export interface StartReport {
  /** Messages kept from before, delivered again. */
  resumed: number;
  /** Of those, the ones already received as often as allowed: dead-lettered without another delivery. */
  exhausted: number;
  unreadable: string[];
}

interface Message extends JournalEntry {
  visibleAt: number;
  inFlight: boolean;
}

/**
 * The lab's own timings: a short batch window and retry delay keep it quick (the
 * stack's batching window is seconds). Batch size and receives are the stack's.
 */
const DEFAULTS = { workers: 1, batchSize: INGEST_LIMITS.batchSize, batchWindowMs: 100, retryDelayMs: 500 };

export class LocalQueue {
  private readonly messages: Message[] = [];
  private readonly freeWorkers: number[];
  private readonly running = new Set<Promise<void>>();
  private readonly idleWaiters: (() => void)[] = [];
  private readonly loaded: LoadedJournal;
  private timer: { handle: NodeJS.Timeout; at: number } | undefined;
  private nextSeq: number;
  private started = false;
  private stopped = false;
  readonly deadLetters: DeadLetter[] = [];
  delivered = 0;

  constructor(private readonly options: LocalQueueOptions) {
    this.freeWorkers = Array.from({ length: options.workers ?? DEFAULTS.workers }, (_, i) => i);
    // What the journal kept goes first, in the order it was sent; delivered from start().
    this.loaded = options.journal?.load() ?? { entries: [], unreadable: [] };
    const now = Date.now();
    this.messages.push(...this.loaded.entries.map((entry) => ({ ...entry, visibleAt: now, inFlight: false })));
    this.nextSeq = this.loaded.entries.reduce((next, entry) => Math.max(next, entry.seq + 1), 0);
    if (!options.held) this.start();
  }

  /** Starts delivering a held queue; messages sent before are kept (journaled), not yet delivered. */
  start(): StartReport {
    if (this.started) throw new Error('the queue is already started');
    const kept = new Set(this.loaded.entries.map((e) => e.messageId));
    const resumed = this.messages.filter((m) => kept.has(m.messageId));
    // A message received as often as allowed whose last delivery never finished (the lab died)
    // fails, as SQS redrives it.
    const exhausted = resumed.filter((m) => m.receives >= this.maxReceives);
    for (const m of exhausted) this.track(this.deadLetter(m));
    this.started = true;
    this.pump();
    return { resumed: resumed.length, exhausted: exhausted.length, unreadable: this.loaded.unreadable };
  }

  send(notification: S3Notification, options: { unprepared?: boolean } = {}): void {
    this.sendBody(JSON.stringify(notification), options);
  }

  /**
   * Sends a message body; with a journal it is on disk when this returns.
   * `unprepared`: `prepare` turns it into its final body before its first delivery.
   */
  sendBody(body: string, options: { unprepared?: boolean } = {}): void {
    const message: Message = {
      messageId: randomUUID(),
      seq: this.nextSeq++,
      sentAt: new Date().toISOString(),
      receives: 0,
      body,
      ...(options.unprepared ? { unprepared: true as const } : {}),
      visibleAt: Date.now(),
      inFlight: false,
    };
    this.persist(message);
    this.messages.push(message);
    this.pump();
  }

  /** Messages not yet done with (waiting or in flight). */
  get depth(): number {
    return this.messages.length;
  }

  /** Deliveries (and dead-letterings) under way right now. */
  get inFlight(): number {
    return this.running.size;
  }

  /** Resolves once every message sent so far is done with (handled or dead-lettered). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops delivering; resolves once the batches in flight are done. What is left stays in the journal. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    await Promise.all([...this.running]);
  }

  private get maxReceives(): number {
    return this.options.maxReceiveCount ?? INGEST_LIMITS.maxReceiveCount;
  }

  private isIdle(): boolean {
    return this.started && this.messages.length === 0 && this.running.size === 0;
  }

  private persist(message: Message): void {
    this.options.journal?.write(entryOf(message));
  }

  /** Hands batches to free workers: a full batch at once, a partial one after the batch window. */
  private pump(): void {
    if (!this.started || this.stopped) return;
    this.clearTimer();
    const batchSize = this.options.batchSize ?? DEFAULTS.batchSize;
    const windowMs = this.options.batchWindowMs ?? DEFAULTS.batchWindowMs;
    for (;;) {
      const now = Date.now();
      const visible = this.messages.filter((m) => !m.inFlight && m.visibleAt <= now);
      if (this.freeWorkers.length === 0 || visible.length === 0) break;
      const windowEnds = Math.min(...visible.map((m) => m.visibleAt)) + windowMs;
      if (visible.length < batchSize && now < windowEnds) {
        this.wakeAt(windowEnds);
        break;
      }
      this.dispatch(this.freeWorkers.shift()!, visible.slice(0, batchSize));
    }
    const waiting = this.messages.filter((m) => !m.inFlight && m.visibleAt > Date.now());
    if (waiting.length > 0) this.wakeAt(Math.min(...waiting.map((m) => m.visibleAt)));
    if (this.isIdle()) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** One timer, for the earliest moment something can go. */
  private wakeAt(time: number): void {
    if (this.timer && this.timer.at <= time) return;
    this.clearTimer();
    const handle = setTimeout(
      () => {
        this.timer = undefined;
        this.pump();
      },
      Math.max(0, time - Date.now()),
    );
    this.timer = { handle, at: time };
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer.handle);
    this.timer = undefined;
  }

  private dispatch(worker: number, batch: Message[]): void {
    for (const m of batch) m.inFlight = true;
    this.track(
      this.deliver(worker, batch).finally(() => {
        this.freeWorkers.push(worker);
        this.freeWorkers.sort((a, b) => a - b);
      }),
    );
  }

  /** Keeps a delivery (or a dead-lettering) counted as running until it settles, then looks for more work. */
  private track(work: Promise<void>): void {
    const tracked = work
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => {
        this.running.delete(tracked);
        this.pump();
      });
    this.running.add(tracked);
  }

  private async deliver(worker: number, batch: Message[]): Promise<void> {
    const failed = new Set<string>();
    const ready: Message[] = [];
    for (const m of batch) {
      // Counted on disk before the handler sees it: a delivery the lab dies in still counts, as in SQS.
      m.receives++;
      this.persist(m);
      const outcome = await this.prepared(m);
      if (outcome === 'failed') failed.add(m.messageId);
      else if (outcome === 'ready') ready.push(m);
    }
    if (ready.length > 0) for (const id of await this.invoke(worker, ready)) failed.add(id);
    this.delivered += ready.filter((m) => !failed.has(m.messageId)).length;
    for (const m of batch) {
      if (!this.messages.includes(m)) continue;
      if (!failed.has(m.messageId)) this.finish(m);
      else if (m.receives >= this.maxReceives) await this.deadLetter(m);
      else this.retryLater(m);
    }
  }

  /** A message's first preparation, if it needs one: 'ready', 'gone' (nothing to deliver) or 'failed'. */
  private async prepared(m: Message): Promise<'ready' | 'gone' | 'failed'> {
    if (!m.unprepared || !this.options.prepare) return 'ready';
    try {
      const body = await this.options.prepare(m.body);
      if (body === undefined) {
        this.finish(m);
        return 'gone';
      }
      m.body = body;
      delete m.unprepared;
      // Every later delivery carries the same body (the same eTag and sequencer, so the same upload).
      this.persist(m);
      return 'ready';
    } catch (error) {
      this.options.onError?.(error);
      return 'failed';
    }
  }

  /** One invocation of the worker's handler: the ids of the messages that failed. */
  private async invoke(worker: number, batch: Message[]): Promise<string[]> {
    const event: SQSEvent = {
      Records: batch.map((m) =>
        sqsRecord(m.body, { messageId: m.messageId, receiveCount: m.receives, sentAt: new Date(m.sentAt) }),
      ),
    };
    try {
      const response = await this.options.handler(event, this.options.context(), worker);
      return (response?.batchItemFailures ?? []).map((f) => f.itemIdentifier);
    } catch (error) {
      // A thrown handler fails the whole batch, as Lambda does.
      this.options.onError?.(error);
      return batch.map((m) => m.messageId);
    }
  }

  private retryLater(m: Message): void {
    m.inFlight = false;
    m.visibleAt = Date.now() + (this.options.retryDelayMs ?? DEFAULTS.retryDelayMs) * 2 ** (m.receives - 1);
  }

  /**
   * Hands the letter on (onDeadLetter), records it in the dead-letter file, and
   * only then drops the message: a crash on the way dead-letters it again.
   */
  private async deadLetter(m: Message): Promise<void> {
    m.inFlight = true;
    const letter: DeadLetter = {
      messageId: m.messageId,
      body: m.body,
      receives: m.receives,
      failedAt: new Date().toISOString(),
    };
    try {
      await this.options.onDeadLetter?.(letter);
    } catch (error) {
      this.options.onError?.(error);
    }
    this.options.journal?.recordDeadLetter(letter);
    this.deadLetters.push(letter);
    this.finish(m);
  }

  /** Done with: off the journal and out of the queue. */
  private finish(m: Message): void {
    this.options.journal?.remove(entryOf(m));
    const index = this.messages.indexOf(m);
    if (index >= 0) this.messages.splice(index, 1);
  }
}

function entryOf(message: Message): JournalEntry {
  const { visibleAt: _visibleAt, inFlight: _inFlight, ...entry } = message;
  return entry;
}
