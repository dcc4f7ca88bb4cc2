/**
 * What every fio parser yields, whichever output style it reads (json, json+,
 * terse, normal): one FioJob per job fio reported (one per group with
 * group_reporting, one per client and job for `--client` runs), in canonical
 * units: bytes, bytes per second, I/Os per second, microseconds, milliseconds.
 *
 *   randread: (groupid=0, jobs=1): err= 0: pid=4242: Tue Mar  5 10:00:00 2024
 *     read: IOPS=6614, BW=25.8MiB/s (27.1MB/s)(1550MiB/60001msec)
 *
 * yields { name: 'randread', groupId: 0, error: 0, directions: [{ direction: 'read', iops: 6614,
 *   bandwidthBytesPerSec: 27053260.8, ioBytes: 1625292800, runtimeMs: 60001, ... }] }
 */

/** The directions fio reports; `mixed` is unified_rw_reporting's one figure for all of them. */
export const FIO_DIRECTIONS = ['read', 'write', 'trim', 'mixed'] as const;
export type FioDirection = (typeof FIO_DIRECTIONS)[number];

/** The completion-latency percentiles kept, and fio's names for them (`99.900000`, `99.90th`). */
export const FIO_PERCENTILES = { p50: 50, p90: 90, p99: 99, 'p99.9': 99.9, 'p99.99': 99.99 } as const;
export type FioPercentile = keyof typeof FIO_PERCENTILES;

/** The percentile a fio percentile key names (`99.900000` in json, `99.90` in normal output), if one kept. */
export function percentileOf(key: number): FioPercentile | undefined {
  for (const [name, value] of Object.entries(FIO_PERCENTILES))
    if (Math.abs(value - key) < 1e-6) return name as FioPercentile;
  return undefined;
}

/** A latency distribution as fio summarises it, in microseconds. */
export interface FioLatency {
  minUs: number;
  maxUs: number;
  meanUs: number;
  stddevUs: number;
}

/** One direction of one job. */
export interface FioDirectionResult {
  direction: FioDirection;
  iops: number;
  /** 1 KiB = 1024 bytes: fio's `bw` (KiB/s) times 1024, or its `bw_bytes` when printed. */
  bandwidthBytesPerSec: number;
  ioBytes: number;
  runtimeMs: number;
  /** Total latency (submission and completion), when fio measured it. */
  lat?: FioLatency;
  /** Completion latency, when fio measured it. */
  clat?: FioLatency;
  /** Completion-latency percentiles in microseconds, those fio printed. */
  clatPercentilesUs: Partial<Record<FioPercentile, number>>;
}

/**
 * The job options a comparison pairs and describes by, as fio took them. `bs` is
 * the text given (`4k`, `4k-16k`, `64k,4k`); bsBytes its size when it names one.
 */
export interface FioJobOptions {
  rw?: string;
  bs?: string;
  bsBytes?: number;
  iodepth?: number;
  numjobs?: number;
  ioengine?: string;
  direct?: boolean;
  size?: string;
  /** As given (`60`, `5m`): runtimes of each direction are in the results. */
  runtime?: string;
}

export interface FioJob {
  name: string;
  groupId?: number;
  /** fio's error number for the job; not 0: its figures mean nothing, and the job says why in `errorText`. */
  error: number;
  errorText?: string;
  options: FioJobOptions;
  /** The directions that did I/O (all of them for a job that failed before any). */
  directions: FioDirectionResult[];
  /** The host a `--client` run's job ran on. */
  client?: string;
  /**
   * How many of the job's numjobs processes the result sums: all of them with group_reporting,
   * 1 without (fio then reports each clone); unknown in terse output.
   */
  processes?: number;
  /** The 1-based line the job's result starts on. */
  line: number;
}

/** What an output says about the whole run. */
export interface FioHeader {
  /** `fio-3.33`. */
  version?: string;
  host?: string;
  /** ISO 8601, when the output dates itself. */
  time?: string;
}

export type FioStyle = 'json' | 'json+' | 'terse' | 'normal';

/** What a fio style parser is handed, and reports through. */
export interface FioParserOptions {
  /** File name or object key, for messages. */
  source: string;
  /** Each job as soon as its result is read, in file order. */
  onJob(job: FioJob): void;
}

/**
 * A style parser: lines in (without their line ends and any block prefix; a line fio redrew with lone
 * CRs as its pieces, each under the line's number), jobs out, the header at the end.
 */
export interface FioLineParser {
  line(text: string, lineNo: number): void;
  /** Throws ParseError when the output held no job or stopped inside one. */
  end(lastLine: number): FioHeader;
}

/** Bytes a fio size suffix stands for: fio reads `k`, `KiB` and `KB` alike as 1024 (kb_base=1024). */
const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  m: 1024 ** 2,
  g: 1024 ** 3,
  t: 1024 ** 4,
  p: 1024 ** 5,
};

/** The bytes of a fio size (`4k`, `128KiB`, `1M`, `4096`), or undefined when it names none (`4k-16k`, `100%`). */
export function fioSizeBytes(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?\s*$/i.exec(text);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * SIZE_UNITS[m[2]!.toLowerCase()]!);
}
