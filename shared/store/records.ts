/**
 * What the store keeps: the item shapes for upload records and runs, built from
 * the canonical records. Readers (the API) use the same types.
 */
import { DISKPERF_METRICS, type DiskperfMetric, type IostatMetric } from '../metrics.ts';
import type { DiskperfRun, IostatColumn, IostatRun, IostatSample, MetricSummary, Run } from '../model.ts';
import { seriesLabel } from '../labels.ts';
import { metricValues } from '../model.ts';
import { chunkSk, devicePk, DEVICES_PK, deviceSk, pastStatusPk, runPk, RUN_META_SK, seriesSk, statusPk, statusSk, tagKey, uploadPk, uploadSk } from './keys.ts';

/**
 * What became of an object version: `processing`, then `ready` (its runs) or
 * `failed`; `replaced` once a newer version of its key is current (its runs
 * removed), `deleted` once its key (or the version itself) was deleted.
 */
export const UPLOAD_STATUSES = ['processing', 'ready', 'failed', 'replaced', 'deleted'] as const;
export type UploadStatus = (typeof UPLOAD_STATUSES)[number];
/** The statuses a key's current state can have: a replaced version is history only. */
export const CURRENT_STATUSES = UPLOAD_STATUSES.filter((s) => s !== 'replaced');
/** The statuses a record that is history only can have: replaced, or a deleted key's older version. */
export const PAST_STATUSES = ['replaced', 'deleted'] as const satisfies readonly UploadStatus[];

/** The byStatus partition a record is listed under: its key's current state, or its history only. */
export function statusPartition(status: UploadStatus, current: boolean): string {
  return current && status !== 'replaced' ? statusPk(status) : pastStatusPk(status);
}

/** One S3 object version as the pipeline saw it. */
export interface ObjectRef {
  bucket: string;
  key: string;
  /** versionId, or the eTag for an unversioned bucket: part of every run id. */
  version: string;
  versionId?: string;
  eTag?: string;
  size?: number;
  sequencer?: string;
}

/** Run ids listed on an upload record; a file with more runs says how many in runCount. */
export const MAX_LISTED_RUNS = 100;
/** Series summaries kept in a run's META item; a run with more keeps them in its SERIES items only. */
export const MAX_SERIES_IN_META = 100;

export interface UploadRecord extends ObjectRef {
  pk: string;
  sk: string;
  type: 'upload';
  status: UploadStatus;
  /** The first MAX_LISTED_RUNS run ids (all of them are runIdsOf(bucket, key, version, runCount)). */
  runIds: string[];
  runCount: number;
  /**
   * What went wrong (failed) or became of it, for a person to act on: short, the
   * line said in it when there is one, never the key (printers say it).
   */
  message?: string;
  /** The line the message is about; 0 when not about a line (never printed). */
  line?: number;
  /** The whole text behind `message` (a parser's full explanation, the last error). */
  details?: string;
  /** Replaced: the version (as `version` names it) that replaced this one. */
  replacedBy?: string;
  format?: string;
  device?: string;
  tags?: Record<string, string>;
  warnings?: number;
  /** Processing: the delivery that holds the version (shared/store/uploads.ts). */
  claim?: string;
  /** Processing: runs whose items may exist (ids 0..startedRuns-1), to remove if it fails. */
  startedRuns?: number;
  /** Processing: the last transient error a delivery met, for the dead-letter handler to report. */
  lastError?: string;
  createdAt: string;
  updatedAt: string;
  gsi2pk: string;
  gsi2sk: string;
}

export function uploadRecord(object: ObjectRef, status: UploadStatus, fields: Partial<Omit<UploadRecord, 'pk' | 'sk' | 'type' | 'status'>>, now: string): UploadRecord {
  const { bucket, key, version } = object;
  return {
    ...object,
    runIds: [],
    runCount: 0,
    createdAt: now,
    ...fields,
    pk: uploadPk(bucket, key),
    sk: uploadSk(version),
    type: 'upload',
    status,
    updatedAt: now,
    gsi2pk: statusPartition(status, true),
    gsi2sk: statusSk(now, bucket, key, version),
  };
}

