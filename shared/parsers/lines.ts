/**
 * Bytes in, lines out, one at a time: the only place that sees raw input. It picks
 * the encoding from a byte-order mark (UTF-8 by default, UTF-16 with a BOM),
 * splits on LF, CRLF or a lone CR, refuses binary content and absurdly long lines
 * with a ParseError, and strips what pasting adds (`> ` quoting, non-breaking
 * spaces). Memory is one chunk plus one partial line. A reader of terminal output
 * can take a lone CR as a redraw instead (LoneCR): the pieces keep their line's number.
 *
 * UTF-8 input is split as bytes and each line is offered to the sink's `bytes`
 * fast path first (the iostat parser reads data rows straight from the buffer);
 * lines it declines are decoded, cleaned and handed to `text`. A line that is not
 * valid UTF-8 is read as Latin-1 (Windows-1252), what older systems wrote.
 * Files that are something else (archives, other compressors, images,
 * executables, UTF-16 without a byte-order mark) are named from their first bytes.
 *
 *   bytes "> r/s w/s device\r\n> 0.0 6028.7 c0t0d0\r\n"
 *
 * yields text('r/s w/s device', 1) and bytes(buf, start, end, 2) (or text('0.0 6028.7 c0t0d0', 2)) to the sink.
 *
 * What else a paste wraps around a log comes off here too, by the rules of wrappers.ts:
 * a prefix every line of a block carries (`\t * `, `# `, `#   "`), found at the first
 * line whose rest the sink knows as a header, and HTML tags at the start or end of a line.
 */
import { isUtf8 } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import { ParseError } from './errors.ts';
import {
  bytesAfterPrefix,
  bytesMayHaveEdgeTag,
  splitPrefix,
  stripEdgeTags,
  stripPrefix,
  type BlockPrefix,
} from './wrappers.ts';

/** A log line longer than this is not a log line (a 20 MB single line, a binary blob). */
export const MAX_LINE_LENGTH = 64 * 1024;

/** Bytes looked at before the first line: enough for a byte-order mark and the magic numbers below. */
const HEAD_BYTES = 8;

const TEXT_LOG = 'a text log (plain or gzip-compressed)';

/** What a file is when it starts with these bytes, and what its owner can do. */
const NOT_A_LOG: {
  magic: readonly number[];
  then?: (next: number | undefined) => boolean;
  problem: string;
  todo: string;
}[] = [
  // The outer gzip layer is gone by now (input.ts): this is a second one.
  { magic: [0x1f, 0x8b], problem: 'a file gzip-compressed twice', todo: 'gunzip it once and upload the result' },
  { magic: [0x50, 0x4b, 0x03, 0x04], problem: 'a zip archive', todo: 'unzip it and upload the log inside' },
  { magic: [0x50, 0x4b, 0x05, 0x06], problem: 'an empty zip archive', todo: 'upload the log itself' },
  {
    magic: [0x42, 0x5a, 0x68],
    then: (b) => b !== undefined && b >= 0x31 && b <= 0x39,
    problem: 'a bzip2-compressed file',
    todo: 'decompress it (bunzip2) and upload it as it is or gzipped',
  },
  {
    magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00],
    problem: 'an xz-compressed file',
    todo: 'decompress it (unxz) and upload it as it is or gzipped',
  },
  {
    magic: [0x28, 0xb5, 0x2f, 0xfd],
    problem: 'a zstd-compressed file',
    todo: 'decompress it (unzstd) and upload it as it is or gzipped',
  },
  {
    magic: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c],
    problem: 'a 7-Zip archive',
    todo: 'extract it and upload the log inside',
  },
  {
    magic: [0x7f, 0x45, 0x4c, 0x46],
    problem: 'binary content (an ELF executable)',
    todo: 'upload the log a program wrote, not the program',
  },
  {
    magic: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    problem: 'binary content (a PNG image)',
    todo: 'upload the log as text, not a picture of it',
  },
  {
    magic: [0xff, 0xd8, 0xff],
    problem: 'binary content (a JPEG image)',
    todo: 'upload the log as text, not a picture of it',
  },
  { magic: [0x25, 0x50, 0x44, 0x46, 0x2d], problem: 'a PDF document', todo: 'upload the log as text' },
];

