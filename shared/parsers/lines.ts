/**
 * Bytes in, lines out, one at a time: the only place that sees raw input. It picks
 * the encoding from a byte-order mark (UTF-8 by default, UTF-16 with a BOM),
 * splits on LF, CRLF or a lone CR, refuses binary content and absurdly long lines
 * with a ParseError, and strips what pasting adds (`> ` quoting, non-breaking
 * spaces). Memory is one chunk plus one partial line.
 *
 * UTF-8 input is split as bytes and each line is offered to the sink's `bytes`
 * fast path first (the iostat parser reads data rows straight from the buffer);
 * lines it declines are decoded, cleaned and handed to `text`.
 */
import { StringDecoder } from 'node:string_decoder';
import { ParseError } from './errors.ts';

/** A log line longer than this is not a log line (a 20 MB single line, a binary blob). */
export const MAX_LINE_LENGTH = 64 * 1024;

export interface LineSink {
  /** Fast path for a UTF-8 line, bytes [start, end) of buf; true if it was consumed. */
  bytes?(buf: Buffer, start: number, end: number, lineNo: number): boolean;
  /** A decoded, cleaned line. */
  text(text: string, lineNo: number): void;
}

const LF = 10;
const CR = 13;
const EMPTY = Buffer.alloc(0);

type Decoder = { write(bytes: Buffer): string; end(): string };

export class LineSplitter {
  private started = false;
  /** Bytes held until there are enough to see a byte-order mark. */
  private head: Buffer = EMPTY;
  /** Set for UTF-16 input, which is decoded to text before splitting. */
  private decoder: Decoder | undefined;
  private carry: Buffer = EMPTY;
  private textCarry = '';
  private lineNo = 0;
  private pendingCR = false;

  constructor(
    private readonly source: string,
    private readonly sink: LineSink,
  ) {}

  /** Lines handed out so far. */
  get lines(): number {
    return this.lineNo;
  }

  push(chunk: Buffer | string): void {
    if (typeof chunk === 'string') chunk = Buffer.from(chunk, 'utf8');
    if (!this.started) {
      // A BOM is up to 3 bytes, and a stream may deliver fewer in its first chunks.
      this.head = this.head.length > 0 ? Buffer.concat([this.head, chunk]) : chunk;
      if (this.head.length < 3) return;
      this.started = true;
      chunk = this.start(this.head);
      this.head = EMPTY;
    }
    if (this.decoder) this.consumeText(this.decoder.write(chunk));
    else this.consumeBytes(chunk);
  }

  /** Flush the last line; returns the number of lines. */
  end(): number {
    if (!this.started && this.head.length > 0) {
      this.started = true;
      const rest = this.start(this.head);
      this.head = EMPTY;
      this.push(rest);
    }
    if (this.decoder) {
      this.consumeText(this.decoder.end());
      if (this.textCarry.length > 0) this.emitText(this.textCarry);
      this.textCarry = '';
    } else if (this.carry.length > 0) {
      this.emitBytesSplittingCR(this.carry, 0, this.carry.length);
      this.carry = EMPTY;
    }
    return this.lineNo;
  }

  /** Look at the byte-order mark; returns the chunk without it. */
  private start(first: Buffer): Buffer {
    if (first.length >= 2 && first[0] === 0xff && first[1] === 0xfe) {
      this.decoder = new StringDecoder('utf16le');
      return first.subarray(2);
    }
    if (first.length >= 2 && first[0] === 0xfe && first[1] === 0xff) {
      // Node has no UTF-16BE decoder of its own; TextDecoder streams it.
      const td = new TextDecoder('utf-16be');
      this.decoder = { write: (b) => td.decode(b, { stream: true }), end: () => td.decode() };
      return first.subarray(2);
    }
    if (first.length >= 3 && first[0] === 0xef && first[1] === 0xbb && first[2] === 0xbf) return first.subarray(3);
    return first;
  }

  private consumeBytes(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const nul = chunk.indexOf(0);
    if (nul !== -1) this.binary(chunk, nul);
    let body = chunk;
    if (this.pendingCR) {
      // A CR ended the previous chunk: a LF right after it belongs to the same line end.
      this.pendingCR = false;
      if (chunk[0] === LF) body = chunk.subarray(1);
    }
    if (this.carry.length > 0) {
      // Finish the line the previous chunk ended in without copying the whole chunk.
      const lf = body.indexOf(LF);
      if (lf === -1) {
        this.consumeLines(Buffer.concat([this.carry, body]));
        return;
      }
      const first = Buffer.concat([this.carry, body.subarray(0, lf + 1)]);
      this.carry = EMPTY;
      this.consumeLines(first);
      body = body.subarray(lf + 1);
    }
    this.consumeLines(body);
  }

