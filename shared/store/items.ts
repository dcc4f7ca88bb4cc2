/**
 * What the store keeps: the item shapes of upload records, runs, their series,
 * tags and device labels (keys in keys.ts, the table in docs/table.md), and the
 * small builders of the items that are no more than their fields. Run items are
 * built in run-items.ts, packed values in packing.ts; an iostat run's samples
 * are an object in the results bucket (samples.ts), which its META names.
 */
import type { DiskperfRun, FioRun, IostatColumn, IostatRun, MetricSummary, Platform, Run } from '../model.ts';
import type { DiskperfMetric, IostatMetric } from '../metrics.ts';
import { UPLOAD_STATUSES, type UploadStatus } from '../upload-status.ts';
import { DEVICES_PK, deviceSk, pastStatusPk, runPk, statusPk, statusSk, tagKey, uploadPk, uploadSk } from './keys.ts';

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

export function uploadRecord(
  object: ObjectRef,
  status: UploadStatus,
  fields: Partial<Omit<UploadRecord, 'pk' | 'sk' | 'type' | 'status'>>,
  now: string,
): UploadRecord {
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
  summary: Partial<Record<IostatMetric, MetricSummary>>;
}

export interface RunItemBase {
  pk: string;
  sk: string;
  type: 'run';
  runId: string;
  index: number;
  format: Run['format'];
  /** Absent for fio: its outputs do not say which OS they ran on. */
  platform?: Platform;
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
 * One attribute per column instead of a map per row: the item is smaller, and
 * DynamoDB and a reader parse a few strings instead of many numbers in many maps
 * (a comparison reads every run of a device).
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

/** A run's samples object in the results bucket (samples-schema.ts), as its writer stored it. */
export interface SamplesObject {
  key: string;
  bytes: number;
  /** Samples in it: every sample of every series. */
  rows: number;
}

export interface IostatRunItem extends RunItemBase {
  format: 'iostat';
  /** Its samples object; absent when the run has no samples (or was stored before samples moved to S3). */
  samples?: SamplesObject;
  meta: IostatRun['meta'];
  columns: IostatColumn[];
  reports: number;
  seriesCount: number;
  /**
   * The series with their summaries, packed (packSeries), unless there are more
   * than MAX_SERIES_IN_META: then each has a SERIES item. Runs stored before
   * packing hold `series` and `seriesMeans` instead, and SERIES items too;
   * read any of them with storedSeriesOf() and seriesMeansOf().
   */
  packedSeries?: Uint8Array;
  series?: StoredSeries[];
  seriesMeans?: string;
  /**
   * Indexed under the upload's label too (its series are under `<label>/<native>`):
   * a selector naming the label reads its runs, summaries included, in one Query.
   * Absent on runs stored before (the lab indexes them when it starts).
   */
  gsi1pk?: string;
  gsi1sk?: string;
}

/**
 * A fio output: its table of points as the parser made it (FioRow), in the item itself.
 * fioRunItem refuses more than MAX_FIO_POINTS: the item stays well within DynamoDB's 400 KB.
 */
export interface FioRunItem extends RunItemBase {
  format: 'fio';
  meta: FioRun['meta'];
  columns: FioRun['columns'];
  points: FioRun['rows'];
  gsi1pk: string;
  gsi1sk: string;
}

/** Points one fio run may store: a sweep of 4 rw x 8 block sizes x 8 depths x 2 job counts fits. */
export const MAX_FIO_POINTS = 600;

export type RunItem = DiskperfRunItem | IostatRunItem | FioRunItem;
export type RunRecord = DiskperfRunRecord | Omit<IostatRunItem, 'packedSeries'> | FioRunItem;

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
 * reading them (the API's comparison answers, shared/compare/kept-answers.ts).
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
  return {
    pk: DEVICES_PK,
    sk: label,
    type: 'device',
    label,
    format,
    lastSeen: ingestedAt,
    changed: changeStamp(ingestedAt, version),
  };
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
