/**
 * A large iostat log parsed on every core: the file is cut at report boundaries
 * (parallel-cuts.ts) into one part per worker thread, each part is parsed for
 * summaries (parse-worker.ts), and the run a cut went through is stitched back
 * together (parallel-stitch.ts). Used by parseFile when only summaries are
 * wanted; results equal a sequential parse but for floating-point rounding in
 * the merged summaries.
 *
 *   parseFileInParallel('big-iostat.log', { workers: 4 })
 *
 * yields ParsedFile { format: 'iostat', runs, lines }, or undefined when the file
 * is not worth it or not possible to cut (small file, one core, gzip, not a text
 * iostat log, no safe cut).
 *
 * The parallel parse never changes the outcome: when a part meets a ParseError,
 * or the parts do not join (the part before a cut must end inside an iostat run,
 * in a report that the header at the cut ends, as its parser says; the part after
 * it must begin with that run, reading its columns and devices as one pass would),
 * the file is parsed again in one piece, and that parse has the last word. A bug
 * met in any part is an InternalParseError, its line counted in the whole file.
 */
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ParsedFile } from '../model.ts';
import { isSource, siblingModule } from '../module-paths.ts';
import { findCuts, type Cuts } from './parallel-cuts.ts';
import { stitch } from './parallel-stitch.ts';
import { parsePart, type PartRequest, type PartResult } from './parse-worker.ts';

export interface ParallelOptions {
  source?: string;
  /** Worker threads to use (default: the machine's parallelism, at most 8). */
  workers?: number;
  /** Files smaller than this are parsed in one piece (default 32 MiB). */
  minBytes?: number;
  /**
   * Parse the parts one after another in this thread: the cutting and stitching alone, without
   * worker threads (tests).
   */
  inThisThread?: boolean;
}

export const PARALLEL_MIN_BYTES = 32 * 1024 * 1024;
const MAX_WORKERS = 8;

/**
 * Parse a file in parallel parts, or return undefined when it is not worth it or
 * not possible (small file, one core, gzip, not a text iostat log, no safe cut).
 */
export async function parseFileInParallel(
  path: string,
  options: ParallelOptions = {},
): Promise<ParsedFile | undefined> {
  const workers = Math.min(options.workers ?? availableParallelism(), MAX_WORKERS);
  const file = await open(path, 'r');
  let cuts: Cuts | undefined;
  let size: number;
  try {
    size = (await file.stat()).size;
    if (workers < 2 || size < (options.minBytes ?? PARALLEL_MIN_BYTES)) return undefined;
    cuts = await findCuts(file, size, workers);
  } finally {
    await file.close();
  }
  if (cuts === undefined) return undefined;
  const source = options.source ?? path;
  const bounds = [0, ...cuts.offsets, size];
  // The first part is parsed right here while workers take the others: one thread fewer to start.
  const parts = await Promise.all(
    bounds.slice(0, -1).map((start, k) => {
      const request: PartRequest = {
        benchdropPart: true,
        path,
        source,
        start,
        end: bounds[k + 1]!,
        continuation: k > 0,
      };
      return k === 0 || options.inThisThread === true ? parsePart(request) : runPart(request);
    }),
  );
  return stitch(source, parts, cuts.anchorColumns);
}

/** The worker's module: the built .js in dist/, or the .ts source started through tsx. */
function workerScript(): { script: string | URL; eval: boolean } {
  const worker = siblingModule(import.meta.url, './parse-worker');
  if (!isSource(import.meta.url)) return { script: worker, eval: false };
  // Running from TypeScript source: the worker registers tsx before loading the parser.
  const here = import.meta.url;
  const tsx =
    import.meta.resolve?.('tsx/esm/api') ??
    pathToFileURL(
      createRequire(here)
        .resolve('tsx/esm/api')
        .replace(/\.cjs$/, '.mjs'),
    ).href;
  const script =
    `import(${JSON.stringify(tsx)}).then((api) => { (api.register ?? api.default.register)(); ` +
    `return import(${JSON.stringify(worker.href)}); })`;
  return { script, eval: true };
}

function runPart(request: PartRequest): Promise<PartResult> {
  const { script, eval: isEval } = workerScript();
  return new Promise((resolve, reject) => {
    const worker = new Worker(script, { eval: isEval, workerData: request });
    worker.once('message', (result: PartResult) => resolve(result));
    worker.once('error', reject);
    const before = `parse worker for bytes ${request.start}-${request.end} exited with code`;
    worker.once('exit', (code) => reject(new Error(`${before} ${code} before answering`)));
  });
}
