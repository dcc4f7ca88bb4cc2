/**
 * Parse any supported log from a stream, a file or a string. Bytes flow through
 * gunzip (when the input is gzip), the line splitter, format detection and the
 * format's parser; runs come out one by one through onRun, so a caller that only
 * wants summaries (keepSamples: false) parses any size in flat memory.
 *
 * Parsing ends in a result, a ParseError (the input is wrong), or an
 * InternalParseError (a bug: anything else thrown while parsing, with the line
 * and the original error as its cause). Errors of reading the input pass as they
 * are, and so do the caller's own errors thrown from onRun or onIostatSample,
 * unless they are JavaScript's own bug types (TypeError, RangeError, ...).
 */
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { Format, ParsedFile, Run } from '../model.ts';
import { DETECT_MAX_LINES, detectLine, type DetectedFormat } from './detect.ts';
import { createDiskperfParser } from './diskperf.ts';
import { InternalParseError, isParseError, ParseError } from './errors.ts';
import { createIostatParser } from './iostat.ts';
import { createLinuxJsonParser } from './iostat-linux-json.ts';
import { LineSplitter, type LineSink } from './lines.ts';
import { parseFileInParallel, type ParallelOptions } from './parallel.ts';
import type { LineParser, OpenReport, ParserOptions } from './types.ts';

export { InternalParseError, isInternalParseError, ParseError, isParseError, SUPPORTED_FORMATS } from './errors.ts';
export type { ParserOptions } from './types.ts';

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
  /** The iostat report the input stopped in, when more of its table would have continued the run (types.ts OpenReport). */
  openReport?: OpenReport;
}

const FACTORIES: Record<DetectedFormat, (options: ParserOptions) => LineParser> = {
  diskperf: createDiskperfParser,
  iostat: createIostatParser,
  'iostat-json': createLinuxJsonParser,
};

/** Feed lines to format detection first, then to the detected format's parser. */
class DetectingParser implements LineSink {
  private parser: LineParser | undefined;
  private buffered: { text: string; no: number }[] = [];
  private bufferedChars = 0;
  /** The first line that looked like a table row, while no header has been seen. */
  private firstRow = 0;
  detected: DetectedFormat | undefined;
  /** The line being parsed (the last one at the end): where an internal error happened. */
  at = 0;

  constructor(private readonly options: ParserOptions) {}

  bytes(buf: Buffer, start: number, end: number, no: number): boolean {
    this.at = no;
    return this.parser?.lineBytes?.(buf, start, end, no) ?? false;
  }

  text(text: string, no: number): void {
    this.at = no;
    if (this.parser) {
      this.parser.line(text, no);
      return;
    }
    this.buffered.push({ text, no });
    this.bufferedChars += text.length;
    if (this.firstRow === 0 && looksLikeRow(text)) this.firstRow = no;
    const format = detectLine(text);
    if (format !== undefined) {
      this.detected = format;
      this.parser = FACTORIES[format](this.options);
      for (const line of this.buffered) {
        this.at = line.no;
        this.parser.line(line.text, line.no);
      }
      this.at = no;
      this.buffered = [];
    } else if (this.buffered.length >= DETECT_MAX_LINES || this.bufferedChars > 4 * 1024 * 1024) {
      this.noFormat(no);
    }
  }

  end(lastLine: number): void {
    this.at = lastLine;
    if (!this.parser) this.noFormat(lastLine);
    this.parser!.end(lastLine);
  }

  get openReport(): OpenReport | undefined {
    return this.parser?.openReport?.();
  }

  private noFormat(lastLine: number): never {
    if (this.firstRow > 0) {
      throw new ParseError({
        source: this.options.source,
        line: this.firstRow,
        problem: `rows of numbers from line ${this.firstRow} on, but no diskperf or iostat header above them`,
        expected: 'the header the tool printed above its rows ("# req_size fwd_wt ..." for diskperf, the column names line for iostat): paste the whole output',
      });
    }
    throw new ParseError({
      source: this.options.source,
      line: 0,
      problem: lastLine === 0 ? 'an empty file' : `no diskperf or iostat data in ${lastLine === 1 ? 'its only line' : `the first ${lastLine} lines`}`,
      expected: 'a diskperf result table or an iostat -x report',
    });
  }
}