/** Summary of one iostat series as stored with its run. */
export interface StoredSeries {
  native: string;
  device: string;
  mount?: string;
  sampleCount: number;
  chunks: number;
  summary: Partial<Record<IostatMetric, MetricSummary>>;
}

interface RunItemBase {
  pk: string;
  sk: string;
  type: 'run';
  runId: string;
  index: number;
  format: Run['format'];
  platform: Run['platform'];
  dialect: string;
  /** The label of the run (diskperf) or of its object (iostat series add `/<native>`). */
  label: string;
  name: string;
  host?: string;
  tags: Record<string, string>;
  context: string[];
  startLine: number;
  endLine: number;
  warnings: Run['warnings'];
  source: ObjectRef;
  /** When the run was measured if the log says, else when it was ingested. */
  time: string;
  /**
   * The samples' own time range (a diskperf run: its start alone), as
   * samplesTime gives it; absent when the log prints no times.
   */
  from?: string;
  to?: string;
  ingestedAt: string;
}

/** A diskperf result table: the measured values per request size. */
export type DiskperfRows = { req_size: number; values: DiskperfRun['rows'][number]['values'] }[];

/**
 * A diskperf result table column-wise: the request sizes, and each metric's column,
 * as one string of space-separated numbers each (`-` where a row has no value).
 * Seven attributes instead of a map per row: a run item of 2.2 KB holds 0.5 KB of
 * table instead of 1.3 KB, and DynamoDB and a reader parse seven strings instead
 * of 77 numbers in 22 maps (a comparison reads every run of a device).
 */
export interface PackedRows {
  req_size: string;
  values: Partial<Record<DiskperfMetric, string>>;
}

export interface DiskperfRunItem extends RunItemBase {
  format: 'diskperf';
  meta: DiskperfRun['meta'];
  columns: DiskperfRun['columns'];
  /** The table, packed (packRows); items written before packing hold `rows` instead: read both with diskperfRows(). */
  packedRows?: PackedRows;
  rows?: DiskperfRows;
  gsi1pk: string;
  gsi1sk: string;
}

/** A diskperf run as readers hand it out (GET /runs/{id}): its table as rows, however it is stored. */
export type DiskperfRunRecord = Omit<DiskperfRunItem, 'packedRows' | 'rows'> & { rows: DiskperfRows };

export interface IostatRunItem extends RunItemBase {
  format: 'iostat';
  meta: IostatRun['meta'];
  columns: IostatColumn[];
  reports: number;
  seriesCount: number;
  /** The series with their summaries, unless there are more than MAX_SERIES_IN_META. */
  series?: StoredSeries[];
  /** The same series' means and counts, packed (packSeriesMeans): what a comparison reads of them. */
  seriesMeans?: string;
  /**
   * Indexed under the upload's label too (its series are under `<label>/<native>`):
   * a selector naming the label reads its runs, summaries included, in one Query.
   * Absent on runs stored before (the lab indexes them when it starts).
   */
  gsi1pk?: string;
  gsi1sk?: string;
}

export type RunItem = DiskperfRunItem | IostatRunItem;
export type RunRecord = DiskperfRunRecord | IostatRunItem;

/** The index entry of one iostat series: found by device, it points at its run. */
export interface SeriesItem {
  pk: string;
  sk: string;
  type: 'series';
  runId: string;
  device: string;
  native: string;
  format: 'iostat';
  tags: Record<string, string>;
  host?: string;
  time: string;
  sampleCount: number;
  summary: StoredSeries['summary'];
  gsi1pk: string;
  gsi1sk: string;
}

/**
 * One tag of a run, in the run's partition (so deleting the run deletes it) and
 * indexed by tag: a tag selector reads the runs that carry the tag, not every
 * device's. It names the run and what a selector can check before reading it.
 */
export interface TagItem {
  pk: string;
  sk: string;
  type: 'tag';
  runId: string;
  format: Run['format'];
  /** The run's label (iostat series are `<label>/<native>`). */
  label: string;
  host?: string;
  /** Every tag of the run, for the selector's other tag terms. */
  tags: Record<string, string>;
  time: string;
  gsi3pk: string;
  gsi3sk: string;
}

