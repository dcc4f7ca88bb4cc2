/**
 * AIX `iostat -D` / `iostat -dD` (extended drive report, AIX 5.3 to 7.x): one block
 * per disk and report, a label line and a value line per section, blocks between dashes.
 *
 *   System configuration: lcpu=4 drives=2 paths=2 vdisks=0
 *   hdisk0          xfer:  %tm_act      bps      tps      bread      bwrtn
 *                            12.0     2.1M    160.0       1.6M     512.0K
 *                   read:      rps  avgserv  minserv  maxserv   timeouts      fails
 *                           120.0      3.1      0.2     41.5           0          0
 *                  write:      wps  avgserv  minserv  maxserv   timeouts      fails
 *                            40.0      1.2      0.3      1.1S          0          0
 *                  queue:  avgtime  mintime  maxtime  avgwqsz    avgsqsz     sqfull
 *                             0.4      0.0     12.0      0.0        0.1         3
 *   --------------------------------------------------------------------------------
 *
 * yields IostatRun { platform: 'aix', dialect: 'aix-D', meta: { cpus: 4 }, series: [{ device: 'hdisk0',
 *   samples: [{ values: { util_pct: 12, iops: 160, read_kBps: 1562.5, write_kBps: 500, read_iops: 120,
 *   read_ms: 3.1, write_ms: 1.2, wait_ms: 0.4, wait_queue: 0, active_queue: 0.1 }, raw: { bps: 2100000,
 *   'write maxserv': 1100, ... } }] }] }
 *
 * Columns (IBM's iostat -D description): %tm_act % busy -> util_pct; bps, bread, bwrtn bytes/s
 * (bread -> read_kBps, bwrtn -> write_kBps, /1024); tps, rps, wps transfers/s -> iops, read_iops,
 * write_iops; read/write avgserv ms -> read_ms, write_ms; queue avgtime ms -> wait_ms; avgwqsz
 * (waiting) -> wait_queue, avgsqsz (at the device) -> active_queue; min/max times, timeouts,
 * fails, sqfull kept raw. read: and write: print the same labels, so theirs are named
 * `read avgserv`, `write fails`, ... (rps and wps stay as printed).
 *
 * AIX scales values that do not fit: K, M, G, T are powers of 1000 (`16.4K` bytes/s for
 * 4 reads of 4 KiB), and times, milliseconds by default, carry S (seconds), M (minutes)
 * or H (hours). Raw values are in the plain unit (bytes/s, ms). With -T the xfer: line
 * ends in a `time` column (`10:15:32`): with a date line earlier in the file it times the report.
 *
 * The long form (-l) prints a disk per line under `Disks: xfers read write queue`, its
 * 23 values in the same order as the blocks (dialect aix-Dl).
 */
import type { IostatColumn, IostatMeta } from '../model.ts';
import { printable } from '../printable.ts';
import { commandFromLine, MAX_CONTEXT_LINES } from './context.ts';
import { ParseError } from './errors.ts';
import { IostatRunBuilder, RunSequence } from './iostat-run.ts';
import { MAX_VALUE, wholeNumber } from './numbers.ts';
import { readTimestamp } from './timestamps.ts';
import type { LineParser, ParserOptions } from './types.ts';

type Section = 'xfer' | 'read' | 'write' | 'queue';
/** How a value is scaled: sizes and counts by K/M/G/T, times by S/M/H. */
type Kind = 'size' | 'time';

interface AixColumn extends IostatColumn {
  kind: Kind;
}

const col = (name: string, unit: string, kind: Kind, metric?: IostatColumn['metric'], factor = 1): AixColumn =>
  metric === undefined ? { name, unit, kind, factor } : { name, unit, kind, factor, metric };

/** By `<section> <label>`. */
const AIX_COLUMNS: Record<string, AixColumn> = {
  'xfer %tm_act': col('%tm_act', '%', 'size', 'util_pct'),
  'xfer bps': col('bps', 'bytes/s', 'size'),
  'xfer tps': col('tps', 'ops/s', 'size', 'iops'),
  'xfer bread': col('bread', 'bytes/s', 'size', 'read_kBps', 1 / 1024),
  'xfer bwrtn': col('bwrtn', 'bytes/s', 'size', 'write_kBps', 1 / 1024),
  'read rps': col('rps', 'ops/s', 'size', 'read_iops'),
  'read avgserv': col('read avgserv', 'ms', 'time', 'read_ms'),
  'write wps': col('wps', 'ops/s', 'size', 'write_iops'),
  'write avgserv': col('write avgserv', 'ms', 'time', 'write_ms'),
  'queue avgtime': col('avgtime', 'ms', 'time', 'wait_ms'),
  'queue mintime': col('mintime', 'ms', 'time'),
  'queue maxtime': col('maxtime', 'ms', 'time'),
  'queue avgwqsz': col('avgwqsz', 'requests', 'size', 'wait_queue'),
  'queue avgsqsz': col('avgsqsz', 'requests', 'size', 'active_queue'),
  'queue sqfull': col('sqfull', 'count', 'size'),
};
for (const side of ['read', 'write']) {
  for (const label of ['minserv', 'maxserv']) AIX_COLUMNS[`${side} ${label}`] = col(`${side} ${label}`, 'ms', 'time');
  for (const label of ['timeouts', 'fails']) AIX_COLUMNS[`${side} ${label}`] = col(`${side} ${label}`, 'count', 'size');
}

