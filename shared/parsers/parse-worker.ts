/**
 * Worker thread for parallel.ts: parses one byte range of a file (summaries only)
 * and posts its runs back, or the ParseError it met.
 */
import { createReadStream } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { Run } from '../model.ts';
import { isParseError, parseStream, READ_CHUNK_BYTES } from './index.ts';

export interface PartRequest {
  path: string;
  source: string;
  start: number;
  /** Exclusive. */
  end: number;
  continuation: boolean;
}

export type PartResult = { ok: true; runs: Run[]; lines: number; bytes: number } | { ok: false; parseError?: { line: number; problem: string; expected: string }; message: string };

async function parsePart(request: PartRequest): Promise<PartResult> {
  const runs: Run[] = [];
  const stream = createReadStream(request.path, { start: request.start, end: request.end - 1, highWaterMark: READ_CHUNK_BYTES });
  try {
    const result = await parseStream(stream, { source: request.source, keepSamples: false, continuation: request.continuation, onRun: (run) => runs.push(run) });
    return { ok: true, runs, lines: result.lines, bytes: result.bytes };
  } catch (error) {
    if (isParseError(error)) return { ok: false, parseError: { line: error.line, problem: error.problem, expected: error.expected }, message: error.message };
    return { ok: false, message: (error as Error).message };
  } finally {
    stream.destroy();
  }
}

if (parentPort) parentPort.postMessage(await parsePart(workerData as PartRequest));