/** The TAG items of a run (none for an untagged one): written with its index entries, before its META. */
export function runTagItems(run: RunItem): TagItem[] {
  return Object.entries(run.tags).map(([key, value]) => ({
    pk: runPk(run.runId),
    sk: tagKey(key, value),
    type: 'tag',
    runId: run.runId,
    format: run.format,
    label: run.label,
    ...(run.host !== undefined ? { host: run.host } : {}),
    tags: run.tags,
    time: run.time,
    gsi3pk: tagKey(key, value),
    gsi3sk: deviceSk(run.time, run.runId),
  }));
}

/**
 * A device label that has runs (GET /devices), and its change stamp: every write
 * that changes which complete runs the label's byDevice entries name (runs
 * added by an upload, runs removed by a replacement or a delete) sets
 * `changed` to a value no earlier write set, after that write. A reader that
 * finds the same stamp as before knows the label's runs are the same, without
 * reading them (the API's comparison answers, shared/comparison/kept-answers.ts).
 */
export interface DeviceItem {
  pk: typeof DEVICES_PK;
  sk: string;
  type: 'device';
  label: string;
  format: Run['format'];
  lastSeen: string;
  changed: string;
}

/**
 * A stamp no other write gives: the time, and what was written (an object
 * version; the first of the runs removed). A redelivered upload gives a new
 * one (a new time), which only costs readers one recomputation.
 */
export const changeStamp = (at: string, what: string) => `${at} ${what}`;

/** When a change stamp was given, in epoch ms (NaN when it does not say). */
export const stampTime = (stamp: string) => Date.parse(stamp.slice(0, stamp.indexOf(' ')));

/** The DEVICES item an upload writes for each label it gave runs, after their METAs. */
export function deviceItem(label: string, format: Run['format'], ingestedAt: string, version: string): DeviceItem {
  return { pk: DEVICES_PK, sk: label, type: 'device', label, format, lastSeen: ingestedAt, changed: changeStamp(ingestedAt, version) };
}

/**
 * Samples of one series, column-wise and packed: each printed column is one string
 * of space-separated numbers (`-` where the report did not print it). One
 * attribute per column instead of a number per value keeps chunks small and cheap
 * to write; canonical values are derived on read (chunkSamples), by the same rule
 * the parser uses.
 */
export interface ChunkItem {
  pk: string;
  sk: string;
  type: 'chunk';
  runId: string;
  native: string;
  first: number;
  count: number;
  reports: string;
  lines: string;
  /** Report times as a JSON array (null for none), when the log prints them. */
  times?: string;
  /** The first sample counts since boot (only a run's first chunk can start with one). */
  sinceBootFirst: boolean;
  raw: Record<string, string>;
}

const MISSING = '-';

const POW10 = [1, 10, 100, 1000];

/**
 * String(v), faster for what iostat prints (non-negative, at most 3 decimals): v is
 * k / 10^d for the smallest such d, and the text is k's digits with the point put
 * back. Division is correctly rounded, so k / 10^d === v means the text parses back
 * to v, and below 1e9 no shorter text does: the same text String() gives.
 */
export function numberText(v: number): string {
  if (v >= 0 && v < 1e9) {
    if (Number.isInteger(v)) return String(v);
    for (let d = 1; d <= 3; d++) {
      const k = Math.round(v * POW10[d]!);
      if (k / POW10[d]! === v) {
        const digits = String(k);
        const cut = digits.length - d;
        return cut > 0 ? `${digits.slice(0, cut)}.${digits.slice(cut)}` : `0.${'0'.repeat(-cut)}${digits}`;
      }
    }
  }
  return String(v);
}

/**
 * The first `count` values as one string (`-` for a hole or a non-finite value).
 * Joined from an array, not concatenated: a flat string, which the SDK's JSON
 * writer reads character by character (ropes of 250 parts made that writer the
 * ingest path's hottest function).
 */
function packValues(values: readonly (number | undefined)[], count: number): string {
  const parts = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    const v = values[i];
    parts[i] = v === undefined || !Number.isFinite(v) ? MISSING : numberText(v);
  }
  return parts.join(' ');
}