/** A line of at least three fields, all numbers but perhaps one (a device name): a table row. */
function looksLikeRow(text: string): boolean {
  const tokens = text.trim().split(/\s+/);
  if (tokens.length < 3) return false;
  let words = 0;
  for (const token of tokens) if (!/^[-+]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][-+]?\d+)?%?$/.test(token) && ++words > 1) return false;
  return true;
}

/** 256 KiB reads: large enough that reading overlaps parsing, small enough to stay in cache (measured fastest of 64 KiB-1 MiB). */
export const READ_CHUNK_BYTES = 256 * 1024;

/**
 * Chunks of input. A source may reuse a chunk's memory once the next chunk is
 * asked for (fileChunks does): what the parser keeps longer, it copies.
 */
type ByteSource = AsyncIterable<Buffer | string> | Iterable<Buffer | string>;

/**
 * Bytes [start, end) of a file, read in READ_CHUNK_BYTES into two buffers that
 * take turns: the next read runs while the caller parses the chunk it has. A
 * read stream allocates a fresh buffer per read instead: for a 200 MB log those
 * allocations (page faults, garbage collection of external memory) took several
 * times as long as the reading (~400 ms against ~100 ms here). A chunk is
 * valid until the next one is asked for.
 */
export async function* fileChunks(path: string, start = 0, end = Number.POSITIVE_INFINITY): AsyncGenerator<Buffer> {
  const file = await open(path, 'r');
  const buffers = [Buffer.allocUnsafeSlow(READ_CHUNK_BYTES), Buffer.allocUnsafeSlow(READ_CHUNK_BYTES)] as const;
  const readInto = (buffer: Buffer, position: number) => {
    const reading = file.read(buffer, 0, Math.min(buffer.length, end - position), position);
    // Handled when awaited; until then a failed read must not count as an unhandled rejection.
    reading.catch(() => undefined);
    return reading;
  };
  let position = start;
  let next = position < end ? readInto(buffers[0], position) : undefined;
  try {
    for (let turn = 0; next !== undefined; turn ^= 1) {
      const { bytesRead } = await next;
      next = undefined;
      if (bytesRead === 0) return;
      position += bytesRead;
      // The next read goes to the other buffer, so it starts only once this one's length is known.
      if (position < end) next = readInto(buffers[turn ^ 1], position);
      yield buffers[turn].subarray(0, bytesRead);
    }
  } finally {
    // A read still running when the caller stops finishes before the file closes.
    await next?.catch(() => undefined);
    await file.close();
  }
}

function asBuffer(chunk: Buffer | string): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
}

/**
 * The bytes of the input, gunzipped when they start with the gzip magic, refused
 * past maxBytes (counted after decompression, so a gzip bomb stops at the limit).
 * However the consumer stops (end, ParseError, any error), the input is closed:
 * a file stream gives its descriptor back.
 */
