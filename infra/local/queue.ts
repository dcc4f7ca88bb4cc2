/**
 * The local lab's stand-in for the SQS queue and its event source mapping: S3
 * notifications go in, SQS-shaped batches (up to 10 messages, after a short
 * batching window) go to the very same ingest handler; messages it reports as
 * failed come back after a backoff, and after the last receive they land in a
 * dead-letter list, as with the real queue's redrive policy.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { sqsRecord, type S3Notification } from './events.ts';

export interface DeadLetter {
  messageId: string;
  body: string;
  receives: number;
  failedAt: string;
}

export interface LocalQueueOptions {
  handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;
  context: () => Context;
  batchSize?: number;
  batchWindowMs?: number;
  maxReceiveCount?: number;
  retryDelayMs?: number;
  onDeadLetter?: (letter: DeadLetter) => void;
  onError?: (error: unknown) => void;
}

interface Message {
  messageId: string;
  body: string;
  receives: number;
  visibleAt: number;
}

export class LocalQueue {
  private messages: Message[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private idleWaiters: (() => void)[] = [];
  private stopped = false;
  readonly deadLetters: DeadLetter[] = [];
  delivered = 0;

  constructor(private readonly options: LocalQueueOptions) {}

  send(notification: S3Notification): void {
    this.sendBody(sqsRecord(notification).body);
  }

  /** A message body as it was sent before (a message kept across a restart). */
  sendBody(body: string): void {
    // Once stopped, a message is only kept (pendingBodies), not delivered.
    this.messages.push({ messageId: randomUUID(), body, receives: 0, visibleAt: Date.now() });
    this.schedule(this.options.batchWindowMs ?? 100);
  }

  /** Bodies of the messages not yet processed (to keep them across a restart). */
  pendingBodies(): string[] {
    return this.messages.map((m) => m.body);
  }

  /** Messages not yet processed for good (waiting or in flight). */
  get depth(): number {
    return this.messages.length;
  }

  /** Resolves once every message sent so far is processed or dead-lettered. */
  idle(): Promise<void> {
    if (this.messages.length === 0 && this.running === undefined) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stop taking messages; let the batch in flight finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delay: number): void {
    if (this.timer || this.running || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.deliver().finally(() => {
        this.running = undefined;
        this.afterBatch();
      });
    }, delay);
  }

  private afterBatch(): void {
    if (this.messages.length === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
      return;
    }
    const next = Math.min(...this.messages.map((m) => m.visibleAt));
    this.schedule(Math.max(0, next - Date.now()));
  }

  private async deliver(): Promise<void> {
    const now = Date.now();
    const batch = this.messages.filter((m) => m.visibleAt <= now).slice(0, this.options.batchSize ?? 10);
    if (batch.length === 0) return;
    for (const m of batch) m.receives++;
    const event: SQSEvent = {
      Records: batch.map((m) => ({ ...sqsRecord(JSON.parse(m.body) as object, { messageId: m.messageId, receiveCount: m.receives }), body: m.body })),
    };
    let failed: Set<string>;
    try {
      const response = await this.options.handler(event, this.options.context());
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      // A thrown handler fails the whole batch, as Lambda does.
      this.options.onError?.(error);
      failed = new Set(batch.map((m) => m.messageId));
    }
    this.delivered += batch.length - failed.size;
    const maxReceives = this.options.maxReceiveCount ?? 3;
    for (const m of batch) {
      if (!failed.has(m.messageId)) {
        this.messages.splice(this.messages.indexOf(m), 1);
      } else if (m.receives >= maxReceives) {
        this.messages.splice(this.messages.indexOf(m), 1);
        const letter = { messageId: m.messageId, body: m.body, receives: m.receives, failedAt: new Date().toISOString() };
        this.deadLetters.push(letter);
        this.options.onDeadLetter?.(letter);
      } else {
        m.visibleAt = Date.now() + (this.options.retryDelayMs ?? 500) * 2 ** (m.receives - 1);
      }
    }
  }
}