  private consumeLines(data: Buffer): void {
    this.carry = EMPTY;
    const n = data.length;
    let from = 0;
    // Most logs have no lone CR: look for one once per chunk, not once per line.
    const hasCR = data.indexOf(CR) !== -1;
    while (from < n) {
      const lf = data.indexOf(LF, from);
      if (lf === -1) break;
      let end = lf;
      if (end > from && data[end - 1] === CR) end--;
      if (hasCR) this.emitBytesSplittingCR(data, from, end);
      else this.emitBytes(data, from, end);
      from = lf + 1;
    }
    if (from >= n) return;
    let rest = data.subarray(from);
    if (hasCR) {
      // Old Mac files end lines with a lone CR.
      const cr = rest.lastIndexOf(CR);
      if (cr !== -1) {
        this.emitBytesSplittingCR(rest, 0, cr);
        rest = rest.subarray(cr + 1);
        if (rest.length === 0) this.pendingCR = true;
      }
    }
    if (rest.length > MAX_LINE_LENGTH) this.tooLong();
    // Copy: the chunk may belong to a pooled buffer that the reader reuses.
    this.carry = Buffer.from(rest);
  }

  private emitBytesSplittingCR(data: Buffer, start: number, end: number): void {
    let cr = data.indexOf(CR, start);
    while (cr !== -1 && cr < end) {
      this.emitBytes(data, start, cr);
      start = cr + 1;
      cr = data.indexOf(CR, start);
    }
    this.emitBytes(data, start, end);
  }

  private emitBytes(data: Buffer, start: number, end: number): void {
    const lineNo = ++this.lineNo;
    if (end - start > MAX_LINE_LENGTH) this.tooLong(lineNo);
    if (this.sink.bytes?.(data, start, end, lineNo)) return;
    this.sink.text(cleanLine(data.toString('utf8', start, end)), lineNo);
  }

  private consumeText(text: string): void {
    if (text.length === 0) return;
    const nul = text.indexOf('\0');
    if (nul !== -1) {
      const before = Buffer.from(text.slice(0, nul), 'utf8');
      this.binary(before, before.length);
    }
    const data = this.textCarry + text;
    this.textCarry = '';
    let from = 0;
    for (let lf = data.indexOf('\n'); lf !== -1; lf = data.indexOf('\n', from)) {
      for (const part of data.slice(from, lf).replace(/\r$/, '').split('\r')) this.emitText(part);
      from = lf + 1;
    }
    const rest = data.slice(from);
    if (rest.length > MAX_LINE_LENGTH) this.tooLong();
    this.textCarry = rest;
  }

  private emitText(raw: string): void {
    const lineNo = ++this.lineNo;
    if (raw.length > MAX_LINE_LENGTH) this.tooLong(lineNo);
    this.sink.text(cleanLine(raw), lineNo);
  }

  private binary(bytes: Buffer, nulAt: number): never {
    // Count the line ends before the NUL: LF, CRLF and lone CR alike.
    let line = this.lineNo + 1;
    for (let i = 0; i < nulAt; i++) {
      if (bytes[i] === LF) line++;
      else if (bytes[i] === CR && bytes[i + 1] !== LF) line++;
    }
    throw new ParseError({ source: this.source, line, problem: 'binary content (a NUL byte)', expected: 'a text log (plain or gzip-compressed)' });
  }

  /** The line at `line` (by default the one still being read) is too long. */
  private tooLong(line = this.lineNo + 1): never {
    throw new ParseError({
      source: this.source,
      line,
      problem: `a line longer than ${MAX_LINE_LENGTH / 1024} KiB`,
      expected: 'a text log with ordinary lines',
    });
  }
}

const QUOTE = /^[ \t]*(?:>[ \t]?)+/;

/** Remove e-mail/forum quoting (`> `, `>> `) and non-breaking spaces. */
export function cleanLine(raw: string): string {
  let line = raw;
  let i = 0;
  let c = line.charCodeAt(0);
  while (c === 32 || c === 9) c = line.charCodeAt(++i);
  if (c === 62) line = line.replace(QUOTE, '');
  if (line.indexOf('\u00a0') !== -1) line = line.replace(/\u00a0/g, ' ');
  return line;
}