async function* bytesOf(input: ByteSource, source: string, maxBytes: number, counter: { bytes: number }): AsyncGenerator<Buffer> {
  const iterator: AsyncIterator<Buffer | string> | Iterator<Buffer | string> =
    Symbol.asyncIterator in input ? input[Symbol.asyncIterator]() : input[Symbol.iterator]();
  let gzip = false;
  // An error of the input itself (a download that broke off) is not damage to the gzip data.
  let sourceError: { error: unknown } | undefined;
  try {
    // The gzip magic is 2 bytes, and a stream may deliver fewer in its first chunks.
    const head: Buffer[] = [];
    let headLength = 0;
    let done = false;
    while (headLength < 2) {
      const next = await iterator.next();
      if (next.done) {
        done = true;
        break;
      }
      const chunk = asBuffer(next.value);
      // Read on, the source may reuse this chunk's memory: keep a copy.
      head.push(headLength + chunk.length < 2 ? Buffer.from(chunk) : chunk);
      headLength += chunk.length;
    }
    const first = Buffer.concat(head);
    gzip = first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b;
    const raw = (async function* () {
      yield first;
      if (done) return;
      for (;;) {
        let next: IteratorResult<Buffer | string>;
        try {
          next = await iterator.next();
        } catch (error) {
          sourceError = { error };
          throw error;
        }
        if (next.done) return;
        const chunk = asBuffer(next.value);
        // gunzip takes chunks ahead of decompressing them: a copy, as the source may reuse the memory.
        yield gzip ? Buffer.from(chunk) : chunk;
      }
    })();
    let chunks: AsyncIterable<Buffer> = raw;
    let gunzip: ReturnType<typeof createGunzip> | undefined;
    let feeding: Promise<void> | undefined;
    if (gzip) {
      gunzip = createGunzip();
      // Errors of the feed surface through the gunzip stream being read below.
      feeding = pipeline(Readable.from(raw), gunzip).catch(() => undefined);
      chunks = gunzip;
    }
    try {
      for await (const chunk of chunks) {
        counter.bytes += chunk.length;
        if (counter.bytes > maxBytes) {
          throw new ParseError({ source, line: 0, problem: `more than ${maxBytes} bytes${gzip ? ' after decompression' : ''}`, expected: `a log of at most ${maxBytes} bytes` });
        }
        yield chunk;
      }
    } finally {
      gunzip?.destroy();
      await feeding;
    }
  } catch (error) {
    if (error instanceof ParseError) throw error;
    if (sourceError !== undefined) throw sourceError.error;
    if (!gzip) throw error;
    throw new ParseError({ source, line: 0, problem: `a damaged gzip file (${(error as Error).message})`, expected: 'a complete gzip file' });
  } finally {
    await iterator.return?.();
  }
}

/** An error a caller's callback threw, marked on its way out through the parser. */
class FromCallback {
  constructor(readonly error: unknown) {}
}

/** JavaScript's own error types: a callback that throws one has a bug, not a message for its caller. */
const BUG_TYPES: readonly ErrorConstructor[] = [TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError];

function isBug(error: unknown): boolean {
  if (!(error instanceof Error)) return true;
  const prototype = Object.getPrototypeOf(error) as unknown;
  return BUG_TYPES.some((type) => type.prototype === prototype);
}

/** What leaves parseStream for an error thrown while parsing at `line`. */
function parsingFailure(error: unknown, source: string, line: number): unknown {
  if (error instanceof FromCallback) return isBug(error.error) ? new InternalParseError({ source, line, cause: error.error }) : error.error;
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
  const onSample = options.onIostatSample;
  if (onSample === undefined) return;
  parserOptions.onIostatSample = (runIndex, device, sample) => {
    try {
      onSample(runIndex, device, sample);
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
  for await (const chunk of bytesOf(input, source, options.maxBytes ?? Number.POSITIVE_INFINITY, counter)) parsing(() => splitter.push(chunk));
  const lines = parsing(() => splitter.end());
  parsing(() => parser.end(lines));
  const dialect = parser.detected!;
  const result: StreamResult = { format: dialect === 'diskperf' ? 'diskperf' : 'iostat', dialect, lines, runs, bytes: counter.bytes };
  const openReport = parser.openReport;
  if (openReport !== undefined) result.openReport = openReport;
  return result;
}

export interface FileOptions extends Partial<StreamOptions> {
  /** Summaries-only parses of large iostat logs use every core; `false` keeps one thread. */
  parallel?: ParallelOptions | false;
}

/** Parse a whole file into memory (samples kept unless keepSamples is false). */
export async function parseFile(path: string, options: FileOptions = {}): Promise<ParsedFile> {
  const summariesOnly = options.keepSamples === false && options.onIostatSample === undefined && options.onRun === undefined;
  if (summariesOnly && options.parallel !== false && options.maxBytes === undefined) {
    const parsed = await parseFileInParallel(path, { ...options.parallel, source: options.source ?? path });
    if (parsed) return parsed;
  }
  const runs: Run[] = [];
  const result = await parseStream(fileChunks(path), { ...options, source: options.source ?? path, onRun: (run) => runs.push(run) });
  return { source: options.source ?? path, format: result.format, runs, lines: result.lines };
}

/** Parse text already in memory (tests, small pastes). */
export async function parseText(text: string, source = 'input'): Promise<ParsedFile> {
  const runs: Run[] = [];
  const result = await parseStream([Buffer.from(text, 'utf8')], { source, onRun: (run) => runs.push(run) });
  return { source, format: result.format, runs, lines: result.lines };
}
