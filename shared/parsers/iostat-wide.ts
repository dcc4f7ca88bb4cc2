/**
 * Wide iostat reports: one column group per disk side by side, one line per report
 * (macOS `iostat`, OpenBSD `iostat`; FreeBSD's and NetBSD's default report too).
 * A line naming the disks stands above the line naming the columns; both are
 * reprinted every screenful. The first report averages since boot.
 *
 *               disk0               disk2       cpu    load average
 *     KB/t  tps  MB/s     KB/t  tps  MB/s  us sy id   1m   5m   15m
 *    24.51   18  0.43    12.00    0  0.00   5  3 92  1.82 1.95 2.01
 *
 * yields IostatRun { platform: 'macos', dialect: 'macos', series: [{ device: 'disk0',
 *   samples: [{ report: 0, sinceBoot: true, values: { iops: 18 }, raw: { 'KB/t': 24.51, tps: 18, 'MB/s': 0.43 } }] },
 *   { device: 'disk2', ... }] }.
 *
 * Disk columns, by the groups each platform prints (per disk, in this order):
 *   KB/t tps MB/s     macOS, FreeBSD: kB per transfer (no metric), transfers/s (iops), MiB/s (no metric)
 *   KB/t xfrs MB      macOS, FreeBSD -I: totals since the first report: transfers, MiB (no metric)
 *   sps tps msps      macOS, FreeBSD -o: sectors/s (no metric), transfers/s (iops), ms per transfer (no metric)
 *   blk xfr msps      macOS, FreeBSD -o -I: totals (no metric)
 *   KB/t t/s MB/s     OpenBSD (and NetBSD before 10): as KB/t tps MB/s
 *   t/s KB/t MB/s     NetBSD 10: the same columns reordered
 *   KB/t xfr MB       OpenBSD -I (NetBSD 10: xfr KB/t MB): totals since boot (no metric)
 *   KB xfr time       OpenBSD -D (NetBSD 10: xfr KB time): kB/s (no metric), transfers/s (iops),
 *                     busy seconds per second (util_pct, x100)
 *   MB/s time         NetBSD -X
 * MB/s is reads and writes together, and no canonical metric is a total throughput: it stays raw.
 * `-D -I` (totals) prints the same column names as `-D`: such a log is read as rates.
 * The tty (tin tout), cpu (us ni sy sp in id) and load average (1m 5m 15m) columns are no
 * device statistics: not kept.
 */
import type { IostatColumn, IostatMeta } from '../model.ts';
import { commandFromLine, commandName } from './context.ts';
import { ParseError } from './errors.ts';
import type { IostatPlatform } from './iostat-layout.ts';
import { IostatRunBuilder, RunSequence } from './iostat-run.ts';
import { parseIostatNumber } from './numbers.ts';
import { readTimestamp } from './timestamps.ts';
import type { LineParser, ParserOptions } from './types.ts';

/** Which platforms print a group: the BSD-derived `tps` ones, the `t/s` ones, NetBSD 10's own order. */
type Family = 'tps' | 't/s' | 'netbsd';

interface GroupSpec {
  columns: readonly IostatColumn[];
  family: Family;
  /** What the group adds to the dialect name: '' for the default report, `I` (totals), `o`, `D`, `X`. */
  mode: string;
}

const col = (name: string, unit: string, metric?: 'iops' | 'util_pct', factor = 1): IostatColumn =>
  metric === undefined ? { name, unit, factor } : { name, unit, metric, factor };

const KB_T = col('KB/t', 'kB');
const MB_S = col('MB/s', 'MB/s');
const MB = col('MB', 'MB');
const BUSY = col('time', 's/s', 'util_pct', 100);

