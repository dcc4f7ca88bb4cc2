/**
 * The samples encoder thread (samples-encoder-worker.ts), shared by every
 * samples writer of the process: started at the first request, it encodes
 * row groups on another core while the ingest's thread goes on parsing, and
 * is left idle (not holding the process open) between files.
 *
 *   const file = encoderThread.newFile();
 *   await encoderThread.request(file, 'write', group)  -> the row group's bytes
 *   await encoderThread.request(file, 'finish')        -> the footer's bytes
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** One series' samples as the writer hands them over: `count` of each, metrics column after column. */
export interface SampleGroup {
  series: string;
  count: number;
  reports: Int32Array;
  lines: Int32Array;
  times: (string | null)[];
  sinceBoot: Uint8Array;
  /** SAMPLE_METRICS.length columns of `capacity` values: metric m of sample i at m * capacity + i. */
  metrics: Float64Array;
  capacity: number;
}

/** The buffers of a group, for postMessage's transfer list. */
export const groupBuffers = (group: SampleGroup): ArrayBuffer[] =>
  [group.reports.buffer, group.lines.buffer, group.sinceBoot.buffer, group.metrics.buffer] as ArrayBuffer[];

export type EncoderRequest = { id: number; file: number } & (
  { op: 'write'; group: SampleGroup } | { op: 'finish' } | { op: 'drop' }
);
export interface EncoderReply {
  id: number;
  bytes?: Uint8Array;
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

function startWorker(): Worker {
  const here = fileURLToPath(import.meta.url);
  const entry = new URL(`./${ENCODER_WORKER}${extname(here)}`, import.meta.url);
  if (extname(here) !== '.ts') return new Worker(entry);
  // From the sources (tests, scripts): the thread registers the TypeScript loader itself, as test runners pass none on.
  const [loader, worker] = [tsxLoader(), entry.href].map((url) => JSON.stringify(url));
  return new Worker(`import(${loader}).then((tsx) => { tsx.register(); return import(${worker}); })`, { eval: true });
}

interface Waiting {
  resolve: (bytes: Uint8Array | undefined) => void;
  reject: (error: Error) => void;
}

class EncoderThread {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private lastId = 0;
  private lastFile = 0;

  /** A number for a new file's requests. */
  newFile(): number {
    return ++this.lastFile;
  }

  /** Encode a group, finish or drop a file; requests are answered in the order they are made. */
  request(file: number, op: 'write', group: SampleGroup): Promise<Uint8Array>;
  request(file: number, op: 'finish'): Promise<Uint8Array>;
  request(file: number, op: 'drop'): Promise<undefined>;
  request(file: number, op: EncoderRequest['op'], group?: SampleGroup): Promise<Uint8Array | undefined> {
    const worker = (this.worker ??= this.start());
    const id = ++this.lastId;
    const message = { id, file, op, ...(group ? { group } : {}) } as EncoderRequest;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      // Held open only while it owes an answer.
      if (this.waiting.size === 1) worker.ref();
      worker.postMessage(message, group ? groupBuffers(group) : []);
    });
  }

  private start(): Worker {
    const worker = startWorker();
    worker.unref();
    worker.on('message', (reply: EncoderReply) => {
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (this.waiting.size === 0) worker.unref();
      if (reply.error !== undefined) waiting?.reject(new Error(`encoding the samples object failed: ${reply.error}`));
      else waiting?.resolve(reply.bytes);
    });
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`the samples encoder thread stopped (exit code ${code})`)));
    return worker;
  }

  /** Every request still unanswered fails; the next one starts a new thread. */
  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
  }
}

// Pure: a bundle that imports this module and never encodes (the settlers) keeps none of it.
export const encoderThread = /* @__PURE__ */ new EncoderThread();