/** The 23 value columns of the long form, in printed order. */
const LONG_ORDER = [
  ...['%tm_act', 'bps', 'tps', 'bread', 'bwrtn'].map((l) => `xfer ${l}`),
  ...['rps', 'avgserv', 'minserv', 'maxserv', 'timeouts', 'fails'].map((l) => `read ${l}`),
  ...['wps', 'avgserv', 'minserv', 'maxserv', 'timeouts', 'fails'].map((l) => `write ${l}`),
  ...['avgtime', 'mintime', 'maxtime', 'avgwqsz', 'avgsqsz', 'sqfull'].map((l) => `queue ${l}`),
];

function columnFor(section: Section, label: string): AixColumn {
  const key = `${section} ${label}`;
  return Object.hasOwn(AIX_COLUMNS, key) ? AIX_COLUMNS[key]! : col(key, 'unknown', 'size');
}

const DISK_OPEN = /^(\S+)\s+xfer:\s+(\S.*)$/;
const SECTION_LABELS = /^(read|write|queue):\s+(\S.*)$/;
const LONG_TITLE = /^Disks:\s+xfers\s+read\s+write\s+queue\b/;
const BANNER = /^System configuration:/;
const DASHES = /^-{8,}(?:\s+-+)*$/;
const CLOCK = /^(\d{1,2}):(\d{2}):(\d{2})$/;

/** Whether a trimmed line opens an AIX iostat -D disk block (or the long form's title). */
export function isAixLine(trimmed: string): boolean {
  const open = DISK_OPEN.exec(trimmed);
  if (open) return /^%tm_act\s+bps\s+tps\b/.test(open[2]!);
  return LONG_TITLE.test(trimmed);
}

const SIZE_SUFFIX: Record<string, number> = { K: 1e3, M: 1e6, G: 1e9, T: 1e12 };
const TIME_SUFFIX: Record<string, number> = { S: 1000, M: 60_000, H: 3_600_000 };
const VALUE = /^(\d+(?:[.,]\d*)?|[.,]\d+)([A-Z]?)$/;

/** A printed value in the column's plain unit (bytes/s, ms, count), NaN if it is none. */
export function aixValue(token: string, kind: Kind): number {
  const match = VALUE.exec(token);
  if (!match) return NaN;
  const value = Number(match[1]!.replace(',', '.'));
  if (match[2] === '') return value;
  const scale = (kind === 'time' ? TIME_SUFFIX : SIZE_SUFFIX)[match[2]!];
  return scale === undefined ? NaN : value * scale;
}

/** Whether every token of a line is a value (or a -T clock): a value line, not labels or prose. */
function isValueLine(tokens: readonly string[]): boolean {
  return tokens.every((t) => VALUE.test(t) || CLOCK.test(t));
}

interface Block {
  device: string;
  line: number;
  /** The section whose label line came last and waits for its values. */
  awaiting: { section: Section; labels: string[]; line: number } | undefined;
  columns: AixColumn[];
  values: number[];
  sections: number;
  clock: string | undefined;
  bad: boolean;
}

export function createAixParser(options: ParserOptions): LineParser {
  return new AixParser(options);
}

class AixParser implements LineParser {
  private readonly runs: RunSequence;
  private run: IostatRunBuilder | undefined;
  private block: Block | undefined;
  private long = false;
  private meta: IostatMeta = {};
  private context: string[] = [];
  private runStart = 0;
  /** Devices printed in the current report: one printed again opens the next report. */
  private inReport = new Set<string>();
  /** The date of the last timestamp line, for -T clocks. */
  private date: string | undefined;
  private pendingTime: string | undefined;
  private readonly idCache = new Map<string, Int16Array | undefined>();