const unpack = (text: string) => text.split(' ').map((t) => (t === MISSING ? undefined : Number(t)));

/** What a comparison reads of a series: its names and each metric's mean and sample count. */
export type SeriesMeans = Pick<StoredSeries, 'native' | 'device'> & { summary: Partial<Record<IostatMetric, { mean: number; count: number }>> };

/**
 * A run's series means as one string, `[[native, {metric: [mean, count]}], ...]`
 * in JSON. A comparison reading 20 runs of 3 disks unmarshals 20 strings instead
 * of 3,600 numbers in nested maps, which the SDK takes several ms of CPU for.
 */
export function packSeriesMeans(series: readonly Pick<StoredSeries, 'native' | 'summary'>[]): string {
  return JSON.stringify(series.map((s) => [s.native, Object.fromEntries(Object.entries(s.summary).map(([m, v]) => [m, [v.mean, v.count]]))]));
}

/** The series of a run filed under `label`, from packSeriesMeans. */
export function unpackSeriesMeans(packed: string, label: string): SeriesMeans[] {
  return (JSON.parse(packed) as [string, Record<string, [number, number]>][]).map(([native, means]) => ({
    native,
    device: seriesLabel(label, native),
    summary: Object.fromEntries(Object.entries(means).map(([m, [mean, count]]) => [m, { mean, count }])),
  }));
}

export function packRows(rows: DiskperfRows): PackedRows {
  const values: PackedRows['values'] = {};
  for (const metric of DISKPERF_METRICS) {
    if (rows.some((r) => r.values[metric] !== undefined)) values[metric] = packValues(rows.map((r) => r.values[metric]), rows.length);
  }
  return { req_size: packValues(rows.map((r) => r.req_size), rows.length), values };
}

/** A packed table's columns: the request sizes, and each metric's values by row (undefined where a row has none). */
export function unpackRows(packed: PackedRows): { sizes: number[]; columns: Partial<Record<DiskperfMetric, (number | undefined)[]>> } {
  const columns: Partial<Record<DiskperfMetric, (number | undefined)[]>> = {};
  for (const [metric, column] of Object.entries(packed.values)) columns[metric as DiskperfMetric] = unpack(column!);
  return { sizes: packed.req_size === '' ? [] : (unpack(packed.req_size) as number[]), columns };
}

/** The table of a stored diskperf run, packed or (written before packing) not. */
export function diskperfRows(item: Pick<DiskperfRunItem, 'packedRows' | 'rows'>): DiskperfRows {
  if (item.packedRows === undefined) return item.rows ?? [];
  const { sizes, columns } = unpackRows(item.packedRows);
  const entries = Object.entries(columns) as [DiskperfMetric, (number | undefined)[]][];
  return sizes.map((reqSize, i) => {
    const values: DiskperfRows[number]['values'] = {};
    for (const [metric, column] of entries) if (column[i] !== undefined) values[metric] = column[i];
    return { req_size: reqSize, values };
  });
}

/** A stored run as readers hand it out: a diskperf table as rows. */
export function runRecord(item: RunItem): RunRecord {
  if (item.format !== 'diskperf') return item;
  const { packedRows: _packed, rows: _rows, ...rest } = item;
  return { ...rest, rows: diskperfRows(item) };
}

/** The samples of a stored chunk, with canonical values from the run's columns. */
export function chunkSamples(chunk: ChunkItem, columns: readonly IostatColumn[]): IostatSample[] {
  const reports = unpack(chunk.reports);
  const lines = unpack(chunk.lines);
  const times = chunk.times === undefined ? undefined : (JSON.parse(chunk.times) as (string | null)[]);
  const raw = Object.entries(chunk.raw).map(([name, packed]) => [name, unpack(packed)] as const);
  return reports.map((report, i) => {
    const printed: Record<string, number> = {};
    for (const [name, values] of raw) if (values[i] !== undefined) printed[name] = values[i]!;
    const sample: IostatSample = { report: report!, line: lines[i]!, sinceBoot: i === 0 && chunk.sinceBootFirst, values: metricValues(columns, printed), raw: printed };
    const time = times?.[i];
    if (time) sample.time = time;
    return sample;
  });
}

