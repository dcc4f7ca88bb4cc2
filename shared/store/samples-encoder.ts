/**
 * The samples encoder threads (samples-encoder-worker.ts), shared by every
 * samples writer of the process: started at the first request, they encode
 * row groups on other cores while the ingest's thread goes on parsing, and
 * are left idle (not holding the process open) between files. Requests wait
 * in one queue and go to whichever thread has room; the writer puts the
 * answers back in file order.
 *
 *   await encoderPool.write(group, first, parsed)  -> { bytes, rowGroup }  (one row group)
 *   await encoderPool.footer(placed)               -> the footer's bytes
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { EncodedGroup, PlacedGroup, SampleGroup } from './samples-encoding.ts';

/** The buffers of a group, for postMessage's transfer list. */
export const groupBuffers = (group: SampleGroup): ArrayBuffer[] =>
  [group.reports.buffer, group.lines.buffer, group.sinceBoot.buffer, group.metrics.buffer] as ArrayBuffer[];

export type EncoderRequest = { id: number } & (
  { op: 'write'; group: SampleGroup; first: boolean } | { op: 'footer'; groups: PlacedGroup[] }
);
export interface EncoderReply {
  id: number;
  bytes?: Uint8Array;
  rowGroup?: EncodedGroup['rowGroup'];
  error?: string;
}

/** The worker's file, beside this module and of its kind: `.mjs` in a bundle, `.js` built, `.ts` in the sources. */
export const ENCODER_WORKER = 'samples-encoder-worker';

/** tsx's ES module API (`tsx/esm/api`, its import condition), as a file URL a thread can import. */
function tsxLoader(): string {
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const exports = JSON.parse(readFileSync(manifest, 'utf8')).exports as Record<string, { import: { default: string } }>;
  return pathToFileURL(join(dirname(manifest), exports['./esm/api']!.import.default)).href;
}

/**
 * A small young generation: an encoder's garbage (a group's arrays and pages)
 * dies young, and a scavenge frees its buffers long before the default limit
 * would (a quarter less RSS on a 200 MB log; BENCHMARKS.md).
 */
const ENCODER_LIMITS = { resourceLimits: { maxYoungGenerationSizeMb: 8 } };

function startWorker(): Worker {
  const here = fileURLToPath(import.meta.url);
  const entry = new URL(`./${ENCODER_WORKER}${extname(here)}`, import.meta.url);
  if (extname(here) !== '.ts') return new Worker(entry, ENCODER_LIMITS);
  // From the sources (tests, scripts): the thread registers the TypeScript loader itself, as test runners pass none on.
  const [loader, worker] = [tsxLoader(), entry.href].map((url) => JSON.stringify(url));
  return new Worker(`import(${loader}).then((tsx) => { tsx.register(); return import(${worker}); })`, {
    eval: true,
    ...ENCODER_LIMITS,
  });
}

/**
 * Threads: one per core but the one the parse needs (at least one); the parse
 * is the longer task, and an encoder beside it on its core slows it more than
 * it helps (BENCHMARKS.md). Once a file is parsed, its last row groups may
 * use that core too (`parsed`). At most MAX_ENCODER_THREADS: each costs an
 * isolate's memory.
 */
const MAX_ENCODER_THREADS = 4;
const threadsFor = (parsed: boolean) =>
  Math.max(1, Math.min(MAX_ENCODER_THREADS, availableParallelism() - (parsed ? 0 : 1)));

/** Requests a thread holds at once: the next is there when it finishes one, the rest wait in the pool's queue. */
const REQUESTS_PER_THREAD = 2;

interface Queued {
  request: EncoderRequest;
  transfer: ArrayBuffer[];
  /** Asked for once its file was parsed: while one waits, every core encodes. */
  parsed: boolean;
  resolve: (reply: EncoderReply) => void;
  reject: (error: Error) => void;
}

/** One encoder thread and the requests it holds. */
class EncoderThread {
  private worker: Worker | undefined;
  readonly held = new Map<number, Queued>();

  constructor(private readonly onAnswer: () => void) {}

  send(queued: Queued): void {
    const worker = (this.worker ??= this.start());
    this.held.set(queued.request.id, queued);
    // Held open only while it owes an answer.
    if (this.held.size === 1) worker.ref();
    worker.postMessage(queued.request, queued.transfer);
  }

  private start(): Worker {
    const worker = startWorker();
    worker.unref();
    worker.on('message', (reply: EncoderReply) => {
      const queued = this.held.get(reply.id);
      this.held.delete(reply.id);
      if (this.held.size === 0) worker.unref();
      if (reply.error !== undefined) queued?.reject(new Error(`encoding the samples object failed: ${reply.error}`));
      else queued?.resolve(reply);
      this.onAnswer();
    });
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`the samples encoder thread stopped (exit code ${code})`)));
    return worker;
  }

  /** Every request it holds fails; the next one starts a new thread. */
  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const queued of this.held.values()) queued.reject(error);
    this.held.clear();
    this.onAnswer();
  }
}

/** Requests in the order they came, taken by whichever thread has room: a late thread helps with the backlog. */
class EncoderPool {
  private readonly threads: EncoderThread[] = [];
  private readonly queue: Queued[] = [];
  /** Requests of parsed files not yet answered. */
  private parsed = 0;
  private lastId = 0;

  /** One row group, encoded on its own; `first` keeps the file's magic before it. */
  async write(group: SampleGroup, first: boolean, parsed: boolean): Promise<EncodedGroup> {
    const reply = await this.request({ id: ++this.lastId, op: 'write', group, first }, groupBuffers(group), parsed);
    return { bytes: reply.bytes!, rowGroup: reply.rowGroup! };
  }

  /** The footer of a file whose row groups went where `groups` says. */
  async footer(groups: PlacedGroup[]): Promise<Uint8Array> {
    return (await this.request({ id: ++this.lastId, op: 'footer', groups }, [], true)).bytes!;
  }

  private request(request: EncoderRequest, transfer: ArrayBuffer[], parsed: boolean): Promise<EncoderReply> {
    return new Promise((resolve, reject) => {
      if (parsed) this.parsed++;
      const settle =
        <T>(then: (value: T) => void) =>
        (value: T) => {
          if (parsed) this.parsed--;
          then(value);
        };
      this.queue.push({ request, transfer, parsed, resolve: settle(resolve), reject: settle(reject) });
      this.pump();
    });
  }

  /** Queued requests to the threads with room, of as many threads as may encode now. */
  private pump(): void {
    const usable = threadsFor(this.parsed > 0);
    while (this.threads.length < usable) this.threads.push(new EncoderThread(() => this.pump()));
    for (let i = 0; i < usable && this.queue.length > 0; i++) {
      const thread = this.threads[i]!;
      while (this.queue.length > 0 && thread.held.size < REQUESTS_PER_THREAD) thread.send(this.queue.shift()!);
    }
  }
}

// Pure: a bundle that imports this module and never encodes (the settlers) keeps none of it.
export const encoderPool = /* @__PURE__ */ new EncoderPool();
