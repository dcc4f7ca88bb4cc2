/**
 * A fio output as runs: its jobs (FioJob, fio-record.ts) become rows of a
 * table of points, like a diskperf table by request size.
 *
 *   seq-read: (groupid=0, jobs=1): err= 0 ...  rw=read bs=128k iodepth=4 numjobs=1
 *     read: IOPS=3266, BW=408MiB/s ...
 *
 * yields { format: 'fio', dialect: 'fio-normal', rows: [{ point: { rw: 'read', bs: 131072,
 *   iodepth: 4, numjobs: 1 }, job: 'seq-read', values: { fio_read_bw: 408.3, fio_read_iops: 3266, ... } }] }
 *
 * Results of one job in a row at one point (numjobs without group_reporting, the hosts
 * of a `--client` run) are one row: bandwidth and IOPS add up, mean latency is weighted
 * by IOPS; their percentiles cannot be combined and are left out, with a warning. A
 * point met again later is the next run. A job that failed or did no I/O is left out,
 * with a warning; a `--client` run's `All clients` sum is left out too, its hosts being rows.
 */
import { fioPointKey, type FioPoint } from '../fio-point.ts';
import { FIO_METRICS, FIO_PERCENTILE_MEASURES, fioMetric, fioPercentileName, type FioMetric } from '../metrics.ts';
import type { FioMeta, FioRow, FioRun, ParseWarning } from '../model.ts';
import type { FioOutput } from './fio.ts';
import type { FioDirectionResult, FioJob, FioPercentile } from './fio-record.ts';
import { MAX_WARNINGS } from './types.ts';

/** fio's defaults for the options a point is made of, where a job file leaves them out. */
const FIO_DEFAULTS = { bs: 4096, iodepth: 1, numjobs: 1 } as const;
/** The options every job's run is described by (setups side by side), beside its point. */
const DESCRIBING = ['ioengine', 'direct', 'size', 'runtime'] as const;
const MiB = 1024 * 1024;
/** The name fio gives a `--client` run's sum over its hosts. */
const ALL_CLIENTS = 'All clients';

/** The point a job measured: its options, fio's defaults where it left them out; its name when the output has none. */
export function fioPointOfJob(job: FioJob): FioPoint {
  const o = job.options;
  if (o.rw === undefined) return { job: job.name };
  return {
    rw: o.rw,
    bs: o.bsBytes ?? o.bs ?? FIO_DEFAULTS.bs,
    iodepth: o.iodepth ?? FIO_DEFAULTS.iodepth,
    numjobs: o.numjobs ?? FIO_DEFAULTS.numjobs,
  };
}

/** A direction that moved data: fio lists every direction of a job, the idle ones at 0. */
const didIo = (d: FioDirectionResult) => d.ioBytes > 0 || d.iops > 0 || d.bandwidthBytesPerSec > 0;

function directionValues(d: FioDirectionResult): Partial<Record<FioMetric, number>> {
  const values: Partial<Record<FioMetric, number>> = {
    [fioMetric(d.direction, 'bw')]: d.bandwidthBytesPerSec / MiB,
    [fioMetric(d.direction, 'iops')]: d.iops,
  };
  const mean = d.lat?.meanUs ?? d.clat?.meanUs;
  if (mean !== undefined) values[fioMetric(d.direction, 'lat')] = mean;
  for (const measure of FIO_PERCENTILE_MEASURES) {
    const us = d.clatPercentilesUs[fioPercentileName(measure) as FioPercentile];
    if (us !== undefined) values[fioMetric(d.direction, measure)] = us;
  }
  return values;
}

