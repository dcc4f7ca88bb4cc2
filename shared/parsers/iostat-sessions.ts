/**
 * What a line of an iostat text report is to the session (one run) around it:
 * the one rule the serial parser (iostat.ts) and the parallel splitter, which
 * cuts files only where a session goes on (parallel-cuts.ts), both read lines by.
 *
 *   Linux 5.15.0-91-generic (db1)  01/15/2024  _x86_64_  (4 CPU)   <- banner: a new run starts here
 *   $ iostat -x 5                                                 <- text: a new run at the next header
 *   01/15/2024 10:00:01 AM                                        <- time of the next report
 *   avg-cpu:  %user   %nice %system %iowait  %steal   %idle        <- cpu block: its rows are no device rows
 *              0.50    0.00    0.25    0.10    0.00   99.15
 *                                                                 <- blank: ends a cpu block
 *   Device            r/s     rkB/s ...                           <- header (headerLayout)
 *   sda              1.50     24.00 ...                           <- row of numbers
 *   extended device statistics                                    <- title
 *
 * A run goes on across blank lines, titles, timestamps, cpu blocks and rows of
 * numbers. A banner starts a new run at once; any other text (a command, prose)
 * between a run's rows and the next header starts one at that header.
 */
import { freebsdIostat } from './iostat-freebsd.ts';
import { TTY_CPU_COLUMNS, type IostatDialect, type TableLayout } from './iostat-layout.ts';
import { linuxIostat, parseLinuxBanner, type LinuxBanner } from './iostat-linux.ts';
import { netbsdIostat } from './iostat-netbsd.ts';
import { solarisIostat } from './iostat-solaris.ts';
import { readTimestamp, type Timestamp } from './timestamps.ts';
import { rejoinSplitToken } from './wrappers.ts';

/** The platforms' header readers, in the order a header line is tried against them. */
const DIALECTS: readonly IostatDialect[] = [solarisIostat, freebsdIostat, netbsdIostat, linuxIostat];

/**
 * The table a header line (split on blanks) announces, if it is a header of any platform. A header a
 * paste mangled is mended, and says how in `repair`: dashes glued before its first word (`--Device:`),
 * one token split in two (`a   vgrq-sz`).
 */
export function headerLayout(tokens: readonly string[]): TableLayout | undefined {
  const layout = exactLayout(tokens);
  if (layout !== undefined || !looksLikeHeader(tokens)) return layout;
  const repairs: string[] = [];
  let mended = tokens;
  const dashed = /^-+(?=[A-Za-z])/.exec(tokens[0]!);
  if (dashed !== null) {
    mended = [tokens[0]!.slice(dashed[0].length), ...tokens.slice(1)];
    repairs.push(`"${dashed[0]}" before "${mended[0]}" left out`);
    const unDashed = exactLayout(mended);
    if (unDashed !== undefined) return { ...unDashed, repair: repairs.join('; ') };
  }
  const rejoined = rejoinSplitToken(mended, exactLayout);
  if (rejoined === undefined) return undefined;
  const [a, b] = rejoined.parts;
  repairs.push(`header token "${a} ${b}" read as "${rejoined.joined}"`);
  return { ...rejoined.result, repair: repairs.join('; ') };
}

/** The table a header announces as printed, no repair tried. */
export function exactLayout(tokens: readonly string[]): TableLayout | undefined {
  for (const dialect of DIALECTS) {
    const layout = dialect.matchHeader(tokens);
    if (layout !== undefined) return layout;
  }
  return undefined;
}

/** Column names carry `/`, `%`, `_` or `-`; prose rarely does: only such lines are worth mending. */
export function looksLikeHeader(tokens: readonly string[]): boolean {
  if (tokens.length < 4 || tokens.length > 40) return false;
  let marked = 0;
  for (const token of tokens) if (/[/%_-]/.test(token)) marked++;
  return marked * 2 >= tokens.length;
}

const TITLE = /extended\s+device\s+statistics/i;

/** The title Solaris and FreeBSD print above each report. */
export function isTitle(trimmed: string): boolean {
  return TITLE.test(trimmed);
}

/** A line that is no header, as the session sees it. */
export type SessionLine =
  | { kind: 'blank' }
  | { kind: 'title' }
  | { kind: 'cpu-block' }
  | { kind: 'banner'; banner: LinuxBanner }
  | { kind: 'time'; time: Timestamp }
  /** A row of some table, a command or prose: which one takes more than the line alone (isNumberRow). */
  | { kind: 'text' };

/** What a trimmed line that is no header is to its session; `tokens` is it split on blanks. */
export function sessionLine(trimmed: string, tokens: readonly string[]): SessionLine {
  if (trimmed.length === 0) return { kind: 'blank' };
  if (isTitle(trimmed)) return { kind: 'title' };
  if (tokens[0] === 'avg-cpu:' || tokens.every(isTtyCpuWord)) return { kind: 'cpu-block' };
  const banner = parseLinuxBanner(trimmed);
  if (banner) return { kind: 'banner', banner };
  const time = readTimestamp(trimmed);
  if (time !== undefined) return { kind: 'time', time };
  return { kind: 'text' };
}

/** Whether a line of this kind leaves a run going on (all but a banner and text that is no row). */
export function continuesSession(line: SessionLine): boolean {
  return line.kind !== 'banner' && line.kind !== 'text';
}

/**
 * Whether a text line of `fields` fields, `numbers` of them numbers, is a row of
 * numbers (a device row, an avg-cpu row) rather than prose: at least three
 * fields, all numbers but at most `words` (a device name, a mount point).
 */
export function isNumberRow(fields: number, numbers: number, words = 2): boolean {
  return fields >= 3 && numbers >= fields - words;
}

/** Words of the tty/cpu blocks printed above or beside the device table (`tty`, `cpu`, `tin tout`, `us sy id`). */
function isTtyCpuWord(token: string): boolean {
  return token === 'tty' || token === 'cpu' || TTY_CPU_COLUMNS.has(token);
}
