/**
 * Builds one IostatRun from the rows of its reports, whatever their source (text
 * tables of any platform, sysstat JSON). Each value is added to a running summary
 * of its printed column as its row arrives (per device, kept apart for the
 * since-boot report); the column summaries become metric summaries at the end,
 * scaled by the column's factor. Samples are assembled per report only when the
 * caller keeps or streams them. Memory: one report.
 *
 *   builder.header(ids of [r/s, w/s], time);
 *   builder.row('sda', undefined, ids, [1.5, 3], 0, line);
 *   builder.finish(endLine)
 *
 * yields IostatRun { columns, reports: 1, series: [{ device: 'sda', sampleCount: 1,
 *   summary: { read_iops: { count: 1, mean: 1.5, ... }, ... } }] }.
 */
import { IOSTAT_METRICS, type IostatMetric } from '../metrics.ts';
import {
  MAX_DEVICE_NAME_BYTES,
  type IostatColumn,
  type IostatMeta,
  type IostatRun,
  type IostatSample,
  type IostatSampleRow,
  type IostatSeries,
  type MetricSummary,
  type ParseWarning,
} from '../model.ts';
import { nativeInLabel } from '../labels.ts';
import { hasUnsafeCharacters, printable } from '../printable.ts';
import { ParseError } from './errors.ts';
import type { IostatPlatform } from './iostat-layout.ts';
import { MAX_VALUE, valueProblem } from './numbers.ts';
import { mergeSummaries, scaleSummary, SummaryBank } from './summary.ts';
import { MAX_WARNINGS, type ParserOptions } from './types.ts';

const METRIC_INDEX = new Map<IostatMetric, number>(IOSTAT_METRICS.map((m, i) => [m, i]));
const IOPS = METRIC_INDEX.get('iops')!;
const READ_IOPS = METRIC_INDEX.get('read_iops')!;
const WRITE_IOPS = METRIC_INDEX.get('write_iops')!;

/** A run holding more distinct columns than this is not an iostat table. */
export const MAX_COLUMNS = 64;
/**
 * Devices in one session. Every device is a series with its own accumulators and
 * items in the table; a session of more (a host with 100,000 LUNs) is refused
 * rather than allowed to exhaust the function's memory.
 */
export const MAX_SERIES_PER_RUN = 10_000;
/**
 * Summary slots per series: slot 0 is the derived iops (reads + writes), the rest
 * go to metric columns in the order they appear. Compact banks keep a hundred
 * devices' accumulators in cache; no real layout maps half as many columns.
 */
const SUMMARY_SLOTS = 32;
const DERIVED_IOPS = 0;

interface SeriesState {
  device: string;
  mount?: string;
  /** Printed values of the current report by column id, for the kept columns; valid where stamp equals the report. */
  current: Float64Array;
  /** By column id: the last report the series printed it in. */
  stamp: Int32Array;
  line: number;
  inReport: boolean;
  sampleCount: number;
  samples?: IostatSample[];
  /** Per column (and derived iops): summaries of the since-boot report and of the interval reports. */
  sinceBoot: SummaryBank;
  interval: SummaryBank;
}

export interface RunStart {
  index: number;
  platform: IostatPlatform;
  dialect: string;
  name: string;
  context: string[];
  meta: IostatMeta;
  startLine: number;
  /** False when the command said its first report is of an interval like the rest (sysstat `-y`). */
  sinceBootFirst?: boolean;
}

/** Why a device name cannot be a series (it becomes part of table keys and of a series label), if it cannot. */
export function deviceProblem(device: string): string | undefined {
  const bytes = Buffer.byteLength(device);
  if (bytes > MAX_DEVICE_NAME_BYTES)
    return (
      `device name of ${bytes} bytes, longer than ${MAX_DEVICE_NAME_BYTES} ("${printable(device, 40)}"); ` +
      'row skipped'
    );
  if (hasUnsafeCharacters(device)) return `device name "${printable(device, 40)}" has control characters; row skipped`;
  if (nativeInLabel(device).length === 0)
    return `device name "${printable(device, 40)}" has no visible characters; row skipped`;
  return undefined;
}

