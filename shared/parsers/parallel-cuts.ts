/**
 * Where a large iostat log can be cut into parts for parallel.ts: right before a
 * repeat of the file's first header line whose preceding lines all belong to the
 * same session (iostat-sessions.ts) and whose next line is a device row under it,
 * so the part after the cut begins inside the run the part before it ends in.
 *
 *   sda   1.50 24.00 ...        <- last row of a report
 *                               <- blank, timestamp, avg-cpu block: the session goes on
 *   Device  r/s rkB/s ...       <- a cut goes here (the first header, repeated)
 *   sda   1.20 20.00 ...        <- a row under it
 *
 * yields the byte offsets of the cuts, and the columns of that header.
 */
import type { open } from 'node:fs/promises';
import { commandFromLine } from './context.ts';
import { detectLine } from './detect.ts';
import type { TableLayout } from './iostat-layout.ts';
import { deviceProblem } from './iostat-run.ts';
import { continuesSession, headerLayout, isNumberRow, sessionLine } from './iostat-sessions.ts';
import { cleanLine, decodeLine } from './lines.ts';
import { MAX_VALUE, parseIostatNumber } from './numbers.ts';

type FileHandle = Awaited<ReturnType<typeof open>>;

/** How far past each nominal cut to look for a report boundary: room for many reports of hundreds of devices. */
const SEARCH_WINDOW = 1024 * 1024;
/** How far before each nominal cut the search window starts, to check the lines preceding a candidate. */
const LOOK_BEHIND = 64 * 1024;
const HEAD_BYTES = 256 * 1024;
/** Lines looked at above a candidate cut before giving it up. */
const MAX_LINES_BACK = 40;

export interface Cuts {
  /** Byte offsets, ascending: each part starts at one. */
  offsets: number[];
  /** The columns of the header every part after a cut starts with. */
  anchorColumns: string[];
}

/** Cuts for `parts` parts of a file of `size` bytes, or undefined if it is not a text iostat log with safe cuts. */
export async function findCuts(file: FileHandle, size: number, parts: number): Promise<Cuts | undefined> {
  const anchor = await firstHeaderLine(file);
  if (anchor === undefined) return undefined;
  const offsets: number[] = [];
  const needle = Buffer.concat([Buffer.from('\n'), anchor.bytes]);
  for (let k = 1; k < parts; k++) {
    const nominal = Math.floor((size * k) / parts);
    if (offsets.length > 0 && nominal <= offsets[offsets.length - 1]!) continue;
    const cut = await cutNear(file, size, nominal, needle, anchor.layout);
    if (cut !== undefined) offsets.push(cut);
  }
  if (offsets.length === 0) return undefined;
  return { offsets, anchorColumns: anchor.layout.columns.map((c) => c.name) };
}

/** The first safe cut at or after `nominal` within the search window, if any. */
async function cutNear(
  file: FileHandle,
  size: number,
  nominal: number,
  needle: Buffer,
  layout: TableLayout,
): Promise<number | undefined> {
  const windowStart = Math.max(0, nominal - LOOK_BEHIND);
  const window = Buffer.allocUnsafe(Math.min(SEARCH_WINDOW, size - windowStart));
  const { bytesRead } = await file.read(window, 0, window.length, windowStart);
  const view = window.subarray(0, bytesRead);
  const anchorLength = needle.length - 1;
  for (let at = view.indexOf(needle, nominal - windowStart); at !== -1; at = view.indexOf(needle, at + 1)) {
    const lineStart = at + 1;
    if (rowFollows(view, lineStart, anchorLength, layout) && startsSameSession(view, lineStart, layout))
      return windowStart + lineStart;
  }
  return undefined;
}

/**
 * The bytes of the first header line and its table, if the file opens as a text
 * iostat log. Lines are read as the line splitter hands them to format detection
 * (decoded, quoting removed), so both see the same format; files whose lines it
 * would split otherwise (UTF-16, lone CR line ends) are not cut.
 */
