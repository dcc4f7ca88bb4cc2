/**
 * One part of a file for parallel.ts: parsePart reads a byte range (summaries
 * only) and answers with its runs or the ParseError it met. Started as a worker
 * thread with a PartRequest as workerData, the module posts that answer back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Run } from '../model.ts';
import { fileChunks, isParseError, parseStream } from './index.ts';

export interface PartRequest {
  /** Marks workerData meant for this module (it may be imported inside other workers). */
  benchdropPart: true;
  path: string;
  source: string;
  start: number;
  /** Exclusive. */
  end: number;
  continuation: boolean;
}

export type PartResult = { ok: true; runs: Run[]; lines: number; bytes: number } | { ok: false; parseError?: { line: number; problem: string; expected: string }; message: string };

export async function parsePart(request: PartRequest): Promise<PartResult> {
  const runs: Run[] = [];
  try {
    const result = await parseStream(fileChunks(request.path, request.start, request.end), { source: request.source, keepSamples: false, continuation: request.continuation, onRun: (run) => runs.push(run) });
    return { ok: true, runs, lines: result.lines, bytes: result.bytes };
  } catch (error) {
    if (isParseError(error)) return { ok: false, parseError: { line: error.line, problem: error.problem, expected: error.expected }, message: error.message };
    return { ok: false, message: (error as Error).message };
  }
}

const request = workerData as PartRequest | undefined;
if (parentPort && request?.benchdropPart === true) parentPort.postMessage(await parsePart(request));