export class IostatRunBuilder {
  readonly index: number;
  readonly warnings: ParseWarning[] = [];
  private readonly start: RunStart;
  private readonly columns: IostatColumn[] = [];
  private readonly columnIds = new Map<string, number>();
  /** Per column id: its summary slot if the column feeds a metric, else -1. */
  private readonly slotOf = new Int16Array(MAX_COLUMNS).fill(-1);
  private slots = 1;
  /** Per column id: 1 if its value is needed once the report ends (samples, derived iops). */
  private readonly kept = new Uint8Array(MAX_COLUMNS);
  /** Columns printing reads/s and writes/s, and whether any prints their sum (tps). */
  private readonly readIopsColumns: number[] = [];
  private readonly writeIopsColumns: number[] = [];
  private hasIopsColumn = false;
  private readonly series = new Map<string, SeriesState>();
  /** Each device of the run by the name its series is listed under (labels.ts nativeInLabel). */
  private readonly listedAs = new Map<string, string>();
  /**
   * Series in the order their rows came in the current report (the first
   * touchedCount entries), and in the previous one (previousCount). Counts, not
   * lengths: emptying an array frees its storage, and it grew back every report.
   */
  private touched: SeriesState[] = [];
  private touchedCount = 0;
  private previousOrder: SeriesState[] = [];
  private previousCount = 0;
  /** Columns announced by headers in the current report (to tell a --pretty group from a new report). */
  private readonly reportColumns = new Uint8Array(MAX_COLUMNS);
  private suppressedWarnings = 0;
  /** The first row this run skipped, and why (the message for a run left without rows). */
  firstSkipped: { line: number; message: string } | undefined;
  private report = -1;
  private reportTime: string | undefined;
  private reportHasRows = false;
  /** Samples as objects (kept in the run, or for onIostatSample); wantSamples: as objects or rows. */
  private readonly wantObjects: boolean;
  private readonly wantSamples: boolean;
  /** Per column id: its metric's place in a row (IOSTAT_METRICS order), -1 for none, and its factor. */
  private readonly rowSlots = new Int8Array(MAX_COLUMNS).fill(-1);
  private readonly rowFactors = new Float64Array(MAX_COLUMNS);
  /** The one row onIostatRow is handed, refilled for each sample. */
  private readonly rowOut: IostatSampleRow = {
    report: 0,
    line: 0,
    time: undefined,
    sinceBoot: false,
    metrics: new Float64Array(IOSTAT_METRICS.length),
  };
  /** Report 0 holds averages since boot: the run began here (not earlier in the file) and was not `-y`. */
  private readonly bootReport: boolean;
  dialect: string;

  constructor(
    start: RunStart,
    private readonly options: Pick<
      ParserOptions,
      'source' | 'keepSamples' | 'onIostatSample' | 'onIostatRow' | 'continuation'
    >,
  ) {
    this.start = start;
    this.index = start.index;
    this.dialect = start.dialect;
    this.wantObjects = options.keepSamples || options.onIostatSample !== undefined;
    this.wantSamples = this.wantObjects || options.onIostatRow !== undefined;
    this.bootReport = options.continuation !== true && start.sinceBootFirst !== false;
  }

  /**
   * Whether the device has a row in the latest report with rows: what a piece pasted after prose must
   * carry on. The latest report, not the whole run: a part of a file parsed alone (parallel.ts) sees it too.
   */
  inLatestReport(device: string): boolean {
    const current = this.touchedCount > 0;
    const list = current ? this.touched : this.previousOrder;
    const count = current ? this.touchedCount : this.previousCount;
    for (let i = 0; i < count; i++) if (list[i]!.device === device) return true;
    return false;
  }

  get hasRows(): boolean {
    return this.series.size > 0;
  }

