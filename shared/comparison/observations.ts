/**
 * What a comparison is computed from: observations, each one run of one unit.
 *
 *   diskperf run r1 of scsi2sd_redux   -> { runId r1, device scsi2sd_redux, values: fwd_wt by req_size ... }
 *   iostat run r2, series sda of sas10k -> { runId r2, device sas10k/sda, native sda, values: read_iops 812.4 ... }
 *
 * A unit is one series: a diskperf run's device (its label), or one native
 * device of an iostat label (`sas10k/sda`). Runs are the replicates of a unit.
 * Besides the values, an observation carries what the comparability warnings
 * need: platform, host, the commands typed before the run, and for diskperf the
 * parameters it ran with; and what the run says of itself that only the
 * setups side by side show (RunDescription: tags, OS, times, command line).
 */
import { fioPointKey } from '../fio-point.ts';
import type { DiskperfMetric, FioMetric, Metric } from '../metrics.ts';
import type { FioRow, Format, Platform } from '../model.ts';

export interface Observation {
  /** The run it comes from: the replicate. */
  runId: string;
  /** The unit: a diskperf run's label, an iostat series' `label/native`. */
  device: string;
  /** The device label the unit is filed under (the upload's label for an iostat series). */
  label?: string;
  /** iostat: the device name the log prints (`sda`, `c0t0d0`): units of two sides pair by it. */
  native?: string;
  format: Format;
  platform?: Platform;
  host?: string;
  /** The commands and notes typed before the run (`tunefs -a 1 /opt`). */
  context?: readonly string[];
  /** diskperf: what it was asked to do, as printed (file size, time, direct, scale, delay, test type). */
  setup?: Readonly<Record<string, string | number>>;
  /** diskperf: the request-size range its header announces. */
  requestSizes?: { min: number; max: number };
  /**
   * diskperf: values by metric and request size (a Map: request sizes as object
   * keys would make V8 keep a slow dictionary per metric); fio: by metric and
   * point key (fio-point.ts); iostat: summary means.
   */
  values: Partial<Record<Metric, ObservedValue>>;
  /** iostat: samples behind the means (a mean of one sample, or of the since-boot report, is weak). */
  samples?: number;
  sinceBootOnly?: boolean;
  /** What its run says of itself beside the figures: shown side by side, never used by the statistics. */
  about?: RunDescription;
}

/** A metric's value in one observation: one mean, or values by request size or by fio point key. */
export type ObservedValue = number | ReadonlyMap<number, number> | ReadonlyMap<string, number>;

/** What a run says of itself beside its figures (one object for every observation of the run). */
export interface RunDescription {
  tags?: Readonly<Record<string, string>>;
  /** The OS and its release or kernel as the log prints them: `IRIX 6.5`, `Linux 5.15.0-91-generic`. */
  version?: string;
  /** The first sample's time, or when a diskperf run started (as stored: ISO 8601). */
  from?: string;
  /** The last sample's time (iostat). */
  to?: string;
  /** The iostat command line, when the log holds it (`iostat -xnz 5 2`). */
  command?: string;
  /** The uploaded object's size in bytes, when the store has it. */
  objectSize?: number;
}

/** What a diskperf run's header says of how it ran, beside its table. */
export interface DiskperfSetupSource {
  parameters?: Record<string, number | string>;
  fileSizeBytes?: number;
  testType?: string;
  requestSizes?: { min: number; max: number };
}

/** The parts of a run every observation of it shares. */
export interface RunFacts {
  label?: string;
  platform?: Platform;
  host?: string;
  context?: readonly string[];
  about?: RunDescription;
}

function facts(run: RunFacts): Partial<Observation> {
  return {
    ...(run.label !== undefined ? { label: run.label } : {}),
    ...(run.platform !== undefined ? { platform: run.platform } : {}),
    ...(run.host !== undefined ? { host: run.host } : {}),
    ...(run.context !== undefined ? { context: run.context } : {}),
    ...(run.about !== undefined ? { about: run.about } : {}),
  };
}

function diskperfSetup(meta: DiskperfSetupSource | undefined): Partial<Observation> {
  if (meta === undefined) return {};
  const setup: Record<string, string | number> = { ...(meta.parameters ?? {}) };
  if (meta.fileSizeBytes !== undefined) setup['file size'] = meta.fileSizeBytes;
  if (meta.testType !== undefined) setup['test type'] = meta.testType;
  return {
    ...(Object.keys(setup).length > 0 ? { setup } : {}),
    ...(meta.requestSizes ? { requestSizes: meta.requestSizes } : {}),
  };
}

