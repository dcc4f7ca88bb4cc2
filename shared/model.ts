/**
 * Canonical records: what every parser yields and what the store, the comparison
 * engine and the CLI read. One file of logs becomes a ParsedFile of runs; a run is
 * one diskperf result table or one iostat session.
 */
import type { FioPoint } from './fio-point.ts';
import { IOSTAT_METRICS, type DiskperfMetric, type FioMetric, type IostatMetric } from './metrics.ts';

/** Device names are keys in the table (with the label in front): longer ones are no device. */
export const MAX_DEVICE_NAME_BYTES = 128;

export const FORMATS = ['diskperf', 'iostat', 'fio'] as const;
export type Format = (typeof FORMATS)[number];

export type Platform = 'irix' | 'solaris' | 'linux' | 'freebsd' | 'aix' | 'macos' | 'netbsd' | 'openbsd';

/** A recoverable oddity, kept with the run it was found in. */
export interface ParseWarning {
  line: number;
  message: string;
}

/** count/mean/min/max/stddev (sample standard deviation; 0 for a single value). */
export interface MetricSummary {
  count: number;
  mean: number;
  min: number;
  max: number;
  stddev: number;
}

interface RunBase {
  /** 0-based position of the run in its file: part of the run's identity. */
  index: number;
  /** Best label the file itself offers: diskperf test name, iostat host. */
  name: string;
  /** Shell commands and notes seen before the run (`tunefs -a 16 /opt`, `diskperf -W ...`). */
  context: string[];
  /** 1-based line numbers of the run's first and last line in the file. */
  startLine: number;
  endLine: number;
  warnings: ParseWarning[];
}

export interface DiskperfRow {
  /** Request size in bytes. */
  req_size: number;
  line: number;
  /** MB/s as printed; a table with only some columns has only those keys. */
  values: Partial<Record<DiskperfMetric, number>>;
}

export interface DiskperfMeta {
  version?: string;
  testName?: string;
  /** The date as printed (`Thu APR  3 21:10:13 2020`) and as ISO 8601 (no zone: IRIX prints local time). */
  testDate?: string;
  startedAt?: string;
  machine?: string;
  /** Host name taken from the machine line (`IRIX isengard 6.5 ...` -> isengard). */
  host?: string;
  os?: string;
  osRelease?: string;
  cpuBoard?: string;
  testType?: string;
  testPath?: string;
  requestSizes?: { min: number; max: number };
  parameters?: Record<string, number | string>;
  fileSizeBytes?: number;
  /** Header fields this parser does not know, kept as printed. */
  extra?: Record<string, string>;
}

export interface DiskperfRun extends RunBase {
  format: 'diskperf';
  platform: 'irix';
  dialect: string;
  meta: DiskperfMeta;
  /** Metric columns the table carries, in printed order. */
  columns: DiskperfMetric[];
  rows: DiskperfRow[];
}

/** How one printed iostat column maps onto a canonical metric. */
export interface IostatColumn {
  /** Header as printed: `kw/s`, `wkB/s`, `asvc_t`, `ms/w`. */
  name: string;
  /** Unit of the printed value: `kB/s`, `MB/s`, `sectors/s`, `us`, `ms`, `%`, `ops/s`, `requests`, `count`. */
  unit: string;
  /** Canonical metric it feeds, if any; error counters and the like have none. */
  metric?: IostatMetric;
  /** Multiply the printed value by this to get the canonical unit. */
  factor: number;
}

export interface IostatSample {
  /** 0-based report (interval) number within the run. */
  report: number;
  line: number;
  /** Timestamp of the report when the log prints one (ISO 8601; no zone unless printed). */
  time?: string;
  /** The first report of a run counts since boot, not over an interval. */
  sinceBoot: boolean;
  values: Partial<Record<IostatMetric, number>>;
  /** Numeric values by printed column name, in the printed unit. */
  raw: Record<string, number>;
}

/**
 * A sample as a streaming writer takes it: the metrics in IOSTAT_METRICS order,
 * NaN where the log does not print one. The parser hands the same row object
 * for every sample: copy what you keep.
 */
export interface IostatSampleRow {
  report: number;
  line: number;
  time: string | undefined;
  sinceBoot: boolean;
  metrics: Float64Array;
}