const GROUPS: readonly GroupSpec[] = [
  { columns: [KB_T, col('tps', 'ops/s', 'iops'), MB_S], family: 'tps', mode: '' },
  { columns: [KB_T, col('xfrs', 'count'), MB], family: 'tps', mode: 'I' },
  { columns: [col('sps', 'sectors/s'), col('tps', 'ops/s', 'iops'), col('msps', 'ms')], family: 'tps', mode: 'o' },
  { columns: [col('blk', 'blocks'), col('xfr', 'count'), col('msps', 'ms')], family: 'tps', mode: 'oI' },
  { columns: [KB_T, col('t/s', 'ops/s', 'iops'), MB_S], family: 't/s', mode: '' },
  { columns: [KB_T, col('xfr', 'count'), MB], family: 't/s', mode: 'I' },
  { columns: [col('KB', 'kB/s'), col('xfr', 'ops/s', 'iops'), BUSY], family: 't/s', mode: 'D' },
  { columns: [col('t/s', 'ops/s', 'iops'), KB_T, MB_S], family: 'netbsd', mode: '' },
  { columns: [col('xfr', 'count'), KB_T, MB], family: 'netbsd', mode: 'I' },
  { columns: [col('xfr', 'ops/s', 'iops'), col('KB', 'kB/s'), BUSY], family: 'netbsd', mode: 'D' },
  { columns: [MB_S, BUSY], family: 'netbsd', mode: 'X' },
];

const CPU_TAILS: readonly (readonly string[])[] = [
  ['us', 'ni', 'sy', 'sp', 'in', 'id'],
  ['us', 'ni', 'sy', 'in', 'id'],
  ['us', 'sy', 'id'],
];
const LOAD_TAIL: readonly string[] = ['1m', '5m', '15m'];
/** Words a column line can start with: detection reads no further on any other line. */
const FIRST_WORDS: ReadonlySet<string> = new Set(['tin', 'KB/t', 'KB', 'sps', 'blk', 't/s', 'xfr', 'MB/s']);
/** Words of the disk-name line that name no disk. */
const BLOCK_TITLES: ReadonlySet<string> = new Set(['tty', 'cpu', 'CPU', 'load', 'average']);

/** A column line, read: the disk groups between the tty columns and the cpu and load columns. */
interface ColumnLine {
  tty: number;
  groups: GroupSpec[];
  cpu: readonly string[];
  load: boolean;
  /** Every column the line names, the ones not kept too. */
  width: number;
}

function startsWith(tokens: readonly string[], at: number, words: readonly string[]): boolean {
  for (let i = 0; i < words.length; i++) if (tokens[at + i] !== words[i]) return false;
  return true;
}

function groupAt(tokens: readonly string[], at: number): GroupSpec | undefined {
  return GROUPS.find((g) =>
    startsWith(
      tokens,
      at,
      g.columns.map((c) => c.name),
    ),
  );
}

/** The line read as a column line, if every word of it is one (prose never is). */
export function readColumnLine(tokens: readonly string[]): ColumnLine | undefined {
  if (!FIRST_WORDS.has(tokens[0] ?? '')) return undefined;
  let at = tokens[0] === 'tin' && tokens[1] === 'tout' ? 2 : 0;
  const tty = at;
  const groups: GroupSpec[] = [];
  for (let g = groupAt(tokens, at); g !== undefined; g = groupAt(tokens, at)) {
    groups.push(g);
    at += g.columns.length;
  }
  const cpu = CPU_TAILS.find((tail) => startsWith(tokens, at, tail)) ?? [];
  at += cpu.length;
  const load = startsWith(tokens, at, LOAD_TAIL);
  if (load) at += LOAD_TAIL.length;
  if (groups.length === 0 || at !== tokens.length) return undefined;
  return { tty, groups, cpu, load, width: tokens.length };
}

/** Whether a trimmed line is the column line of a wide report. */
export function isWideLine(trimmed: string): boolean {
  return readColumnLine(trimmed.split(/\s+/)) !== undefined;
}

/** The disks the line above a column line names, in order (`|___ wd0 ___|` markers and block titles left out). */
export function diskNames(line: string): string[] {
  return line
    .trim()
    .split(/\s+/)
    .filter((t) => t.length > 0 && !BLOCK_TITLES.has(t) && !/^\|?_*\|?$/.test(t));
}

/** The platform a column line and the disk-name line above it come from. */
function platformOf(columns: ColumnLine, namesLine: string, names: readonly string[]): IostatPlatform {
  const family = columns.groups[0]!.family;
  if (family === 'netbsd') return 'netbsd';
  if (family === 't/s') return /\bCPU\b|_\|/.test(namesLine) ? 'netbsd' : 'openbsd';
  // macOS prints no tty columns, `us sy id` and the load average; FreeBSD tty and `us ni sy in id`.
  if (columns.load || columns.cpu.length === 3) return 'macos';
  if (names.length > 0 && names.every((n) => /^disk\d/.test(n))) return 'macos';
  return columns.tty > 0 || columns.cpu.length > 0 ? 'freebsd' : 'macos';
}

