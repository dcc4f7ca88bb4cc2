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
import { StringDecoder } from 'node:string_decoder';
import type { Format, ParsedFile, Run } from '../model.ts';
import type { DetectedFormat } from './detect.ts';
import { DetectingParser } from './detecting-parser.ts';
import { InternalParseError, isParseError, ParseError } from './errors.ts';
import { inputBytes, type ByteSource } from './input.ts';
import { LineSplitter } from './lines.ts';
import { parseFioChunks, showsFio } from './fio.ts';
import { FioRunBuilder } from './fio-run.ts';
import { DETECT_MAX_LINES, detectLine } from './detect.ts';
import type { OpenReport, ParserOptions } from './types.ts';

export interface StreamOptions extends Partial<Omit<ParserOptions, 'source'>> {
  source: string;
  /** Refuse input (after decompression) larger than this many bytes. */
  maxBytes?: number;
}

export interface StreamResult {
  format: Format;
  dialect: DetectedFormat | 'fio';
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

/**
 * Bytes read at most before the format is told (fio's own line rules differ from the logs',
 * fio.ts): reading stops at the first line that shows a format, mostly in the first chunk.
 */
const SNIFF_BYTES = 256 * 1024;

/** Parse a stream of bytes (or strings); runs are delivered through options.onRun. */
export async function parseStream(input: ByteSource, options: StreamOptions): Promise<StreamResult> {
  const { source } = options;
  const parserOptions: ParserOptions = { source, keepSamples: options.keepSamples ?? true, onRun: () => {} };
  if (options.continuation) parserOptions.continuation = true;
  let runs = 0;
  markedCallbacks(options, parserOptions, () => runs++);
  const counter = { bytes: 0 };
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const bytes = inputBytes(input, source, maxBytes, counter);
  const head = await readAhead(bytes, SNIFF_BYTES);
  if (head.fio) {
    const fio = await parseFio(head.chunks(), parserOptions);
    return { format: 'fio', dialect: 'fio', lines: fio.lines, runs, bytes: counter.bytes };
  }
  const parser = new DetectingParser(parserOptions);
  const splitter = new LineSplitter(source, parser);
  const parsing = <T>(step: () => T): T => {
    try {
      return step();
    } catch (error) {
      throw parsingFailure(error, source, parser.at);
    }
  };
  for await (const chunk of head.chunks()) parsing(() => splitter.push(chunk));
  const lines = parsing(() => splitter.end());
  parsing(() => parser.end(lines));
  const dialect = parser.detected!;
  const format = dialect === 'diskperf' ? 'diskperf' : 'iostat';
  const result: StreamResult = { format, dialect, lines, runs, bytes: counter.bytes };
  const openReport = parser.openReport;
  if (openReport !== undefined) result.openReport = openReport;
  return result;
}

/**
 * The first chunks of a stream, up to the first whole line that shows a format (or `size`
 * bytes, or the end), whether that format is fio's, and the whole stream again from its
 * start. The chunks kept are copies: a source may reuse its buffer for the next chunk.
 */
async function readAhead(
  bytes: AsyncGenerator<Buffer>,
  size: number,
): Promise<{ fio: boolean; chunks: () => AsyncGenerator<Buffer> }> {
  const first: Buffer[] = [];
  const sniffer = new FormatSniffer();
  let length = 0;
  let done = false;
  while (sniffer.fio === undefined && length < size) {
    const next = await bytes.next();
    if (next.done === true) {
      done = true;
      break;
    }
    first.push(Buffer.from(next.value));
    length += next.value.length;
    sniffer.push(next.value);
  }
  const fio = sniffer.end();
  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      yield* first;
      if (!done) yield* bytes;
    } finally {
      // A parse that stops among the first chunks closes the input too (a file gives its descriptor back).
      await bytes.return(undefined);
    }
  }
  return { fio, chunks };
}

/**
 * Whether the first line that shows a format shows fio's, told line by line as bytes come:
 * each line looked at once (a source of one-byte chunks costs no more than one of 256 KiB).
 */
export class FormatSniffer {
  /** undefined while no whole line has shown a format. */
  fio: boolean | undefined;
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  /** Lines looked at so far. */
  lines = 0;

  push(chunk: Buffer): void {
    if (this.fio !== undefined) return;
    const text = this.decoder.write(chunk);
    // No line ends in it: the line goes on (split only where there is something to split).
    if (!/[\r\n]/.test(text) && !this.pending.endsWith('\r')) {
      this.pending += text;
      return;
    }
    let all = this.pending + text;
    // A CR at the end may be the first half of a CRLF: it waits for the next chunk.
    const cr = all.endsWith('\r');
    if (cr) all = all.slice(0, -1);
    const parts = all.split(/\r\n|\n|\r/);
    this.pending = parts.pop()! + (cr ? '\r' : '');
    for (const line of parts) if (this.look(line)) return;
  }

  /** The answer at the end of what was read: the last, unfinished line looked at too. */
  end(): boolean {
    if (this.fio === undefined) this.look((this.pending + this.decoder.end()).replace(/\r$/, ''));
    return this.fio ?? false;
  }

  private look(line: string): boolean {
    if (++this.lines > DETECT_MAX_LINES) this.fio = false;
    else if (showsFio(line)) this.fio = true;
    else if (detectLine(line) !== undefined) this.fio = false;
    return this.fio !== undefined;
  }
}

/** fio's output when a line shows one of its styles before any line shows another format. */
export function isFioOutput(head: string): boolean {
  const sniffer = new FormatSniffer();
  sniffer.push(Buffer.from(head, 'utf8'));
  return sniffer.end();
}

/** A fio output: its runs through onRun, built a job at a time (FioRunBuilder). */
async function parseFio(chunks: AsyncIterable<Buffer>, options: ParserOptions): Promise<{ lines: number }> {
  const builder = new FioRunBuilder();
  let at = 0;
  try {
    const parsed = await parseFioChunks(fromInput(chunks), {
      source: options.source,
      onJob: (job) => {
        at = job.line;
        builder.add(job);
      },
    });
    at = parsed.lines;
    const runs = builder.runs(parsed, parsed.lines);
    if (runs.length === 0) throw nothingMeasured(builder, options.source);
    for (const run of runs) options.onRun(run);
    return parsed;
  } catch (error) {
    if (error instanceof FromInput) throw error.error;
    throw parsingFailure(error, options.source, at);
  }
}

function nothingMeasured(builder: FioRunBuilder, source: string): ParseError {
  const why = builder.first.map(
    (j) => `job "${j.name}" ${j.error !== 0 ? `failed with error ${j.error}` : 'did no I/O'}`,
  );
  return new ParseError({
    source,
    line: builder.first[0]?.line ?? 0,
    problem: `no job of this fio output measured anything (${why.join('; ')})`,
    expected: 'a fio output with at least one job that ran without an error and did I/O',
  });
}

/** An error of reading the input, marked on its way out through the parser: it passes as it is. */
class FromInput {
  constructor(readonly error: unknown) {}
}

async function* fromInput(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  try {
    yield* chunks;
  } catch (error) {
    throw new FromInput(error);
  }
}

/** Parse text already in memory (tests, small pastes). */
export async function parseText(text: string, source = 'input'): Promise<ParsedFile> {
  const runs: Run[] = [];
  const result = await parseStream([Buffer.from(text, 'utf8')], { source, onRun: (run) => runs.push(run) });
  return { source, format: result.format, runs, lines: result.lines };
}