  /**
   * Column ids for printed column names; undefined if the run would exceed
   * MAX_COLUMNS. A name printed twice in one header keeps its second values
   * apart, as `<name> (2)` with no metric (onRepeat is told).
   */
  columnIdsFor(columns: readonly IostatColumn[], onRepeat?: (name: string) => void): Int16Array | undefined {
    const ids = new Int16Array(columns.length);
    const seen = new Set<string>();
    for (let i = 0; i < columns.length; i++) {
      let column = columns[i]!;
      if (seen.has(column.name)) {
        onRepeat?.(column.name);
        column = { name: `${column.name} (2)`, unit: column.unit, factor: column.factor };
      }
      seen.add(column.name);
      let id = this.columnIds.get(column.name);
      if (id === undefined) {
        if (this.columns.length >= MAX_COLUMNS) return undefined;
        id = this.columns.length;
        if (column.metric !== undefined && this.columns.some((c) => c.metric === column.metric)) {
          // A second column for a metric (`svc_t` beside `asvc_t`: no header prints both) is kept as
          // printed only: the first feeds the metric, in samples (metricValues) and summaries alike.
          column = { name: column.name, unit: column.unit, factor: column.factor };
        }
        this.columns.push(column);
        this.columnIds.set(column.name, id);
        if (column.metric !== undefined) {
          this.rowSlots[id] = METRIC_INDEX.get(column.metric)!;
          this.rowFactors[id] = column.factor;
        }
        if (column.metric !== undefined && this.slots < SUMMARY_SLOTS) this.slotOf[id] = this.slots++;
        if (this.wantSamples || column.metric === 'read_iops' || column.metric === 'write_iops') this.kept[id] = 1;
        if (column.metric === 'read_iops') this.readIopsColumns.push(id);
        if (column.metric === 'write_iops') this.writeIopsColumns.push(id);
        if (column.metric === 'iops') this.hasIopsColumn = true;
      }
      ids[i] = id;
    }
    return ids;
  }

  /** The columns the headers of the current report announced, by name. */
  announcedColumns(): string[] {
    return this.columns.filter((_, id) => this.reportColumns[id] === 1).map((c) => c.name);
  }

  /** Whether the values of this column are read at all (summaries, derived iops, samples). */
  reads(id: number): boolean {
    return this.kept[id] === 1 || this.slotOf[id]! >= 0;
  }

  /**
   * A header for these columns. Columns already announced in this report mean a
   * new report (even one with no rows: `-z` with every device idle); columns not
   * yet announced mean another group of the same report (--pretty).
   */
  header(ids: ArrayLike<number>, time: string | undefined): void {
    if (this.report < 0 || this.overlaps(ids)) this.startReport(time);
    else if (time !== undefined && !this.reportHasRows) this.reportTime = time;
    for (let i = 0; i < ids.length; i++) this.reportColumns[ids[i]!] = 1;
  }

  /** Start a new report explicitly (sysstat JSON statistics entries). */
  startReport(time: string | undefined): void {
    this.finishReport();
    this.report++;
    this.reportTime = time;
    this.reportHasRows = false;
    this.reportColumns.fill(0);
  }

