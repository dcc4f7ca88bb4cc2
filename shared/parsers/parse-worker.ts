/**
 * One part of a file for parallel.ts: parsePart reads a byte range (summaries
 * only) and answers with its runs or how it failed. Started as a worker thread
 * with a PartRequest as workerData, the module posts that answer back.
 *
 *   { benchdropPart: true, path: 'big.log', source: 'big.log', start: 0, end: 52428800, continuation: false }
 *
 * yields { ok: true, runs, lines, bytes, openReport? } or a PartFailure.
 *
 * A failure crosses the thread boundary as plain fields (a structured clone of an
 * Error keeps too little of it): a ParseError's line, problem and expected text;
 * an InternalParseError's line and its cause's name, message and stack; any
 * other error's name, message, stack and code. errorOfPart builds the error again.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Run } from '../model.ts';
import type { OpenReport } from './types.ts';
import { InternalParseError, isInternalParseError, isParseError, ParseError } from './errors.ts';
import { BUG_TYPES, parseStream } from './driver.ts';
import { fileChunks } from './input.ts';

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

/** An error as fields that survive postMessage. */
export interface ErrorFields {
  name: string;
  message: string;
  stack?: string;
  code?: string;
}

export type PartFailure =
  | { ok: false; kind: 'parse'; line: number; problem: string; expected: string }
  | { ok: false; kind: 'internal'; line: number; cause: ErrorFields }
  | { ok: false; kind: 'other'; error: ErrorFields };

export type PartResult = { ok: true; runs: Run[]; lines: number; bytes: number; openReport?: OpenReport } | PartFailure;

export async function parsePart(request: PartRequest): Promise<PartResult> {
  const runs: Run[] = [];
  try {
    const result = await parseStream(fileChunks(request.path, request.start, request.end), {
      source: request.source,
      keepSamples: false,
      continuation: request.continuation,
      onRun: (run) => runs.push(run),
    });
    return {
      ok: true,
      runs,
      lines: result.lines,
      bytes: result.bytes,
      ...(result.openReport !== undefined ? { openReport: result.openReport } : {}),
    };
  } catch (error) {
    return partFailure(error);
  }
}

/** How a part failed, as fields. */
export function partFailure(error: unknown): PartFailure {
  if (isParseError(error))
    return { ok: false, kind: 'parse', line: error.line, problem: error.problem, expected: error.expected };
  if (isInternalParseError(error))
    return { ok: false, kind: 'internal', line: error.line, cause: errorFields(error.cause) };
  return { ok: false, kind: 'other', error: errorFields(error) };
}

function errorFields(error: unknown): ErrorFields {
  if (!(error instanceof Error)) return { name: typeof error, message: String(error) };
  const fields: ErrorFields = { name: error.name, message: error.message };
  if (error.stack !== undefined) fields.stack = error.stack;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') fields.code = code;
  return fields;
}

/** JavaScript's own error types by name: an error keeps its type across the thread boundary. */
const ERROR_TYPES: ReadonlyMap<string, ErrorConstructor> = new Map(BUG_TYPES.map((type) => [type.name, type]));

/** The error again, of its own type where JavaScript has one, with the stack of the thread that threw it. */
function errorFrom(fields: ErrorFields): Error {
  const error = new (ERROR_TYPES.get(fields.name) ?? Error)(fields.message);
  if (error.name !== fields.name) error.name = fields.name;
  if (fields.stack !== undefined) error.stack = fields.stack;
  if (fields.code !== undefined) Object.assign(error, { code: fields.code });
  return error;
}

/**
 * The error a failed part stands for, its line counted in the whole file (the part starts after
 * `lineOffset` lines).
 */
export function errorOfPart(failure: PartFailure, source: string, lineOffset: number): Error {
  const inFile = (line: number) => (line === 0 ? 0 : line + lineOffset);
  switch (failure.kind) {
    case 'parse':
      return new ParseError({
        source,
        line: inFile(failure.line),
        problem: failure.problem,
        expected: failure.expected,
      });
    case 'internal':
      return new InternalParseError({ source, line: inFile(failure.line), cause: errorFrom(failure.cause) });
    case 'other':
      return errorFrom(failure.error);
  }
}

const request = workerData as PartRequest | undefined;
if (parentPort && request?.benchdropPart === true) parentPort.postMessage(await parsePart(request));