/** A diskperf run as an observation (from a parsed run or a stored one). */
export function diskperfObservation(
  runId: string,
  device: string,
  rows: readonly { req_size: number; values: Partial<Record<Metric, number>> }[],
  run: RunFacts & { meta?: DiskperfSetupSource } = {},
): Observation {
  const values: Partial<Record<Metric, Map<number, number>>> = {};
  for (const row of rows)
    for (const [metric, v] of Object.entries(row.values) as [Metric, number][])
      (values[metric] ??= new Map()).set(row.req_size, v);
  return diskperfOf(runId, device, run, values);
}

/**
 * The same from a table column-wise (as the store packs it): request sizes, and each metric's
 * values by row (undefined: not measured).
 */
export function diskperfColumnsObservation(
  runId: string,
  device: string,
  sizes: readonly number[],
  columns: Partial<Record<DiskperfMetric, readonly (number | undefined)[]>>,
  run: RunFacts & { meta?: DiskperfSetupSource } = {},
): Observation {
  const values: Partial<Record<Metric, Map<number, number>>> = {};
  for (const [metric, column] of Object.entries(columns) as [DiskperfMetric, (number | undefined)[]][]) {
    const byReqSize = new Map<number, number>();
    for (let i = 0; i < sizes.length; i++) if (column[i] !== undefined) byReqSize.set(sizes[i]!, column[i]!);
    if (byReqSize.size > 0) values[metric] = byReqSize;
  }
  return diskperfOf(runId, device, run, values);
}

/**
 * An iostat series as an observation: the mean of each metric's summary.
 * `device` is the unit (`label/native`); `native` the name the log prints.
 */
export function iostatObservation(
  runId: string,
  device: string,
  summary: Partial<Record<Metric, { mean: number; count: number }>>,
  reports: number,
  run: RunFacts & { native?: string } = {},
): Observation {
  const values: Partial<Record<Metric, number>> = {};
  let samples = 0;
  for (const [metric, s] of Object.entries(summary) as [Metric, { mean: number; count: number }][]) {
    values[metric] = s.mean;
    samples = Math.max(samples, s.count);
  }
  const native =
    run.native ??
    (run.label !== undefined && device.startsWith(`${run.label}/`) ? device.slice(run.label.length + 1) : undefined);
  return {
    runId,
    device,
    ...(native !== undefined ? { native } : {}),
    format: 'iostat',
    ...facts(run),
    values,
    samples,
    ...(reports === 1 ? { sinceBootOnly: true } : {}),
  };
}

/** What a fio output's header says of how it ran: its jobs' options beside their points, and the fio. */
export interface FioSetupSource {
  options?: Record<string, string>;
  version?: string;
}

/** A fio run as an observation: each metric's values by point key; the label is the unit. */
export function fioObservation(
  runId: string,
  device: string,
  rows: readonly Pick<FioRow, 'point' | 'values'>[],
  run: RunFacts & { meta?: FioSetupSource } = {},
): Observation {
  const values: Partial<Record<FioMetric, Map<string, number>>> = {};
  for (const row of rows) {
    const key = fioPointKey(row.point);
    for (const [metric, v] of Object.entries(row.values) as [FioMetric, number][])
      (values[metric] ??= new Map()).set(key, v);
  }
  const setup: Record<string, string> = { ...(run.meta?.options ?? {}) };
  if (run.meta?.version !== undefined) setup['fio'] = run.meta.version;
  return {
    runId,
    device,
    label: device,
    format: 'fio',
    ...facts(run),
    ...(Object.keys(setup).length > 0 ? { setup } : {}),
    values,
  };
}

/** A diskperf run's observation: its values by request size, its facts and its setup. */
function diskperfOf(
  runId: string,
  device: string,
  run: RunFacts & { meta?: DiskperfSetupSource },
  values: Partial<Record<Metric, Map<number, number>>>,
): Observation {
  return {
    runId,
    device,
    label: device,
    format: 'diskperf',
    platform: 'irix',
    ...facts(run),
    ...diskperfSetup(run.meta),
    values,
  };
}