  /**
   * One device row: values[offset + i] is the printed value of column ids[i].
   * Returns false when the row is skipped (with a warning): a device name that
   * is too long or holds control characters, a value that is negative, not a
   * number or absurdly large. A new device beyond MAX_SERIES_PER_RUN is a ParseError.
   */
  row(
    device: string,
    mount: string | undefined,
    ids: ArrayLike<number>,
    values: ArrayLike<number>,
    offset: number,
    line: number,
  ): boolean {
    if (!this.valuesFit(ids, values, offset, line)) return false;
    if (this.report < 0) this.startReport(undefined);
    const state = this.seriesFor(device, ids, line);
    if (state === undefined) return false;
    if (mount !== undefined) state.mount = mount;
    if (!state.inReport) {
      state.inReport = true;
      state.line = line;
      this.touched[this.touchedCount++] = state;
    }
    const report = this.report;
    const current = state.current;
    const stamp = state.stamp;
    const bank = this.isSinceBoot() ? state.sinceBoot : state.interval;
    const slotOf = this.slotOf;
    const kept = this.kept;
    // The first column's stamp tells a repeated device (a new report) apart from another --pretty group.
    stamp[ids[0]!] = report;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      const v = values[offset + i]!;
      stamp[id] = report;
      if (kept[id] === 1) current[id] = v;
      const slot = slotOf[id]!;
      if (slot >= 0) bank.add(slot, v);
    }
    this.reportHasRows = true;
    return true;
  }

  /** Whether every value the run reads is valid; if not, the row is skipped with the reason. */
  private valuesFit(ids: ArrayLike<number>, values: ArrayLike<number>, offset: number, line: number): boolean {
    // One comparison per value on the hot path; the reason is worked out only for a bad one.
    for (let i = 0; i < ids.length; i++) {
      const v = values[offset + i]!;
      if (!(v >= 0 && v < MAX_VALUE) && this.reads(ids[i]!)) {
        this.skipRow(line, `row skipped: ${this.columns[ids[i]!]!.name} ${valueProblem(v, 'iostat values')}`);
        return false;
      }
    }
    return true;
  }

  /**
   * The series a row of `device` goes to, a new one for a device first seen
   * (undefined, the row skipped, if its name cannot be listed). The same device
   * again with a column it already printed and no header between starts a new report.
   */
  private seriesFor(device: string, ids: ArrayLike<number>, line: number): SeriesState | undefined {
    // Devices come in the same order every report: the series at this place last time is most likely the one.
    let state: SeriesState | undefined =
      this.touchedCount < this.previousCount ? this.previousOrder[this.touchedCount] : undefined;
    if (state === undefined || state.device !== device) state = this.series.get(device);
    if (state === undefined) return this.newSeries(device, line);
    if (state.inReport && (state.stamp[ids[0]!] === this.report || this.printedInReport(state, ids)))
      this.startReport(undefined);
    return state;
  }

  /** A device first seen: checked once, then given its series. A device beyond MAX_SERIES_PER_RUN is a ParseError. */
  private newSeries(device: string, line: number): SeriesState | undefined {
    const problem = deviceProblem(device) ?? this.listingProblem(device);
    if (problem !== undefined) {
      this.skipRow(line, problem);
      return undefined;
    }
    if (this.series.size >= MAX_SERIES_PER_RUN) {
      throw new ParseError({
        source: this.options.source,
        line,
        problem:
          `more than ${MAX_SERIES_PER_RUN} devices in one iostat session ` +
          `(device "${printable(device, 40)}" is one more)`,
        expected:
          `at most ${MAX_SERIES_PER_RUN} devices per session: ` +
          'split the log into files of fewer devices, or run iostat on the devices you compare (iostat -x DEVICE...)',
      });
    }
    const state: SeriesState = {
      device,
      current: new Float64Array(MAX_COLUMNS),
      stamp: new Int32Array(MAX_COLUMNS).fill(-1),
      line,
      inReport: false,
      sampleCount: 0,
      sinceBoot: new SummaryBank(SUMMARY_SLOTS),
      interval: new SummaryBank(SUMMARY_SLOTS),
    };
    if (this.options.keepSamples) state.samples = [];
    this.series.set(device, state);
    return state;
  }

  /**
   * Why a new device cannot be listed (its series label would be another device's),
   * if it cannot; else it is taken down under its listed name.
   */
  private listingProblem(device: string): string | undefined {
    const listed = nativeInLabel(device);
    const other = this.listedAs.get(listed);
    if (other !== undefined) {
      return (
        `device "${printable(device, 40)}" would be listed as "${printable(listed, 40)}", ` +
        `as device "${printable(other, 40)}" already is; ` +
        'row skipped (the two names differ only in invisible characters, spacing or "#")'
      );
    }
    this.listedAs.set(listed, device);
    return undefined;
  }

  /** A row that cannot be read: warned, and remembered if it is the first. */
  skipRow(line: number, message: string): void {
    this.firstSkipped ??= { line, message: printable(message) };
    this.warn(line, message);
  }

  warn(line: number, message: string): void {
    // Messages quote the file: no control character reaches a terminal or a log.
    if (this.warnings.length < MAX_WARNINGS) this.warnings.push({ line, message: printable(message) });
    else this.suppressedWarnings++;
  }

  finish(endLine: number): IostatRun {
    this.finishReport();
    if (this.suppressedWarnings > 0)
      this.warnings.push({ line: endLine, message: `${this.suppressedWarnings} more warnings not shown` });
    const reports = this.report + 1;
    const series: IostatSeries[] = [];
    for (const state of this.series.values()) {
      // The since-boot report counts only when it is all the run has.
      const bank = reports > 1 || !this.bootReport ? state.interval : state.sinceBoot;
      const out: IostatSeries = {
        device: state.device,
        sampleCount: state.sampleCount,
        summary: this.metricSummaries(bank),
      };
      if (state.mount !== undefined) out.mount = state.mount;
      if (state.samples) out.samples = state.samples;
      series.push(out);
    }
    return {
      format: 'iostat',
      index: this.index,
      platform: this.start.platform,
      dialect: this.dialect,
      name: this.start.name,
      context: this.start.context,
      meta: this.start.meta,
      startLine: this.start.startLine,
      endLine,
      warnings: this.warnings,
      columns: this.columns,
      reports,
      series,
    };
  }

  /** Column summaries scaled to canonical units, combined per metric. */
  private metricSummaries(bank: SummaryBank): Partial<Record<IostatMetric, MetricSummary>> {
    const parts: MetricSummary[][] = IOSTAT_METRICS.map(() => []);
    this.columns.forEach((column, id) => {
      const slot = this.slotOf[id]!;
      const summary = slot < 0 ? undefined : bank.summary(slot);
      if (summary) parts[METRIC_INDEX.get(column.metric!)!]!.push(scaleSummary(summary, column.factor));
    });
    const derived = bank.summary(DERIVED_IOPS);
    if (derived) parts[IOPS]!.push(derived);
    const out: Partial<Record<IostatMetric, MetricSummary>> = {};
    parts.forEach((list, m) => {
      if (list.length > 0) out[IOSTAT_METRICS[m]!] = mergeSummaries(list);
    });
    return out;
  }

  /** The current report counts since boot: the first of a run that did not start earlier in the file. */
  private isSinceBoot(): boolean {
    return this.report === 0 && this.bootReport;
  }

  /**
   * Whether the series already has a value of one of these columns in this report (a repeat, not
   * another --pretty group).
   */
  private printedInReport(state: SeriesState, ids: ArrayLike<number>): boolean {
    for (let i = 0; i < ids.length; i++) if (state.stamp[ids[i]!] === this.report) return true;
    return false;
  }

  private overlaps(ids: ArrayLike<number>): boolean {
    for (let i = 0; i < ids.length; i++) if (this.reportColumns[ids[i]!]) return true;
    return false;
  }

  /**
   * The value of the first of these columns printed in this report, or -1 if
   * none is (kept values are never negative: row() skips such rows). Not NaN:
   * written that way, V8 allocated a heap number per device and report here.
   */
  private valueOf(state: SeriesState, columns: readonly number[]): number {
    for (let i = 0; i < columns.length; i++) {
      const id = columns[i]!;
      if (state.stamp[id] === this.report) return state.current[id]!;
    }
    return -1;
  }

  private finishReport(): void {
    const count = this.touchedCount;
    if (count === 0) return;
    const sinceBoot = this.isSinceBoot();
    // Solaris and FreeBSD print reads and writes, not their sum: derive it per sample.
    const deriveIops = !this.hasIopsColumn && this.readIopsColumns.length > 0 && this.writeIopsColumns.length > 0;
    const touched = this.touched;
    for (let i = 0; i < count; i++) {
      const state = touched[i]!;
      if (deriveIops) {
        const reads = this.valueOf(state, this.readIopsColumns);
        const writes = this.valueOf(state, this.writeIopsColumns);
        if (reads >= 0 && writes >= 0) (sinceBoot ? state.sinceBoot : state.interval).add(DERIVED_IOPS, reads + writes);
      }
      state.sampleCount++;
      if (this.options.onIostatRow) this.emitRow(state, sinceBoot);
      if (this.wantObjects) this.emitSample(state, sinceBoot);
      state.inReport = false;
    }
    this.touched = this.previousOrder;
    this.touchedCount = 0;
    this.previousOrder = touched;
    this.previousCount = count;
  }

  /** The sample as a row: metricValues' rule, as emitSample applies it, into the metrics' places. */
  private emitRow(state: SeriesState, sinceBoot: boolean): void {
    const { rowOut: row, rowSlots, rowFactors, report } = this;
    const { stamp, current } = state;
    const metrics = row.metrics.fill(NaN);
    for (let id = 0; id < this.columns.length; id++) {
      const slot = rowSlots[id]!;
      if (slot >= 0 && stamp[id] === report) metrics[slot] = current[id]! * rowFactors[id]!;
    }
    if (!this.hasIopsColumn && !Number.isNaN(metrics[READ_IOPS]!) && !Number.isNaN(metrics[WRITE_IOPS]!))
      metrics[IOPS] = metrics[READ_IOPS]! + metrics[WRITE_IOPS]!;
    row.report = report;
    row.line = state.line;
    row.time = this.reportTime;
    row.sinceBoot = sinceBoot;
    this.options.onIostatRow!(this.index, state.device, row);
  }

  /**
   * metricValues' rule in one pass over the columns: a run's column names are
   * unique and only the first column of a metric carries it (columnIdsFor),
   * and a kept value is never NaN (valuesFit).
   */
  private emitSample(state: SeriesState, sinceBoot: boolean): void {
    const { columns, report } = this;
    const { stamp, current } = state;
    const raw: Record<string, number> = {};
    const values: Partial<Record<IostatMetric, number>> = {};
    for (let id = 0; id < columns.length; id++) {
      if (stamp[id] !== report) continue;
      const column = columns[id]!;
      const v = current[id]!;
      raw[column.name] = v;
      if (column.metric !== undefined) values[column.metric] = v * column.factor;
    }
    if (!this.hasIopsColumn && values.read_iops !== undefined && values.write_iops !== undefined)
      values.iops = values.read_iops + values.write_iops;
    const sample: IostatSample = { report: this.report, line: state.line, sinceBoot, values, raw };
    if (this.reportTime !== undefined) sample.time = this.reportTime;
    state.samples?.push(sample);
    this.options.onIostatSample?.(this.index, state.device, sample);
  }
}

/**
 * The runs one parser hands on, in file order: each builder takes the next index; a finished builder
 * with rows goes to onRun, one without gives its index back and keeps the first row it skipped (the
 * reason the parser names when no run came out).
 */
export class RunSequence {
  emitted = 0;
  firstSkipped: { line: number; message: string } | undefined;
  private next: number;

  constructor(
    private readonly onRun: ParserOptions['onRun'],
    firstIndex = 0,
  ) {
    this.next = firstIndex;
  }

  nextIndex(): number {
    return this.next++;
  }

  finish(run: IostatRunBuilder, endLine: number): void {
    if (run.hasRows) {
      this.onRun(run.finish(endLine));
      this.emitted++;
      return;
    }
    // A header with no rows is no run: its index goes to the next one.
    this.next = run.index;
    this.firstSkipped ??= run.firstSkipped;
  }
}
