/**
 * Builds one IostatRun from the rows of its reports, whatever their source (text
 * tables of any platform, sysstat JSON). Values are held per device for the
 * current report only; each finished report updates running summaries, and its
 * samples are kept or streamed out as the caller asked. Memory: one report.
 */
import { IOSTAT_METRICS, type IostatMetric } from '../metrics.ts';
import type { IostatColumn, IostatMeta, IostatRun, IostatSample, IostatSeries, MetricSummary, ParseWarning } from '../model.ts';
import type { IostatPlatform } from './iostat-layout.ts';
import { SummaryBank } from './summary.ts';
import { MAX_WARNINGS, type ParserOptions } from './types.ts';

const METRIC_COUNT = IOSTAT_METRICS.length;
const METRIC_INDEX = new Map<IostatMetric, number>(IOSTAT_METRICS.map((m, i) => [m, i]));
const IOPS = METRIC_INDEX.get('iops')!;
const READ_IOPS = METRIC_INDEX.get('read_iops')!;
const WRITE_IOPS = METRIC_INDEX.get('write_iops')!;

/** A run holding more distinct columns than this is not an iostat table. */
export const MAX_COLUMNS = 64;

interface SeriesState {
  device: string;
  mount?: string;
  /** Printed values of the current report by column id; NaN where absent. */
  current: Float64Array;
  line: number;
  inReport: boolean;
  sampleCount: number;
  samples?: IostatSample[];
  /** Per metric: summaries of the since-boot report and of the interval reports. */
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
}

export class IostatRunBuilder {
  readonly index: number;
  readonly warnings: ParseWarning[] = [];
  private readonly start: RunStart;
  private readonly columns: IostatColumn[] = [];
  private readonly columnIds = new Map<string, number>();
  private readonly metricOf = new Int16Array(MAX_COLUMNS).fill(-1);
  private readonly factorOf = new Float64Array(MAX_COLUMNS);
  /** Ids of the columns that feed a metric: the only ones a finished report has to look at. */
  private readonly mapped = new Int16Array(MAX_COLUMNS);
  private mappedCount = 0;
  private readonly series = new Map<string, SeriesState>();
  private readonly touched: SeriesState[] = [];
  /** Columns announced by headers in the current report (to tell a --pretty group from a new report). */
  private readonly reportColumns = new Uint8Array(MAX_COLUMNS);
  private readonly metricValues = new Float64Array(METRIC_COUNT);
  private suppressedWarnings = 0;
  private report = -1;
  private reportTime: string | undefined;
  private reportHasRows = false;
  private readonly wantSamples: boolean;
  dialect: string;

  constructor(
    start: RunStart,
    private readonly options: Pick<ParserOptions, 'keepSamples' | 'onIostatSample'>,
  ) {
    this.start = start;
    this.index = start.index;
    this.dialect = start.dialect;
    this.wantSamples = options.keepSamples || options.onIostatSample !== undefined;
  }

  get hasRows(): boolean {
    return this.series.size > 0;
  }

