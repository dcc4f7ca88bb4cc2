/**
 * Parse a file on disk: on every core when only summaries are wanted and the
 * file is large (parallel.ts), else in one pass through the driver (driver.ts).
 *
 *   parseFile('iostat.log', { keepSamples: false })
 *
 * yields ParsedFile { source: 'iostat.log', format: 'iostat', runs: [IostatRun, ...], lines }.
 */
import type { ParsedFile, Run } from '../model.ts';
import { parseStream, type StreamOptions } from './driver.ts';
import { fileChunks } from './input.ts';
import { parseFileInParallel, type ParallelOptions } from './parallel.ts';

export interface FileOptions extends Partial<StreamOptions> {
  /** Summaries-only parses of large iostat logs use every core; `false` keeps one thread. */
  parallel?: ParallelOptions | false;
}

/** Parse a whole file into memory (samples kept unless keepSamples is false). */
export async function parseFile(path: string, options: FileOptions = {}): Promise<ParsedFile> {
  const source = options.source ?? path;
  const summariesOnly =
    options.keepSamples === false &&
    options.onIostatSample === undefined &&
    options.onIostatRow === undefined &&
    options.onRun === undefined;
  if (summariesOnly && options.parallel !== false && options.maxBytes === undefined) {
    const parsed = await parseFileInParallel(path, { ...options.parallel, source });
    if (parsed) return parsed;
  }
  const runs: Run[] = [];
  const result = await parseStream(fileChunks(path), { ...options, source, onRun: (run) => runs.push(run) });
  return { source, format: result.format, runs, lines: result.lines };
}