async function firstHeaderLine(file: FileHandle): Promise<{ bytes: Buffer; layout: TableLayout } | undefined> {
  const head = Buffer.allocUnsafe(HEAD_BYTES);
  const { bytesRead } = await file.read(head, 0, HEAD_BYTES, 0);
  if (bytesRead >= 2 && isGzipOrUtf16(head)) return undefined;
  let from = 0;
  while (from < bytesRead) {
    const lf = head.indexOf(10, from);
    if (lf === -1 || lf >= bytesRead) return undefined;
    const text = lineText(head, from, lf);
    if (text === undefined) return undefined;
    const format = detectLine(text);
    // Only text iostat reports are cut; sysstat JSON and diskperf files are small.
    if (format !== undefined && format !== 'iostat') return undefined;
    const layout = format === 'iostat' ? headerLayout(text.split(/\s+/)) : undefined;
    if (layout !== undefined)
      return { bytes: Buffer.from(head.subarray(from, head[lf - 1] === 13 ? lf - 1 : lf)), layout };
    from = lf + 1;
  }
  return undefined;
}

function isGzipOrUtf16(head: Buffer): boolean {
  return (
    (head[0] === 0x1f && head[1] === 0x8b) ||
    (head[0] === 0xff && head[1] === 0xfe) ||
    (head[0] === 0xfe && head[1] === 0xff)
  );
}

/**
 * Whether the line starting at `lineStart` is the anchor itself (nothing more on
 * it) and the next one a device row the parser takes under it.
 */
function rowFollows(view: Buffer, lineStart: number, anchorLength: number, layout: TableLayout): boolean {
  let next = lineStart + anchorLength;
  if (view[next] === 13) next++;
  if (view[next] !== 10) return false;
  const lf = view.indexOf(10, next + 1);
  const line = lf === -1 ? undefined : lineText(view, next + 1, lf);
  return line !== undefined && fitsRow(line.split(/\s+/), layout);
}

/**
 * The line [start, lf) as the line splitter hands it on (decoded, quoting
 * removed), trimmed; undefined if a lone CR makes it two lines there, or it holds a control byte.
 */
function lineText(view: Buffer, start: number, lf: number): string | undefined {
  const end = view[lf - 1] === 13 ? lf - 1 : lf;
  if (view.subarray(start, end).includes(13)) return undefined;
  const text = cleanLine(decodeLine(view, start, end));
  // A form feed or other control byte: trim() and the parser's tokenizer differ on it, so no cut there.
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 32 && c !== 9) return undefined;
  }
  return text.trim();
}

/**
 * A device row the parser takes under this header: a device name it keeps and a
 * valid number for every column. Rows with a mount point or tty/cpu values do not
 * count: fewer cuts, never a wrong one.
 */
function fitsRow(tokens: readonly string[], layout: TableLayout): boolean {
  const width = layout.columns.length;
  if (tokens.length !== width + 1) return false;
  const deviceAt = layout.deviceAt === 'first' ? 0 : width;
  const device = tokens[deviceAt]!;
  if (!Number.isNaN(parseIostatNumber(device)) || deviceProblem(device) !== undefined) return false;
  return tokens.every((token, i) => {
    const value = parseIostatNumber(token);
    return i === deviceAt || (value >= 0 && value < MAX_VALUE);
  });
}

/**
 * The lines before `lineStart` back to the last row of numbers belong to one session: nothing there
 * opens a new run.
 */
function startsSameSession(view: Buffer, lineStart: number, layout: TableLayout): boolean {
  let end = lineStart - 1;
  for (let lines = 0; lines < MAX_LINES_BACK && end > 0; lines++) {
    const start = view.lastIndexOf(10, end - 1) + 1;
    if (start === 0 && view.lastIndexOf(10, end - 1) === -1) return false;
    const text = lineText(view, start, end);
    if (text === undefined) return false;
    end = start - 1;
    const tokens = text.split(/\s+/);
    const line = sessionLine(text, tokens);
    if (line.kind !== 'text') {
      if (continuesSession(line)) continue;
      return false;
    }
    // A row of the header is a row, even when it reads like a command (`ada0 3 11 ...`).
    if (fitsRow(tokens, layout)) return true;
    if (commandFromLine(text) !== undefined) return false;
    // A device row (or an avg-cpu row): the session goes on.
    return isNumberRow(tokens.length, tokens.filter((t) => /^-?\d+(?:[.,]\d+)?$/.test(t)).length);
  }
  return false;
}