  constructor(private readonly options: ParserOptions) {
    this.runs = new RunSequence(options.onRun);
  }

  line(text: string, lineNo: number): void {
    const t = text.trim();
    if (t.length === 0) return;
    const tokens = t.split(/\s+/);
    const awaiting = this.block?.awaiting;
    if (awaiting !== undefined) {
      if (isValueLine(tokens)) return this.values(tokens, lineNo);
      this.cut(awaiting.line, awaiting.section, lineNo, t);
    }
    const open = DISK_OPEN.exec(t);
    if (open) return this.openBlock(open[1]!, open[2]!, lineNo);
    const labels = SECTION_LABELS.exec(t);
    if (labels && this.block !== undefined) {
      this.block.awaiting = { section: labels[1] as Section, labels: labels[2]!.split(/\s+/), line: lineNo };
      return;
    }
    if (DASHES.test(t)) return this.closeBlock();
    if (this.long && this.longRow(tokens, lineNo)) return;
    this.otherLine(t, lineNo);
  }

  end(lastLine: number): void {
    const awaiting = this.block?.awaiting;
    if (awaiting !== undefined) this.cut(awaiting.line, awaiting.section, lastLine, undefined);
    this.closeBlock();
    this.finishRun(lastLine);
    if (this.runs.emitted > 0) return;
    const source = this.options.source;
    if (this.runs.firstSkipped !== undefined)
      throw new ParseError({
        source,
        line: this.runs.firstSkipped.line,
        problem: `no AIX disk block could be read: ${this.runs.firstSkipped.message}`,
        expected: 'iostat -D blocks with a value under every label of xfer:, read:, write: and queue:',
      });
    throw new ParseError({
      source,
      line: 0,
      problem: 'no AIX iostat -D disk block found',
      expected: 'blocks opening with a line such as "hdisk0  xfer:  %tm_act  bps  tps  bread  bwrtn"',
    });
  }

  /** The label line at `labelLine` has no value line under it: the log was cut inside a disk block. */
  private cut(labelLine: number, section: Section, lineNo: number, found: string | undefined): never {
    const what = found === undefined ? 'the end of the input' : `"${printable(found, 60)}" (line ${lineNo})`;
    throw new ParseError({
      source: this.options.source,
      line: labelLine,
      problem:
        `an AIX iostat -D block cut short: the ${section}: labels of disk ` +
        `"${printable(this.block!.device, 40)}" are followed by ${what}`,
      expected: `a line of values under the ${section}: labels, as iostat -D prints them`,
    });
  }

  private openBlock(device: string, labels: string, lineNo: number): void {
    this.closeBlock();
    this.long = false;
    this.block = {
      device,
      line: lineNo,
      awaiting: { section: 'xfer', labels: labels.split(/\s+/), line: lineNo },
      columns: [],
      values: [],
      sections: 0,
      clock: undefined,
      bad: false,
    };
  }

  /** The value line of the section the block waits on. */
  private values(tokens: string[], lineNo: number): void {
    const block = this.block!;
    const { section, labels } = block.awaiting!;
    block.awaiting = undefined;
    if (tokens.length !== labels.length) {
      block.bad = true;
      this.builder(lineNo).skipRow(
        lineNo,
        `disk "${block.device}": ${tokens.length} values under ${labels.length} ${section}: labels; block skipped`,
      );
      return;
    }
    labels.forEach((label, i) => {
      const token = tokens[i]!;
      if (section === 'xfer' && label === 'time') block.clock = CLOCK.test(token) ? token : undefined;
      else this.add(block, columnFor(section, label), token);
    });
    block.sections++;
  }

  private add(block: Block, column: AixColumn, token: string): void {
    block.columns.push(column);
    block.values.push(aixValue(token, column.kind));
  }

  /** The block is complete (dashes, the next block, the end): its disk's row goes to the run. */
  private closeBlock(): void {
    const block = this.block;
    this.block = undefined;
    if (block === undefined || block.bad || block.columns.length === 0) return;
    const run = this.builder(block.line);
    if (block.sections < 4)
      run.warn(block.line, `disk "${block.device}": block of ${block.sections} of the 4 sections; kept as it is`);
    this.emitRow(run, block.device, block.columns, block.values, block.line, block.clock);
  }