export interface RunContext {
  runId: string;
  label: string;
  tags: Record<string, string>;
  source: ObjectRef;
  ingestedAt: string;
}

/** The first and last time of a run's samples (TimeSpan.to absent: it has one time). */
export interface TimeSpan {
  from: string;
  to?: string;
}

/**
 * A time of the log as a listing shows it: in UTC when the log gave a zone or
 * an offset (so times of different labs compare), else as printed, with no
 * zone (the measuring host's clock, which the log does not place).
 */
export function samplesTime(iso: string): string {
  if (!/(Z|[+-]\d{2}:\d{2})$/.test(iso)) return iso;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** The span of these times (in samplesTime form; undefined ones skipped), or undefined when there are none. */
export function spanOf(times: Iterable<string | undefined>): TimeSpan | undefined {
  let from: string | undefined;
  let to: string | undefined;
  for (const time of times) {
    if (time === undefined) continue;
    const t = samplesTime(time);
    if (from === undefined || t < from) from = t;
    if (to === undefined || t > to) to = t;
  }
  if (from === undefined) return undefined;
  return to !== from ? { from, to: to! } : { from };
}

/** The span of several (the series of one run). */
export const joinSpans = (spans: Iterable<TimeSpan | undefined>) => spanOf([...spans].flatMap((s) => (s === undefined ? [] : [s.from, s.to])));

function* sampleTimes(run: IostatRun): Generator<string | undefined> {
  for (const series of run.series) for (const sample of series.samples ?? []) yield sample.time;
}

const spanFields = (span: TimeSpan | undefined) => (span === undefined ? {} : { from: span.from, ...(span.to !== undefined ? { to: span.to } : {}) });

function base(run: Run, ctx: RunContext): Omit<RunItemBase, 'format' | 'platform'> {
  const host = run.meta.host;
  const startedAt = run.format === 'diskperf' ? run.meta.startedAt : undefined;
  return {
    pk: runPk(ctx.runId),
    sk: RUN_META_SK,
    type: 'run',
    runId: ctx.runId,
    index: run.index,
    dialect: run.dialect,
    label: ctx.label,
    name: run.name,
    ...(host !== undefined ? { host } : {}),
    tags: ctx.tags,
    context: run.context,
    startLine: run.startLine,
    endLine: run.endLine,
    warnings: run.warnings,
    source: ctx.source,
    time: startedAt ?? ctx.ingestedAt,
    ...spanFields(spanOf([startedAt])),
    ingestedAt: ctx.ingestedAt,
  };
}

export function diskperfRunItem(run: DiskperfRun, ctx: RunContext): DiskperfRunItem {
  const item = base(run, ctx);
  return {
    ...item,
    format: 'diskperf',
    platform: 'irix',
    meta: run.meta,
    columns: run.columns,
    packedRows: packRows(run.rows),
    gsi1pk: devicePk(ctx.label),
    gsi1sk: deviceSk(item.time, ctx.runId),
  };
}

/**
 * `span`: the samples' time range when they streamed past (ChunkBuilder.span
 * of each series, joined with joinSpans); without it, taken from the samples
 * the run holds.
 */
export function iostatRunItem(
  run: IostatRun,
  ctx: RunContext,
  chunksOf: (native: string) => number,
  span = spanOf(sampleTimes(run)),
): { run: IostatRunItem; series: SeriesItem[] } {
  const item = base(run, ctx);
  const firstTime = run.series.find((s) => s.samples?.[0]?.time)?.samples?.[0]?.time;
  const time = firstTime ?? span?.from ?? item.time;
  const stored: StoredSeries[] = run.series.map((s) => ({
    native: s.device,
    device: seriesLabel(ctx.label, s.device),
    ...(s.mount !== undefined ? { mount: s.mount } : {}),
    sampleCount: s.sampleCount,
    chunks: chunksOf(s.device),
    summary: s.summary,
  }));
  const runItem: IostatRunItem = {
    ...item,
    time,
    ...spanFields(span),
    format: 'iostat',
    platform: run.platform,
    meta: run.meta,
    columns: run.columns,
    reports: run.reports,
    seriesCount: stored.length,
    // A file of thousands of devices would outgrow an item: its summaries stay in the SERIES items.
    ...(stored.length <= MAX_SERIES_IN_META ? { series: stored, seriesMeans: packSeriesMeans(stored) } : {}),
    gsi1pk: devicePk(ctx.label),
    gsi1sk: deviceSk(time, ctx.runId),
  };
  const series = stored.map(
    (s): SeriesItem => ({
      pk: runPk(ctx.runId),
      sk: seriesSk(s.native),
      type: 'series',
      runId: ctx.runId,
      device: s.device,
      native: s.native,
      format: 'iostat',
      tags: ctx.tags,
      ...(item.host !== undefined ? { host: item.host } : {}),
      time,
      sampleCount: s.sampleCount,
      summary: s.summary,
      gsi1pk: devicePk(s.device),
      gsi1sk: deviceSk(time, ctx.runId),
    }),
  );
  return { run: runItem, series };
}

/**
 * Collects a series' samples into chunk items of CHUNK_SAMPLES, column by column
 * as they arrive: a sample object is dropped as soon as it is added, so the
 * hundreds of thousands a long log streams die young instead of waiting in a
 * chunk (on a 40 MB Solaris log this halved the CPU time of parsing plus
 * chunking; most of the difference was garbage collection).
 */
export class ChunkBuilder {
  private count = 0;
  private first = 0;
  private sinceBootFirst = false;
  private reports: number[] = [];
  private lines: number[] = [];
  /** Per sample, from the first sample that has a time (undefined before it). */
  private times: (string | undefined)[] | undefined;
  /** The first and last sample time over every chunk (log order is time order): the series' span. */
  private firstTime: string | undefined;
  private lastTime: string | undefined;
  /** Printed columns in order of first appearance; a sample without the column leaves a hole. */
  private columns = new Map<string, (number | undefined)[]>();
  chunks = 0;

  constructor(
    readonly runId: string,
    readonly native: string,
    private readonly size: number,
  ) {}

  /** Add a sample; returns a full chunk item when one is complete. */
  add(sample: IostatSample): ChunkItem | undefined {
    const i = this.count++;
    if (i === 0) {
      this.first = sample.report;
      this.sinceBootFirst = sample.sinceBoot;
    }
    this.reports.push(sample.report);
    this.lines.push(sample.line);
    if (sample.time !== undefined) {
      (this.times ??= [])[i] = sample.time;
      this.firstTime ??= sample.time;
      this.lastTime = sample.time;
    }
    const raw = sample.raw;
    for (const name in raw) {
      let values = this.columns.get(name);
      if (values === undefined) this.columns.set(name, (values = []));
      values[i] = raw[name];
    }
    return this.count >= this.size ? this.take() : undefined;
  }

  /** The time range of every sample added (for iostatRunItem, through joinSpans). */
  get span(): TimeSpan | undefined {
    return spanOf([this.firstTime, this.lastTime]);
  }

  /** The last, partial chunk, if any. */
  finish(): ChunkItem | undefined {
    return this.count > 0 ? this.take() : undefined;
  }

  private take(): ChunkItem {
    const count = this.count;
    const raw: ChunkItem['raw'] = {};
    for (const [name, values] of this.columns) raw[name] = packValues(values, count);
    const times = this.times;
    const item: ChunkItem = {
      pk: runPk(this.runId),
      sk: chunkSk(this.native, this.chunks),
      type: 'chunk',
      runId: this.runId,
      native: this.native,
      first: this.first,
      count,
      reports: packValues(this.reports, count),
      lines: packValues(this.lines, count),
      ...(times !== undefined ? { times: JSON.stringify(Array.from({ length: count }, (_, i) => times[i] ?? null)) } : {}),
      sinceBootFirst: this.sinceBootFirst,
      raw,
    };
    this.chunks++;
    this.count = 0;
    this.reports = [];
    this.lines = [];
    this.times = undefined;
    this.columns = new Map();
    return item;
  }
}