/** Rows at one point merged: throughput summed, latency weighted by IOPS, percentiles dropped. */
function mergeInto(row: FioRow, values: Partial<Record<FioMetric, number>>): boolean {
  let droppedPercentiles = false;
  const merged: Partial<Record<FioMetric, number>> = {};
  for (const direction of ['read', 'write', 'trim', 'mixed'] as const) {
    const [bw, iops, lat] = (['bw', 'iops', 'lat'] as const).map((m) => fioMetric(direction, m));
    const [a, b] = [row.values, values];
    if (a[bw!] === undefined && b[bw!] === undefined) continue;
    merged[bw!] = (a[bw!] ?? 0) + (b[bw!] ?? 0);
    const [ia, ib] = [a[iops!] ?? 0, b[iops!] ?? 0];
    merged[iops!] = ia + ib;
    if (a[lat!] !== undefined && b[lat!] !== undefined && ia + ib > 0)
      merged[lat!] = (a[lat!]! * ia + b[lat!]! * ib) / (ia + ib);
    for (const p of FIO_PERCENTILE_MEASURES)
      if (a[fioMetric(direction, p)] !== undefined || b[fioMetric(direction, p)] !== undefined)
        droppedPercentiles = true;
  }
  row.values = merged;
  return droppedPercentiles;
}

/** Where a warning goes: the builder keeps MAX_WARNINGS, and counts the rest. */
type Warn = (warning: ParseWarning) => void;

/** A job's row, before it is placed in a run. */
interface Measured {
  key: string;
  row: FioRow;
  job: FioJob;
  /** The job results the row stands for (clones and clients combined). */
  results: number;
}

/** A job that measured something as a row; the others are warned about (undefined). */
function measure(job: FioJob, warn: Warn): Measured | undefined {
  if (job.error !== 0) {
    const why = job.errorText !== undefined ? ` (${job.errorText})` : '';
    warn({ line: job.line, message: `job "${job.name}" failed with error ${job.error}${why}: left out` });
    return undefined;
  }
  const moved = job.directions.filter(didIo);
  if (moved.length === 0) {
    warn({ line: job.line, message: `job "${job.name}" did no I/O: left out` });
    return undefined;
  }
  const values: Partial<Record<FioMetric, number>> = Object.assign({}, ...moved.map(directionValues));
  const point = fioPointOfJob(job);
  const row: FioRow = {
    point,
    job: job.name,
    ...(job.client !== undefined ? { client: job.client } : {}),
    line: job.line,
    values,
  };
  return { key: fioPointKey(point), row, job, results: 1 };
}

/**
 * How many results in a row at one point make one row: the hosts of a `--client` run one a
 * host; numjobs clones reported one by one (no group_reporting) numjobs over the processes each
 * result sums; else one (a second result is the job file run again: the next run).
 */
function resultsPerRow(block: readonly Measured[]): number {
  const clients = new Set(block.map((m) => m.job.client));
  if (block.length > 1 && clients.size === block.length && !clients.has(undefined)) return block.length;
  const { job } = block[0]!;
  const numjobs = job.options.numjobs ?? 1;
  // Terse says nothing of processes: numjobs results in a row are taken as the clones.
  const processes = job.processes ?? (block.length % numjobs === 0 ? 1 : numjobs);
  const per = Math.floor(numjobs / Math.max(1, processes));
  return per > 1 && block.length % per === 0 ? per : 1;
}

/** One row of these results: the one's own, or their figures combined, with a warning saying how. */
function combined(block: readonly Measured[], warn: Warn): Measured {
  if (block.length === 1) return block[0]!;
  const first = {
    ...block[0]!,
    row: { ...block[0]!.row, values: { ...block[0]!.row.values } },
    results: block.length,
  };
  let dropped = false;
  for (const m of block.slice(1)) dropped = mergeInto(first.row, m.row.values) || dropped;
  const clients = new Set(block.map((m) => m.job.client)).size === block.length;
  warn({
    line: first.row.line,
    message:
      `${block.length} results of one job at one point (${first.row.job}: ` +
      `${clients ? 'one a client' : 'numjobs without group_reporting'}): ` +
      'their bandwidth and IOPS are added up' +
      (dropped ? ', their percentiles left out (fio cannot combine them: run with group_reporting)' : ''),
  });
  return first;
}

/** A placed row: its point's key, and how many results it stands for. */
type Placed = Pick<Measured, 'key' | 'row' | 'results'>;

/**
 * The runs of a fio output, built a job at a time as the parser reads them: only the results
 * at the point being read stay whole (they may be clones to combine); the rest are rows. A
 * point met again starts the next run (the same job file run again, or a loop over a sweep):
 * run k holds the k-th result of each point, and the runs are the replicates of a comparison.
 */
