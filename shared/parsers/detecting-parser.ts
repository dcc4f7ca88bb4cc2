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
import { createAixParser } from './iostat-aix.ts';
import { createLinuxJsonParser } from './iostat-linux-json.ts';
import { createSolarisCsvParser } from './iostat-solaris-csv.ts';
import { createWideParser } from './iostat-wide.ts';
import type { LineSink } from './lines.ts';
import { isTitle } from './iostat-sessions.ts';
import { nearMiss } from './near-misses.ts';
import { stripEdgeTags, stripPrefix, type BlockPrefix } from './wrappers.ts';
import type { LineParser, OpenReport, ParserOptions } from './types.ts';

const FACTORIES: Record<DetectedFormat, (options: ParserOptions) => LineParser> = {
  diskperf: createDiskperfParser,
  iostat: createIostatParser,
  'iostat-json': createLinuxJsonParser,
  'iostat-aix': createAixParser,
  'iostat-solaris-csv': createSolarisCsvParser,
  'iostat-wide': createWideParser,
};

/** Lines held back before detection gives up, counted in characters too (a few huge lines). */
const DETECT_MAX_CHARS = 4 * 1024 * 1024;

/** Feed lines to format detection first, then to the detected format's parser. */
export class DetectingParser implements LineSink {
  private parser: LineParser | undefined;
  private buffered: { text: string; no: number }[] = [];
  /** Warnings about held lines (a tag taken off), for the parser once there is one. */
  private heldWarnings: { no: number; message: string }[] = [];
  private bufferedChars = 0;
  /** The first line that looked like a table row, while no header has been seen. */
  private firstRow = 0;
  /** The line of an iostat title seen while no format is known: the line after it decides which. */
  private titleAt = 0;
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
    // A title heads both -x tables and comma-separated -xr ones: the next line tells them apart.
    if (format === 'iostat' && this.titleAt === 0 && isTitle(text.trim())) this.titleAt = no;
    else if (format !== undefined) this.start(format, no);
    else if (this.titleAt > 0 && text.trim() !== '') this.start('iostat', no);
    else if (this.buffered.length >= DETECT_MAX_LINES || this.bufferedChars > DETECT_MAX_CHARS) this.noFormat(no);
  }

  opensBlock(line: string, prefix: BlockPrefix, body: string): boolean {
    const format = detectLine(body);
    if (format === undefined) return false;
    // diskperf marks its own banner and header lines with `#`: that prefix is the format, not a wrapper.
    if (format === 'diskperf' && prefix.core.startsWith('#')) return false;
    // A line of another format as it stands (`"disk_device": ...` is JSON, its quote no wrapper).
    const whole = detectLine(line);
    return whole === undefined || whole === format;
  }

  /** A block prefix starts at the next line: the held lines just above it that carry it lose it too. */
  blockStarts(prefix: BlockPrefix): void {
    for (let i = this.buffered.length - 1; i >= 0; i--) {
      const rest = stripPrefix(this.buffered[i]!.text, prefix);
      if (rest === undefined) return;
      // Tags behind the prefix could not come off before it did (a page quoted in a comment).
      this.buffered[i]!.text = stripEdgeTags(rest)?.text ?? rest;
    }
  }

  warn(no: number, message: string): void {
    if (this.parser === undefined) this.heldWarnings.push({ no, message });
    else this.parser.warn?.(no, message);
  }

  end(lastLine: number): void {
    this.at = lastLine;
    if (!this.parser && this.titleAt > 0) this.start('iostat', lastLine);
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
    for (const { no: line, message } of this.heldWarnings) parser.warn?.(line, message);
    this.heldWarnings = [];
    for (const line of this.buffered) {
      this.at = line.no;
      parser.line(line.text, line.no);
    }
    this.at = no;
    this.buffered = [];
  }

  private noFormat(lastLine: number): never {
    const near = nearMiss(this.buffered);
    if (near !== undefined) {
      throw new ParseError({
        source: this.options.source,
        line: near.line,
        problem: `no diskperf, iostat or fio data: the line "${near.excerpt}" looks like ${near.looksLike}`,
        expected: 'a diskperf result table or an iostat report of a layout benchdrop reads',
      });
    }
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
      problem: lastLine === 0 ? 'an empty file' : `no diskperf, iostat or fio data in ${lines}`,
      expected: 'a diskperf result table, an iostat -x report or a fio output',
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