function dialectOf(platform: IostatPlatform, columns: ColumnLine): string {
  const modes = [...new Set(columns.groups.map((g) => g.mode).filter((m) => m.length > 0))];
  return [platform, ...modes].join('-');
}

/** Where each device's values stand in a report line, and their column ids in the run. */
interface DevicePlan {
  device: string;
  positions: number[];
  ids: Int16Array;
  values: Float64Array;
}

interface Layout {
  text: string;
  platform: IostatPlatform;
  dialect: string;
  columns: ColumnLine;
  devices: DevicePlan[];
  /** Tokens a report line must have: the tty and disk columns (cpu values may run together: `  0100`). */
  minWidth: number;
  line: number;
}

/** How C printf writes a value that is not a number: the run builder warns about it. */
const NOT_A_NUMBER = /^[-+]?(?:nan|inf(?:inity)?)$/i;

function isNumberToken(token: string): boolean {
  return !Number.isNaN(parseIostatNumber(token)) || NOT_A_NUMBER.test(token);
}

export function createWideParser(options: ParserOptions, firstRunIndex = 0): LineParser {
  return new WideParser(options, firstRunIndex);
}

type Warning = { line: number; message: string };

class WideParser implements LineParser {
  private readonly runs: RunSequence;
  private run: IostatRunBuilder | undefined;
  private layout: Layout | undefined;
  /** The last line that was no report line: the disk names, when the column line follows it. */
  private previous: { text: string; line: number } | undefined;
  /** Commands since the last report line: the context of the next run, which they start. */
  private commands: string[] = [];
  private pendingTime: string | undefined;
  private lastLine = 0;
  private lastReportLine = 0;
  private lastHeader: Warning | undefined;
  private earlyWarnings: Warning[] = [];

  constructor(
    private readonly options: ParserOptions,
    firstRunIndex: number,
  ) {
    this.runs = new RunSequence(options.onRun, firstRunIndex);
  }

  line(text: string, lineNo: number): void {
    this.lastLine = lineNo;
    const trimmed = text.trim();
    if (trimmed.length === 0) return;
    const tokens = trimmed.split(/\s+/);
    const columns = readColumnLine(tokens);
    if (columns !== undefined) this.onColumnLine(columns, trimmed, lineNo);
    else if (this.layout === undefined || !this.reportLine(tokens, lineNo)) this.textLine(trimmed, lineNo);
  }

  warn(line: number, message: string): void {
    if (this.run !== undefined) this.run.warn(line, message);
    else this.earlyWarnings.push({ line, message });
  }

  end(last: number): void {
    this.finishRun(last || this.lastLine);
    if (this.runs.emitted > 0) return;
    const source = this.options.source;
    if (this.runs.firstSkipped !== undefined) {
      throw new ParseError({
        source,
        line: this.runs.firstSkipped.line,
        problem: `no report line of the wide iostat report could be read: ${this.runs.firstSkipped.message}`,
        expected: 'one line of numbers per report, a value for every column of the header line above it',
      });
    }
    const header = this.lastHeader;
    throw new ParseError({
      source,
      line: header?.line ?? 0,
      problem: header?.message ?? 'no wide iostat report found',
      expected:
        'the line naming the disks (e.g. "disk0 disk2 cpu load average"), the line naming their columns ' +
        '("KB/t tps MB/s ..."), then one line of numbers per report',
    });
  }

  private textLine(trimmed: string, lineNo: number): void {
    const time = readTimestamp(trimmed);
    if (time !== undefined) {
      if ('iso' in time) this.pendingTime = time.iso;
      else this.warn(lineNo, `timestamp "${trimmed.slice(0, 40)}" is not a valid date (${time.invalid}); ignored`);
      return;
    }
    const command = commandFromLine(trimmed);
    if (command !== undefined) this.commands.push(command);
    this.previous = { text: trimmed, line: lineNo };
  }