/** A sample as a row (a new one): what the parser's onIostatRow gives for it. */
export function sampleRow(sample: IostatSample): IostatSampleRow {
  const metrics = Float64Array.from(IOSTAT_METRICS, (m) => sample.values[m] ?? NaN);
  return { report: sample.report, line: sample.line, time: sample.time, sinceBoot: sample.sinceBoot, metrics };
}

export interface IostatSeries {
  /** Native device name: `c0t0d0`, `sda`, `cciss/c0d0`, `d10`, `ada0`. */
  device: string;
  /** Mount point printed after the device (Solaris `-m`). */
  mount?: string;
  sampleCount: number;
  /** Present unless the caller asked for summaries only (streaming). */
  samples?: IostatSample[];
  /** Per metric; leaves out the since-boot report when the run has more than one report. */
  summary: Partial<Record<IostatMetric, MetricSummary>>;
}

export interface IostatMeta {
  /** `iostat -xnz 5 2` when the command line is in the file. */
  command?: string;
  os?: string;
  kernel?: string;
  host?: string;
  date?: string;
  cpus?: number;
  sysstatVersion?: string;
}

export interface IostatRun extends RunBase {
  format: 'iostat';
  platform: Exclude<Platform, 'irix'>;
  /** Which layout: `solaris-xn`, `linux-sysstat-x-12.1.2`, `linux-sysstat-json`, `freebsd-x` ... */
  dialect: string;
  meta: IostatMeta;
  /** Every printed column seen in the run, with its unit and mapping. */
  columns: IostatColumn[];
  reports: number;
  series: IostatSeries[];
}

/** One job (one direction's figures or more) of a fio output, at its point. */
export interface FioRow {
  point: FioPoint;
  /** The job's name as fio printed it. */
  job: string;
  /** The host a `--client` run's job ran on. */
  client?: string;
  /** 1-based line the job's result starts on. */
  line: number;
  values: Partial<Record<FioMetric, number>>;
}

export interface FioMeta {
  /** `fio-3.33`. */
  version?: string;
  host?: string;
  /** When the output dates itself (ISO 8601). */
  time?: string;
  /** The options every job ran with, as given (`ioengine: libaio`, `direct: 1`); several values joined by `, `. */
  options?: Record<string, string>;
  /** The job results the run's rows were made of (clones and clients counted one by one). */
  jobs: number;
  /** The hosts of a `--client` run. */
  clients?: string[];
}

/** One fio output: its jobs as a table of points, like a diskperf table by request size. */
export interface FioRun extends RunBase {
  format: 'fio';
  platform?: undefined;
  /** The output style: `fio-json`, `fio-json+`, `fio-terse`, `fio-normal`. */
  dialect: string;
  meta: FioMeta;
  /** The metrics some row carries, in registry order. */
  columns: FioMetric[];
  rows: FioRow[];
}

export type Run = DiskperfRun | IostatRun | FioRun;

export interface ParsedFile {
  source: string;
  format: Format;
  runs: Run[];
  lines: number;
}

/**
 * Canonical metric values of one sample from its printed values: each metric from
 * the first column that feeds it (times its factor), and iops as reads plus writes
 * when no column prints it (Solaris, FreeBSD). The one rule for parsers and readers.
 */
export function metricValues(
  columns: readonly IostatColumn[],
  raw: Readonly<Record<string, number>>,
): Partial<Record<IostatMetric, number>> {
  const values: Partial<Record<IostatMetric, number>> = {};
  let printsIops = false;
  for (const column of columns) {
    if (column.metric === undefined) continue;
    if (column.metric === 'iops') printsIops = true;
    const v = raw[column.name];
    if (v !== undefined && !Number.isNaN(v) && values[column.metric] === undefined)
      values[column.metric] = v * column.factor;
  }
  if (!printsIops && values.read_iops !== undefined && values.write_iops !== undefined)
    values.iops = values.read_iops + values.write_iops;
  return values;
}

/**
 * The shape of a run id, stated once: `r` and hex digits of a hash of where the
 * run was read from (shared/store/keys.ts runId makes them). Selectors and the
 * API check ids against it before any read.
 */
export const RUN_ID_HEX_DIGITS = 24;
export const RUN_ID_PATTERN = new RegExp(`^r[0-9a-f]{${RUN_ID_HEX_DIGITS}}$`);
/** What a message says a run id is. */
export const RUN_ID_RULE = `a run id is r followed by ${RUN_ID_HEX_DIGITS} hex digits`;
export const isRunId = (text: string): boolean => RUN_ID_PATTERN.test(text);