  /** Column ids for printed column names; undefined if the run would exceed MAX_COLUMNS. */
  columnIdsFor(columns: readonly IostatColumn[]): Int16Array | undefined {
    const ids = new Int16Array(columns.length);
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i]!;
      let id = this.columnIds.get(column.name);
      if (id === undefined) {
        if (this.columns.length >= MAX_COLUMNS) return undefined;
        id = this.columns.length;
        this.columns.push(column);
        this.columnIds.set(column.name, id);
        this.metricOf[id] = column.metric === undefined ? -1 : METRIC_INDEX.get(column.metric)!;
        this.factorOf[id] = column.factor;
        if (column.metric !== undefined) this.mapped[this.mappedCount++] = id;
      }
      ids[i] = id;
    }
    return ids;
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

  /** One device row: values[offset + i] is the printed value of column ids[i]. */
  row(device: string, mount: string | undefined, ids: ArrayLike<number>, values: ArrayLike<number>, offset: number, line: number): void {
    if (this.report < 0) this.startReport(undefined);
    let state = this.series.get(device);
    if (state === undefined) {
      state = {
        device,
        current: new Float64Array(MAX_COLUMNS).fill(NaN),
        line,
        inReport: false,
        sampleCount: 0,
        sinceBoot: new SummaryBank(METRIC_COUNT),
        interval: new SummaryBank(METRIC_COUNT),
      };
      if (this.options.keepSamples) state.samples = [];
      this.series.set(device, state);
    } else if (state.inReport && !Number.isNaN(state.current[ids[0]!]!)) {
      // The same device again with the same columns and no header between: a new report.
      this.startReport(undefined);
    }
    if (mount !== undefined) state.mount = mount;
    if (!state.inReport) {
      state.inReport = true;
      state.line = line;
      this.touched.push(state);
    }
    const current = state.current;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      current[id] = values[offset + i]!;
    }
    this.reportHasRows = true;
  }

  warn(line: number, message: string): void {
    if (this.warnings.length < MAX_WARNINGS) this.warnings.push({ line, message });
    else this.suppressedWarnings++;
  }

  finish(endLine: number): IostatRun {
    this.finishReport();
    if (this.suppressedWarnings > 0) this.warnings.push({ line: endLine, message: `${this.suppressedWarnings} more warnings not shown` });
    const reports = this.report + 1;
    const series: IostatSeries[] = [];
    for (const state of this.series.values()) {
      const accumulators = reports > 1 ? state.interval : state.sinceBoot;
      const summary: Partial<Record<IostatMetric, MetricSummary>> = {};
      for (let m = 0; m < METRIC_COUNT; m++) {
        const metricSummary = accumulators.summary(m);
        if (metricSummary !== undefined) summary[IOSTAT_METRICS[m]!] = metricSummary;
      }
      const out: IostatSeries = { device: state.device, sampleCount: state.sampleCount, summary };
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

  private overlaps(ids: ArrayLike<number>): boolean {
    for (let i = 0; i < ids.length; i++) if (this.reportColumns[ids[i]!]) return true;
    return false;
  }

  private finishReport(): void {
    if (this.touched.length === 0) return;
    const sinceBoot = this.report === 0;
    const mv = this.metricValues;
    const ncol = this.columns.length;
    // Hot loop (once per device per report): locals, no calls but SummaryBank.add.
    const mapped = this.mapped;
    const mappedCount = this.mappedCount;
    const metricOf = this.metricOf;
    const factorOf = this.factorOf;
    for (const state of this.touched) {
      mv.fill(NaN);
      const current = state.current;
      const accumulators = sinceBoot ? state.sinceBoot : state.interval;
      for (let k = 0; k < mappedCount; k++) {
        const c = mapped[k]!;
        const v = current[c]!;
        if (v !== v) continue;
        const m = metricOf[c]!;
        const x = v * factorOf[c]!;
        mv[m] = x;
        accumulators.add(m, x);
      }
      // Solaris and FreeBSD print reads and writes, not their sum.
      const reads = mv[READ_IOPS]!;
      const writes = mv[WRITE_IOPS]!;
      if (mv[IOPS] !== mv[IOPS] && reads === reads && writes === writes) {
        mv[IOPS] = reads + writes;
        accumulators.add(IOPS, reads + writes);
      }
      state.sampleCount++;
      if (this.wantSamples) this.emitSample(state, sinceBoot);
      current.fill(NaN, 0, ncol);
      state.inReport = false;
    }
    this.touched.length = 0;
  }

  private emitSample(state: SeriesState, sinceBoot: boolean): void {
    const values: Partial<Record<IostatMetric, number>> = {};
    for (let m = 0; m < METRIC_COUNT; m++) {
      const v = this.metricValues[m]!;
      if (v === v) values[IOSTAT_METRICS[m]!] = v;
    }
    const raw: Record<string, number> = {};
    for (let c = 0; c < this.columns.length; c++) {
      const v = state.current[c]!;
      if (v === v) raw[this.columns[c]!.name] = v;
    }
    const sample: IostatSample = { report: this.report, line: state.line, sinceBoot, values, raw };
    if (this.reportTime !== undefined) sample.time = this.reportTime;
    state.samples?.push(sample);
    this.options.onIostatSample?.(this.index, state.device, sample);
  }
}