/**
 * Windows-1252 for bytes 0x80-0x9f, where it differs from ISO-8859-1 (Node's
 * latin1 decoders give C1 controls there); the five bytes it leaves undefined stay as they are.
 */
const WINDOWS_1252_80_9F =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/**
 * Bytes [start, end) of buf as text: UTF-8, or Windows-1252 (Latin-1 and its superset) when they
 * are not valid UTF-8.
 */
export function decodeLine(buf: Buffer, start: number, end: number): string {
  const text = buf.toString('utf8', start, end);
  if (text.indexOf('\ufffd') === -1 || isUtf8(buf.subarray(start, end))) return text;
  return buf
    .toString('latin1', start, end)
    .replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_80_9F[c.charCodeAt(0) - 0x80]!);
}

export interface LineSink {
  /** Fast path for a UTF-8 line, bytes [start, end) of buf; true if it was consumed. */
  bytes?(buf: Buffer, start: number, end: number, lineNo: number): boolean;
  /** A decoded, cleaned line. */
  text(text: string, lineNo: number): void;
  /** Whether `line`, this prefix before `body`, opens a log (a header, a title, a banner) that carries it. */
  opensBlock?(line: string, prefix: BlockPrefix, body: string): boolean;
  /** Every line from here on carries this prefix, until one does not; the lines already handed out may too. */
  blockStarts?(prefix: BlockPrefix): void;
  /** Something was taken off line `lineNo` that its reader should hear of. */
  warn?(lineNo: number, message: string): void;
}

/**
 * What a CR not followed by LF is. `line-end`: the end of a line, as old Mac files write it.
 * `redraw`: a terminal's return to the line's start, what a program redrawing its progress writes
 * (fio's `Jobs: ...\r`): each piece between two CRs goes to the sink alone, all of them under the
 * number of the line they share, so line numbers count LF (and CRLF) only, and the line limit holds
 * for each piece, not for a long run's thousands of redraws together.
 */
export type LoneCR = 'line-end' | 'redraw';

export interface LineSplitterOptions {
  /** `line-end` by default. */
  loneCR?: LoneCR;
  /**
   * Whether HTML tags at a line's start or end come off (`strip`, the default), or are the log's
   * own text (`keep`: fio's `<host> ` before the lines of a `--client` run).
   */
  edgeTags?: 'strip' | 'keep';
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
  /** Whether a lone CR ends a line (else it ends a piece of one: LoneCR `redraw`). */
  private readonly crEndsLine: boolean;
  /** Pieces of line lineNo + 1 went to the sink before a redrawing CR: the line is open. */
  private lineOpen = false;
  private readonly stripsTags: boolean;
  /** The prefix the lines of the current block carry, and its bytes when the fast path can strip it. */
  private prefix: BlockPrefix | undefined;
  private prefixBytes: Buffer | undefined;

  constructor(
    private readonly source: string,
    private readonly sink: LineSink,
    options: LineSplitterOptions = {},
  ) {
    this.crEndsLine = (options.loneCR ?? 'line-end') === 'line-end';
    this.stripsTags = (options.edgeTags ?? 'strip') === 'strip';
  }

  /** Lines handed out so far. */
  get lines(): number {
    return this.lineNo;
  }

  push(chunk: Buffer | string): void {
    if (typeof chunk === 'string') chunk = Buffer.from(chunk, 'utf8');
    if (!this.started) {
      // A stream may deliver fewer than HEAD_BYTES in its first chunks.
      this.head = this.head.length > 0 ? Buffer.concat([this.head, chunk]) : chunk;
      if (this.head.length < HEAD_BYTES) return;
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
      if (this.textCarry.length > 0) this.emitTextSplittingCR(this.textCarry);
      this.textCarry = '';
    } else if (this.carry.length > 0) {
      this.emitBytesSplittingCR(this.carry, 0, this.carry.length);
      this.carry = EMPTY;
    }
    // The input ended in a redrawing CR: its pieces are out, their line still counts.
    if (this.lineOpen) this.endLine();
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
    this.refuseKnownNonText(first);
    return first;
  }