  private emitRow(
    run: IostatRunBuilder,
    device: string,
    columns: AixColumn[],
    values: number[],
    line: number,
    clock: string | undefined,
  ): void {
    const ids = this.idsFor(run, columns, line);
    if (ids === undefined) return;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (!(v >= 0 && v < MAX_VALUE)) {
        run.skipRow(line, `disk "${device}": ${columns[i]!.name} is not a value AIX iostat prints; row skipped`);
        return;
      }
    }
    if (this.inReport.size === 0 || this.inReport.has(device)) {
      run.startReport(this.reportTime(clock));
      this.inReport.clear();
    }
    this.inReport.add(device);
    run.row(device, undefined, ids, values, 0, line);
  }

  /** The time of a report: the -T clock on the date of the last timestamp line, else that line's time. */
  private reportTime(clock: string | undefined): string | undefined {
    const pending = this.pendingTime;
    this.pendingTime = undefined;
    if (clock === undefined) return pending;
    if (this.date === undefined) return undefined;
    const [h, m, s] = clock.split(':');
    return `${this.date}T${h!.padStart(2, '0')}:${m}:${s}`;
  }

  private idsFor(run: IostatRunBuilder, columns: AixColumn[], line: number): Int16Array | undefined {
    const key = columns.map((c) => c.name).join('\n');
    if (this.idCache.has(key)) return this.idCache.get(key);
    const ids = run.columnIdsFor(
      columns.map(({ kind: _kind, ...column }) => column),
      (name) => run.warn(line, `label "${name}" printed twice in one section; its second values are kept apart`),
    );
    if (ids === undefined) run.warn(line, 'too many distinct columns in one run: block ignored');
    this.idCache.set(key, ids);
    return ids;
  }

  /** A disk line of the long form: the device and the 23 values (and a -T clock). */
  private longRow(tokens: string[], lineNo: number): boolean {
    const rest = tokens.slice(1);
    if (!isValueLine(rest) || (rest.length !== LONG_ORDER.length && rest.length !== LONG_ORDER.length + 1))
      return false;
    const columns = LONG_ORDER.map((key) => AIX_COLUMNS[key]!);
    const values = columns.map((c, i) => aixValue(rest[i]!, c.kind));
    const clock = rest.length > LONG_ORDER.length ? rest[LONG_ORDER.length] : undefined;
    this.emitRow(this.builder(lineNo, 'aix-Dl'), tokens[0]!, columns, values, lineNo, clock);
    return true;
  }

  /** Banners, the long form's title, timestamps, commands; anything else is not part of the report. */
  private otherLine(t: string, lineNo: number): void {
    if (BANNER.test(t)) return this.banner(t, lineNo);
    if (LONG_TITLE.test(t)) {
      this.closeBlock();
      this.long = true;
      this.builder(lineNo, 'aix-Dl');
      return;
    }
    const time = readTimestamp(t);
    if (time !== undefined) {
      if ('iso' in time) {
        this.pendingTime = time.iso;
        this.date = time.iso.slice(0, 10);
      } else this.warnHere(lineNo, `timestamp "${printable(t, 40)}" is not a valid date (${time.invalid}); ignored`);
      return;
    }
    const command = commandFromLine(t);
    if (command === undefined) return;
    if (this.run?.hasRows) this.finishRun(lineNo - 1);
    this.context.push(command);
    if (this.context.length > MAX_CONTEXT_LINES) this.context.shift();
    if (/\biostat\b/.test(command)) this.meta.command = command;
    this.runStart ||= lineNo;
  }

  /** `System configuration: lcpu=4 drives=2 ...` opens a run (iostat prints it when it starts). */
  private banner(t: string, lineNo: number): void {
    this.closeBlock();
    if (this.run?.hasRows) this.finishRun(lineNo - 1);
    const lcpu = /\blcpu=(\d+)/.exec(t);
    const cpus = lcpu === null ? undefined : wholeNumber(lcpu[1]!);
    if (cpus !== undefined) this.meta.cpus = cpus;
    this.runStart ||= lineNo;
  }

  private warnHere(line: number, message: string): void {
    this.builder(line).warn(line, message);
  }

  private builder(line: number, dialect = this.long ? 'aix-Dl' : 'aix-D'): IostatRunBuilder {
    if (this.run === undefined) {
      this.run = new IostatRunBuilder(
        {
          index: this.runs.nextIndex(),
          platform: 'aix',
          dialect,
          name: '',
          context: this.context,
          meta: this.meta,
          startLine: this.runStart || line,
        },
        this.options,
      );
      this.context = [];
      this.meta = {};
      this.runStart = 0;
    } else if (!this.run.hasRows) this.run.dialect = dialect;
    return this.run;
  }

  private finishRun(endLine: number): void {
    const run = this.run;
    this.run = undefined;
    this.inReport.clear();
    this.idCache.clear();
    if (run === undefined) return;
    this.runs.finish(run, endLine);
  }
}
