/**
 * Parse any supported log from a stream or a string. Bytes flow through gunzip
 * (when the input is gzip, input.ts), the line splitter (lines.ts), format
 * detection (detecting-parser.ts) and the format's parser; runs come out one by
 * one through onRun, so a caller that only wants summaries (keepSamples: false)
 * parses any size in flat memory.
 *
 *   parseStream(chunks of "extended device statistics\n r/s w/s ... device\n ...", { source, onRun })
 *
 * yields each Run through onRun and resolves to a StreamResult { format, dialect, lines, runs, bytes }.
 *
 * Parsing ends in a result, a ParseError (the input is wrong), or an
 * InternalParseError (a bug: anything else thrown while parsing, with the line
 * and the original error as its cause). Errors of reading the input pass as they
 * are, and so do the caller's own errors thrown from onRun or onIostatSample,
 * unless they are JavaScript's own bug types (TypeError, RangeError, ...).
 */
import type { Format, ParsedFile, Run } from '../model.ts';
import type { DetectedFormat } from './detect.ts';
import { DetectingParser } from './detecting-parser.ts';
import { InternalParseError, isParseError } from './errors.ts';
import { inputBytes, type ByteSource } from './input.ts';
import { LineSplitter } from './lines.ts';
import type { OpenReport, ParserOptions } from './types.ts';

export interface StreamOptions extends Partial<Omit<ParserOptions, 'source'>> {
  source: string;
  /** Refuse input (after decompression) larger than this many bytes. */
  maxBytes?: number;
}

export interface StreamResult {
  format: Format;
  dialect: DetectedFormat;
  lines: number;
  runs: number;
  bytes: number;
  /**
   * The iostat report the input stopped in, when more of its table would have continued the run
   * (types.ts OpenReport).
   */
  openReport?: OpenReport;
}

/** An error a caller's callback threw, marked on its way out through the parser. */
class FromCallback {
  constructor(readonly error: unknown) {}
}

/** JavaScript's own error types: a callback that throws one has a bug, not a message for its caller. */
export const BUG_TYPES: readonly ErrorConstructor[] = [
  TypeError,
  RangeError,
  ReferenceError,
  SyntaxError,
  EvalError,
  URIError,
];

function isBug(error: unknown): boolean {
  if (!(error instanceof Error)) return true;
  const prototype = Object.getPrototypeOf(error) as unknown;
  return BUG_TYPES.some((type) => type.prototype === prototype);
}

/** What leaves parseStream for an error thrown while parsing at `line`. */
function parsingFailure(error: unknown, source: string, line: number): unknown {
  if (error instanceof FromCallback) {
    return isBug(error.error) ? new InternalParseError({ source, line, cause: error.error }) : error.error;
  }
  if (isParseError(error)) return error;
  return new InternalParseError({ source, line, cause: error });
}

/** The caller's callbacks, their errors marked as theirs (see parsingFailure). */
function markedCallbacks(options: StreamOptions, parserOptions: ParserOptions, countRun: () => void): void {
  const onRun = options.onRun;
  parserOptions.onRun = (run) => {
    countRun();
    try {
      onRun?.(run);
    } catch (error) {
      throw new FromCallback(error);
    }
  };
  parserOptions.onIostatSample = marked(options.onIostatSample);
  parserOptions.onIostatRow = marked(options.onIostatRow);
}

/** A sample callback whose errors are marked as the caller's; undefined stays undefined. */
function marked<T>(callback: ((runIndex: number, device: string, sample: T) => void) | undefined) {
  if (callback === undefined) return undefined;
  return (runIndex: number, device: string, sample: T): void => {
    try {
      callback(runIndex, device, sample);
    } catch (error) {
      throw new FromCallback(error);
    }
  };
}

/** Parse a stream of bytes (or strings); runs are delivered through options.onRun. */
export async function parseStream(input: ByteSource, options: StreamOptions): Promise<StreamResult> {
  const { source } = options;
  const parserOptions: ParserOptions = { source, keepSamples: options.keepSamples ?? true, onRun: () => {} };
  if (options.continuation) parserOptions.continuation = true;
  let runs = 0;
  markedCallbacks(options, parserOptions, () => runs++);
  const parser = new DetectingParser(parserOptions);
  const splitter = new LineSplitter(source, parser);
  const parsing = <T>(step: () => T): T => {
    try {
      return step();
    } catch (error) {
      throw parsingFailure(error, source, parser.at);
    }
  };
  const counter = { bytes: 0 };
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  for await (const chunk of inputBytes(input, source, maxBytes, counter)) parsing(() => splitter.push(chunk));
  const lines = parsing(() => splitter.end());
  parsing(() => parser.end(lines));
  const dialect = parser.detected!;
  const format = dialect === 'diskperf' ? 'diskperf' : 'iostat';
  const result: StreamResult = { format, dialect, lines, runs, bytes: counter.bytes };
  const openReport = parser.openReport;
  if (openReport !== undefined) result.openReport = openReport;
  return result;
}

/** Parse text already in memory (tests, small pastes). */
export async function parseText(text: string, source = 'input'): Promise<ParsedFile> {
  const runs: Run[] = [];
  const result = await parseStream([Buffer.from(text, 'utf8')], { source, onRun: (run) => runs.push(run) });
  return { source, format: result.format, runs, lines: result.lines };
}