  /** The column line of a header: the line before it names the disks. */
  private onColumnLine(columns: ColumnLine, trimmed: string, lineNo: number): void {
    const namesLine = this.previous?.line === lineNo - 1 ? this.previous.text : '';
    this.previous = undefined;
    const names = diskNames(namesLine);
    const current = this.layout;
    if (names.length !== columns.groups.length) {
      // A header whose name line was cut off: the same columns as before keep the same disks.
      if (current !== undefined && current.text === trimmed && names.length === 0) {
        this.warn(lineNo, 'column line with no line of disk names above it: the disks of the header before kept');
        return;
      }
      this.lastHeader = {
        line: lineNo,
        message:
          `a wide iostat column line for ${columns.groups.length} disks under a line naming ${names.length} ` +
          `("${namesLine.slice(0, 60)}")`,
      };
      this.warn(lineNo, `${this.lastHeader.message}; header ignored, and the report lines under it`);
      this.layout = undefined;
      return;
    }
    const platform = platformOf(columns, namesLine, names);
    const dialect = dialectOf(platform, columns);
    const run = this.runFor(platform, dialect, lineNo);
    this.layout = this.planLayout(run, { platform, dialect, columns, text: trimmed, line: lineNo }, names);
    this.lastHeader = { line: lineNo, message: 'a wide iostat header with no report lines under it' };
  }

  /** The run a header belongs to: the current one, unless a command came since, or another layout. */
  private runFor(platform: IostatPlatform, dialect: string, lineNo: number): IostatRunBuilder {
    const run = this.run;
    // The dialect names the platform too: another one is another run.
    if (run !== undefined && (this.commands.length > 0 || run.dialect !== dialect || !run.hasRows))
      this.finishRun(this.lastReportLine);
    if (this.run !== undefined) return this.run;
    return this.startRun(platform, dialect, lineNo);
  }

  private startRun(platform: IostatPlatform, dialect: string, lineNo: number): IostatRunBuilder {
    const meta: IostatMeta = {};
    const command = [...this.commands].reverse().find((c) => commandName(c) === 'iostat');
    if (command !== undefined) meta.command = command;
    const run = new IostatRunBuilder(
      {
        index: this.runs.nextIndex(),
        platform,
        dialect,
        name: '',
        context: this.commands.slice(-20),
        meta,
        startLine: lineNo - 1,
      },
      this.options,
    );
    this.commands = [];
    for (const w of this.earlyWarnings) run.warn(w.line, w.message);
    this.earlyWarnings = [];
    this.run = run;
    return run;
  }

  private planLayout(run: IostatRunBuilder, base: Omit<Layout, 'devices' | 'minWidth'>, names: string[]): Layout {
    const byDevice = new Map<string, { columns: IostatColumn[]; positions: number[] }>();
    let at = base.columns.tty;
    base.columns.groups.forEach((group, g) => {
      const device = names[g]!;
      let plan = byDevice.get(device);
      if (plan === undefined) byDevice.set(device, (plan = { columns: [], positions: [] }));
      for (const column of group.columns) {
        plan.columns.push(column);
        plan.positions.push(at++);
      }
    });
    const devices: DevicePlan[] = [];
    for (const [device, plan] of byDevice) {
      const ids = run.columnIdsFor(plan.columns, (name) =>
        run.warn(base.line, `disk ${device} prints column "${name}" twice; its second values are kept apart`),
      );
      if (ids === undefined) run.warn(base.line, `too many columns for disk ${device}: its values are not kept`);
      else devices.push({ device, positions: plan.positions, ids, values: new Float64Array(ids.length) });
    }
    return { ...base, devices, minWidth: at };
  }

  /** A line of numbers under the header: one report. False if the line is no such line (text). */
  private reportLine(tokens: readonly string[], lineNo: number): boolean {
    if (tokens.length < 2 || !tokens.every(isNumberToken)) return false;
    const values = tokens.map(parseIostatNumber);
    const layout = this.layout!;
    const run = this.run!;
    if (tokens.length < layout.minWidth || tokens.length > layout.columns.width) {
      run.skipRow(
        lineNo,
        `report line skipped: ${tokens.length} values where the header of line ${layout.line} ` +
          `has ${layout.columns.width} columns`,
      );
      return true;
    }
    this.lastReportLine = lineNo;
    run.startReport(this.pendingTime);
    this.pendingTime = undefined;
    this.commands = [];
    for (const plan of layout.devices) {
      for (let i = 0; i < plan.positions.length; i++) plan.values[i] = values[plan.positions[i]!]!;
      run.row(plan.device, undefined, plan.ids, plan.values, 0, lineNo);
    }
    return true;
  }

  private finishRun(endLine: number): void {
    const run = this.run;
    if (run === undefined) return;
    this.runs.finish(run, endLine);
    this.run = undefined;
  }
}