  /** Throw a ParseError naming the file's kind when its first bytes say it is no text log. */
  private refuseKnownNonText(first: Buffer): void {
    for (const known of NOT_A_LOG) {
      if (first.length < known.magic.length || !known.magic.every((byte, i) => first[i] === byte)) continue;
      if (known.then && !known.then(first[known.magic.length])) continue;
      throw new ParseError({
        source: this.source,
        line: 1,
        problem: known.problem,
        expected: `${TEXT_LOG}: ${known.todo}`,
      });
    }
    // ASCII text in UTF-16 has a NUL in every other byte: looked for in the first (up to) four characters.
    const units = Math.min(4, first.length >> 1);
    let le = units >= 2;
    let be = units >= 2;
    for (let i = 0; i < units; i++) {
      const a = first[2 * i]!;
      const b = first[2 * i + 1]!;
      le &&= a !== 0 && b === 0;
      be &&= a === 0 && b !== 0;
    }
    if (le || be) {
      throw new ParseError({
        source: this.source,
        line: 1,
        problem: `UTF-16 text without a byte-order mark (${le ? 'little' : 'big'}-endian)`,
        expected: 'UTF-8 text, or UTF-16 that starts with a byte-order mark: save it as UTF-8',
      });
    }
  }

  private consumeBytes(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const nul = chunk.indexOf(0);
    if (nul !== -1) this.binary(chunk, nul);
    let body = chunk;
    if (this.pendingCR) {
      // A CR ended the previous chunk: a LF right after it belongs to the same line end.
      this.pendingCR = false;
      if (chunk[0] === LF) {
        body = chunk.subarray(1);
        // A redrawing CR only ended a piece: with this LF it was a CRLF, which ends the line.
        if (!this.crEndsLine) this.endLine();
      }
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
        this.emitBytesSplittingCR(rest, 0, cr, this.crEndsLine);
        rest = rest.subarray(cr + 1);
        if (rest.length === 0) this.pendingCR = true;
      }
    }
    if (rest.length > MAX_LINE_LENGTH) this.tooLong();
    // Copy: the chunk may belong to a pooled buffer that the reader reuses.
    this.carry = Buffer.from(rest);
  }

  /** Bytes [start, end) cut at each lone CR; `endsLine`: whether the last piece ends its line. */
  private emitBytesSplittingCR(data: Buffer, start: number, end: number, endsLine = true): void {
    let cr = data.indexOf(CR, start);
    while (cr !== -1 && cr < end) {
      this.emitBytes(data, start, cr, this.crEndsLine);
      start = cr + 1;
      cr = data.indexOf(CR, start);
    }
    this.emitBytes(data, start, end, endsLine);
  }

  /** The number of the line a piece belongs to; `endsLine`: the piece is its line's last. */
  private pieceLine(endsLine: boolean): number {
    if (endsLine) return this.endLine();
    this.lineOpen = true;
    return this.lineNo + 1;
  }

  private endLine(): number {
    this.lineOpen = false;
    return ++this.lineNo;
  }

  private emitBytes(data: Buffer, start: number, end: number, endsLine = true): void {
    const lineNo = this.pieceLine(endsLine);
    if (end - start > MAX_LINE_LENGTH) this.tooLong(lineNo);
    // The hot path stays small: lines of a prefixed block, or with a tag at an end, take their own.
    if (this.prefix !== undefined || (this.stripsTags && bytesMayHaveEdgeTag(data, start, end)))
      this.emitWrapped(data, start, end, lineNo);
    else if (!this.sink.bytes?.(data, start, end, lineNo))
      this.emitCleaned(decodeLine(data, start, end), lineNo, false);
  }

  /** A line that may carry the block's prefix or an HTML tag: only a bare line may take the sink's fast path. */
  private emitWrapped(data: Buffer, start: number, end: number, lineNo: number): void {
    let unprefixed = false;
    if (this.prefixBytes !== undefined) {
      const at = bytesAfterPrefix(data, start, end, this.prefixBytes);
      if (at < 0) this.endBlock();
      else [start, unprefixed] = [at, true];
    }
    const plain = !bytesMayHaveEdgeTag(data, start, end) && this.prefix?.quoted !== true;
    if (plain && this.sink.bytes?.(data, start, end, lineNo)) return;
    this.emitCleaned(decodeLine(data, start, end), lineNo, unprefixed);
  }

  /** A decoded line through the cleaning rules to the sink's text; `unprefixed`: the block's prefix is off already. */
  private emitCleaned(raw: string, lineNo: number, unprefixed: boolean): void {
    let line = cleanLine(raw);
    if (this.prefix !== undefined && !unprefixed) {
      const rest = stripPrefix(line, this.prefix);
      if (rest === undefined) this.endBlock();
      else line = rest;
    }
    if (this.stripsTags && line.indexOf('<') !== -1) {
      const stripped = stripEdgeTags(line);
      if (stripped !== undefined) {
        // Told for rows only (three numbers or more): a page's prose and markup shed their tags silently.
        if ((stripped.text.match(/(?:^|\s)[-+]?\d[\d.,]*(?=\s|$)/g)?.length ?? 0) >= 3)
          this.sink.warn?.(lineNo, `HTML tags taken off the line: ${stripped.tags.slice(0, 60)}`);
        // What the tag hid may be quoted (`<span>> iostat -x`): quoting comes off after it.
        line = cleanLine(stripped.text);
      }
    }
    if (this.prefix === undefined) line = this.startBlockAt(line);
    this.sink.text(line, lineNo);
  }

  /** The line without its prefix when that prefix hides a header: the block it opens carries it on every line. */
  private startBlockAt(line: string): string {
    const sink = this.sink;
    if (sink.opensBlock === undefined) return line;
    const split = splitPrefix(line).find(({ prefix, body }) => sink.opensBlock!(line, prefix, body));
    if (split === undefined) return line;
    this.prefix = split.prefix;
    this.prefixBytes = split.prefix.quoted ? undefined : Buffer.from(split.prefix.core, 'utf8');
    this.sink.blockStarts?.(split.prefix);
    return split.body;
  }

  private endBlock(): void {
    this.prefix = undefined;
    this.prefixBytes = undefined;
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
      this.emitTextSplittingCR(data.slice(from, lf).replace(/\r$/, ''));
      from = lf + 1;
    }
    const rest = data.slice(from);
    if (rest.length > MAX_LINE_LENGTH) this.tooLong();
    this.textCarry = rest;
  }

  /** A whole line of decoded text cut at each lone CR, as emitBytesSplittingCR cuts bytes. */
  private emitTextSplittingCR(line: string): void {
    const parts = line.split('\r');
    parts.forEach((part, i) => this.emitText(part, i === parts.length - 1 || this.crEndsLine));
  }

  private emitText(raw: string, endsLine: boolean): void {
    const lineNo = this.pieceLine(endsLine);
    if (raw.length > MAX_LINE_LENGTH) this.tooLong(lineNo);
    this.emitCleaned(raw, lineNo, false);
  }

  private binary(bytes: Buffer, nulAt: number): never {
    // Count the line ends before the NUL: LF, CRLF and, unless it redraws, lone CR alike.
    let line = this.lineNo + 1;
    for (let i = 0; i < nulAt; i++) {
      if (bytes[i] === LF) line++;
      else if (this.crEndsLine && bytes[i] === CR && bytes[i + 1] !== LF) line++;
    }
    throw new ParseError({
      source: this.source,
      line,
      problem: 'binary content (a NUL byte)',
      expected: 'a text log (plain or gzip-compressed)',
    });
  }

  /** The line at `line` (by default the one still being read) is too long. */
  private tooLong(line = this.lineNo + 1): never {
    throw new ParseError({
      source: this.source,
      line,
      problem: `a line longer than ${MAX_LINE_LENGTH / 1024} KiB (${MAX_LINE_LENGTH} bytes) and still going`,
      expected:
        'a text log, whose lines are shorter: ' +
        'check that this is the log and that its line ends survived (LF, CRLF or CR)',
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
