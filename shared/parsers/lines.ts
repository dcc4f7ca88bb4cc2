/**
 * Bytes in, clean lines out, one at a time: the only place that sees raw input.
 * It picks the text encoding from a byte-order mark (UTF-8 by default, UTF-16 with
 * a BOM), splits on LF, CRLF or a lone CR, refuses binary content and absurdly long
 * lines with a ParseError, and strips what pasting adds (`> ` e-mail quoting,
 * non-breaking spaces). Memory is one chunk plus one partial line.
 */
import { isAscii } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import { ParseError } from './errors.ts';

/** A log line longer than this is not a log line (a 20 MB single line, a binary blob). */
export const MAX_LINE_LENGTH = 64 * 1024;

export type LineHandler = (text: string, lineNo: number) => void;

type Decoder = { write(bytes: Buffer): string; end(): string };

export class LineSplitter {
  private decoder: Decoder | undefined;
  private asciiCompatible = true;
  private carry = '';
  private lineNo = 0;
  private pendingCR = false;

  constructor(
    private readonly source: string,
    private readonly onLine: LineHandler,
  ) {}

  /** Lines handed out so far. */
  get lines(): number {
    return this.lineNo;
  }

  push(chunk: Buffer | string): void {
    let text: string;
    if (typeof chunk === 'string') {
      text = chunk;
    } else {
      if (this.decoder === undefined) chunk = this.pickDecoder(chunk);
      // Pure ASCII decodes the same in every ASCII-compatible encoding, and latin1 is the
      // fastest decoder; a chunk that starts inside a multi-byte character is never ASCII.
      text = this.asciiCompatible && isAscii(chunk) ? chunk.toString('latin1') : this.decoder!.write(chunk);
    }
    this.consume(text);
  }

  /** Flush the last line; returns the number of lines. */
  end(): number {
    if (this.decoder) this.consume(this.decoder.end());
    if (this.carry.length > 0) this.emit(this.carry);
    this.carry = '';
    return this.lineNo;
  }

  private pickDecoder(first: Buffer): Buffer {
    if (first.length >= 2 && first[0] === 0xff && first[1] === 0xfe) {
      this.decoder = new StringDecoder('utf16le');
      this.asciiCompatible = false;
      return first.subarray(2);
    }
    if (first.length >= 2 && first[0] === 0xfe && first[1] === 0xff) {
      // Node has no UTF-16BE decoder of its own; TextDecoder streams it.
      const td = new TextDecoder('utf-16be');
      this.decoder = { write: (b) => td.decode(b, { stream: true }), end: () => td.decode() };
      this.asciiCompatible = false;
      return first.subarray(2);
    }
    this.decoder = new StringDecoder('utf8');
    if (first.length >= 3 && first[0] === 0xef && first[1] === 0xbb && first[2] === 0xbf) return first.subarray(3);
    return first;
  }

  private consume(text: string): void {
    if (text.length === 0) return;
    const nul = text.indexOf('\0');
    if (nul !== -1) {
      const line = this.lineNo + 1 + countNewlines(text, nul);
      throw new ParseError({
        source: this.source,
        line,
        problem: 'binary content (a NUL byte)',
        expected: 'a text log (plain or gzip-compressed)',
      });
    }
    let start = 0;
    if (this.pendingCR) {
      // A CR ended the previous chunk: a LF right after it belongs to the same line end.
      this.pendingCR = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    const data = this.carry.length > 0 ? this.carry + text.slice(start) : start > 0 ? text.slice(start) : text;
    this.carry = '';
    let from = 0;
    const n = data.length;
    // Most logs have no lone CR: look for one once per chunk, not once per line.
    const hasCR = data.indexOf('\r') !== -1;
    while (from < n) {
      const lf = data.indexOf('\n', from);
      if (lf === -1) break;
      let end = lf;
      if (end > from && data.charCodeAt(end - 1) === 13) end--;
      if (hasCR) this.emitWithCR(data.slice(from, end));
      else this.emit(data.slice(from, end));
      from = lf + 1;
    }
    if (from < n) {
      let rest = data.slice(from);
      // Old Mac files end lines with a lone CR: split those here too.
      const cr = rest.lastIndexOf('\r');
      if (cr !== -1) {
        this.emitWithCR(rest.slice(0, cr));
        rest = rest.slice(cr + 1);
        if (rest.length === 0) this.pendingCR = true;
      }
      if (rest.length > MAX_LINE_LENGTH) this.tooLong();
      this.carry = rest;
    }
  }

  private emitWithCR(line: string): void {
    if (line.indexOf('\r') === -1) this.emit(line);
    else for (const part of line.split('\r')) this.emit(part);
  }

  private emit(raw: string): void {
    this.lineNo++;
    if (raw.length > MAX_LINE_LENGTH) this.tooLong();
    this.onLine(cleanLine(raw), this.lineNo);
  }

  private tooLong(): never {
    throw new ParseError({
      source: this.source,
      line: this.lineNo + 1,
      problem: `a line longer than ${MAX_LINE_LENGTH / 1024} KiB`,
      expected: 'a text log with ordinary lines',
    });
  }
}

function countNewlines(text: string, before: number): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < before; i = text.indexOf('\n', i + 1)) count++;
  return count;
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