export class FioRunBuilder {
  private readonly warnings: ParseWarning[] = [];
  private suppressed = 0;
  private readonly warn: Warn = (warning) => {
    if (this.warnings.length < MAX_WARNINGS) this.warnings.push(warning);
    else this.suppressed++;
  };
  private block: Measured[] = [];
  private readonly placed: Placed[] = [];
  private readonly options = new Map<string, Set<string>>();
  private readonly clients = new Set<string>();
  /** The first jobs read, for a message when none measured anything. */
  readonly first: Pick<FioJob, 'name' | 'error' | 'line'>[] = [];

  add(job: FioJob): void {
    if (this.first.length < 3) this.first.push({ name: job.name, error: job.error, line: job.line });
    // A `--client` run's sum of its hosts (after them): the hosts' own results are the rows.
    if (this.clients.size > 0 && job.name === ALL_CLIENTS && job.client === undefined) return;
    if (job.client !== undefined) this.clients.add(job.client);
    this.noteOptions(job);
    const m = measure(job, this.warn);
    if (m === undefined) return;
    if (this.block.length > 0 && this.block[0]!.key !== m.key) this.placeBlock();
    this.block.push(m);
  }

  /** Every run, once the output has been read to its last line. */
  runs(output: FioOutput, lastLine: number): FioRun[] {
    this.placeBlock();
    const byRun: FioRow[][] = [];
    const results: number[] = [];
    const seen = new Map<string, number>();
    for (const { key, row, results: n } of this.placed) {
      const k = seen.get(key) ?? 0;
      seen.set(key, k + 1);
      (byRun[k] ??= []).push(row);
      results[k] = (results[k] ?? 0) + n;
    }
    const meta = this.metaOf(output);
    const warnings = [...this.warnings];
    if (this.suppressed > 0) warnings.push({ line: lastLine, message: `${this.suppressed} more warnings not shown` });
    return byRun.map((kept, index) => {
      const carried = new Set(kept.flatMap((r) => Object.keys(r.values)));
      const lines = kept.map((r) => r.line);
      const last = Math.max(...lines);
      const next = byRun[index + 1]?.reduce((low, r) => Math.min(low, r.line), lastLine);
      const endLine = next !== undefined && next > last ? next - 1 : index === byRun.length - 1 ? lastLine : last;
      return {
        format: 'fio',
        index,
        name: kept[0]!.job || output.host || 'fio',
        context: [],
        startLine: Math.min(...lines),
        endLine,
        warnings: index === 0 ? warnings : [],
        dialect: `fio-${output.style}`,
        meta: { ...meta, jobs: results[index]! },
        columns: FIO_METRICS.filter((m) => carried.has(m)),
        rows: kept,
      };
    });
  }

  /** The results at the point just read, as rows: each group of resultsPerRow of them one. */
  private placeBlock(): void {
    const block = this.block;
    if (block.length === 0) return;
    this.block = [];
    const per = resultsPerRow(block);
    for (let at = 0; at < block.length; at += per) {
      const { key, row, results } = combined(block.slice(at, at + per), this.warn);
      this.placed.push({ key, row, results });
    }
  }

  private noteOptions(job: FioJob): void {
    for (const name of DESCRIBING) {
      const v = job.options[name];
      if (v === undefined) continue;
      let seen = this.options.get(name);
      if (seen === undefined) this.options.set(name, (seen = new Set()));
      seen.add(typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
    }
  }

  private metaOf(output: FioOutput): FioMeta {
    const options = Object.fromEntries([...this.options].map(([name, seen]) => [name, [...seen].join(', ')]));
    return {
      ...(output.version !== undefined ? { version: output.version } : {}),
      ...(output.host !== undefined ? { host: output.host } : {}),
      ...(output.time !== undefined ? { time: output.time } : {}),
      ...(this.options.size > 0 ? { options } : {}),
      jobs: 0,
      ...(this.clients.size > 0 ? { clients: [...this.clients] } : {}),
    };
  }
}

/** The runs of a whole fio output's jobs (FioRunBuilder, for jobs already in hand). */
export function fioRuns(jobs: readonly FioJob[], output: FioOutput, lastLine: number): FioRun[] {
  const builder = new FioRunBuilder();
  for (const job of jobs) builder.add(job);
  return builder.runs(output, lastLine);
}
