/**
 * The first parser every line meets: it holds lines back until one reveals the
 * format (detect.ts), then hands them and all that follow to that format's parser.
 *
 *   (prose, blank lines)         <- held
 *   # req_size fwd_wt fwd_rd     <- detected: diskperf; the held lines go first
 *
 * yields nothing itself: the format's parser yields the runs. Input in which no
 * line reveals a format is a ParseError.
 */
import { DETECT_MAX_LINES, detectLine, type DetectedFormat } from './detect.ts';
import { createDiskperfParser } from './diskperf.ts';
import { ParseError } from './errors.ts';
import { createIostatParser } from './iostat.ts';
import { createLinuxJsonParser } from './iostat-linux-json.ts';
import type { LineSink } from './lines.ts';
import type { LineParser, OpenReport, ParserOptions } from './types.ts';

const FACTORIES: Record<DetectedFormat, (options: ParserOptions) => LineParser> = {
  diskperf: createDiskperfParser,
  iostat: createIostatParser,
  'iostat-json': createLinuxJsonParser,
};

/** Lines held back before detection gives up, counted in characters too (a few huge lines). */
const DETECT_MAX_CHARS = 4 * 1024 * 1024;

/** Feed lines to format detection first, then to the detected format's parser. */
export class DetectingParser implements LineSink {
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
    if (format !== undefined) this.start(format, no);
    else if (this.buffered.length >= DETECT_MAX_LINES || this.bufferedChars > DETECT_MAX_CHARS) this.noFormat(no);
  }

  end(lastLine: number): void {
    this.at = lastLine;
    if (!this.parser) this.noFormat(lastLine);
    this.parser!.end(lastLine);
  }

  get openReport(): OpenReport | undefined {
    return this.parser?.openReport?.();
  }

  /** The format is known at line `no`: its parser reads the lines held so far. */
  private start(format: DetectedFormat, no: number): void {
    this.detected = format;
    const parser = FACTORIES[format](this.options);
    this.parser = parser;
    for (const line of this.buffered) {
      this.at = line.no;
      parser.line(line.text, line.no);
    }
    this.at = no;
    this.buffered = [];
  }

  private noFormat(lastLine: number): never {
    if (this.firstRow > 0) {
      throw new ParseError({
        source: this.options.source,
        line: this.firstRow,
        problem: `rows of numbers from line ${this.firstRow} on, but no diskperf or iostat header above them`,
        expected:
          'the header the tool printed above its rows ("# req_size fwd_wt ..." for diskperf, ' +
          'the column names line for iostat): paste the whole output',
      });
    }
    const lines = lastLine === 1 ? 'its only line' : `the first ${lastLine} lines`;
    throw new ParseError({
      source: this.options.source,
      line: 0,
      problem: lastLine === 0 ? 'an empty file' : `no diskperf or iostat data in ${lines}`,
      expected: 'a diskperf result table or an iostat -x report',
    });
  }
}

/** A line of at least three fields, all numbers but perhaps one (a device name): a table row. */
function looksLikeRow(text: string): boolean {
  const tokens = text.trim().split(/\s+/);
  if (tokens.length < 3) return false;
  let words = 0;
  for (const token of tokens) {
    if (!/^[-+]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][-+]?\d+)?%?$/.test(token) && ++words > 1) return false;
  }
  return true;
}
