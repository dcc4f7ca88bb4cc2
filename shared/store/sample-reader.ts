/**
 * Reads one series of one metric from a run's samples object (the Parquet file
 * samples-schema.ts describes) straight from S3: ranged GetObjects, the footer
 * read once per object and kept (objects never change: a run id names its
 * object version), the row groups of the series found by the `series` column's
 * statistics, and only the columns report, time, since_boot and the metric read.
 *
 *   readSeries(file, 'sda', 'util_pct', { start: 4096, limit: 10000 })
 *     -> { reports: [4096, ...], times: ['2026-11-02T10:05:40', ...], sinceBoot: [false, ...],
 *          values: [99.0, null, ...], next: 14096 }
 *
 * A page is the series' samples from report `start` on (the first report at or
 * after it), at most `limit` of them; `next` is the `start` of the following
 * page, absent on the last.
 */
import { GetObjectCommand, HeadObjectCommand, NoSuchKey, NotFound, type S3Client } from '@aws-sdk/client-s3';
import { parquetMetadataAsync, parquetRead, type AsyncBuffer, type FileMetaData, type RowGroup } from 'hyparquet';
import type { IostatMetric } from '../metrics.ts';
import { samplesDecompressors } from './samples-schema.ts';

/** One series' page of one metric: the columns side by side, a sample per index. */
export interface SeriesSamples {
  reports: number[];
  times: (string | null)[];
  sinceBoot: boolean[];
  values: (number | null)[];
  /** The `start` of the following page; absent when this page ends the series. */
  next?: number;
}

/** A row group of one series: where its rows are in the file, and its reports when its statistics say. */
export interface SeriesGroup {
  /** The file's row number of the group's first row. */
  rowStart: number;
  rows: number;
  /** The group's last report (statistics), when written. */
  lastReport?: number;
}

/** What is kept of one object: its size, its footer, and each series' row groups in report order. */
export interface SamplesFile {
  bucket: string;
  key: string;
  byteLength: number;
  metadata: FileMetaData;
  groups: ReadonlyMap<string, readonly SeriesGroup[]>;
}

/** Objects whose footer is kept (each a few tens of kB at most: a footer and the series' groups). */
export const KEPT_FILES = 64;
/** The footer is read with one GET of this many bytes from the end; a larger one costs a second. */
const FOOTER_FETCH_BYTES = 64 * 1024;

/** The bytes [start, end) of an S3 object, each slice one ranged GetObject. */
export function s3AsyncBuffer(s3: S3Client, bucket: string, key: string, byteLength: number): AsyncBuffer {
  return {
    byteLength,
    async slice(start: number, end = byteLength): Promise<ArrayBuffer> {
      if (end <= start) return new ArrayBuffer(0);
      const answer = await s3.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end - 1}` }),
      );
      const bytes = await answer.Body!.transformToByteArray();
      if (bytes.byteLength !== end - start)
        throw new Error(`s3://${bucket}/${key}: asked for bytes ${start}-${end - 1}, got ${bytes.byteLength}`);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
  };
}

/** Most recently used last: a Map keeps insertion order, so the first key is the one to drop. */
const kept = new Map<string, Promise<SamplesFile>>();

/**
 * The samples object at bucket/key, its footer read (or kept from an earlier
 * call); undefined when there is no such object. `byteLength`, when the caller
 * knows it, saves the HeadObject.
 */
export async function openSamples(
  s3: S3Client,
  bucket: string,
  key: string,
  byteLength?: number,
): Promise<SamplesFile | undefined> {
  const id = `${bucket}\u0000${key}`;
  let reading = kept.get(id);
  if (reading !== undefined) kept.delete(id);
  else {
    const size = byteLength ?? (await objectSize(s3, bucket, key));
    if (size === undefined) return undefined;
    reading = readFooter(s3, bucket, key, size);
  }
  kept.set(id, reading);
  while (kept.size > KEPT_FILES) kept.delete(kept.keys().next().value!);
  try {
    return await reading;
  } catch (error) {
    // A failed read is not kept: the next request tries again.
    if (kept.get(id) === reading) kept.delete(id);
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** Forget every kept footer (tests that rewrite an object under the same key). */
export function forgetSamples(): void {
  kept.clear();
}

async function objectSize(s3: S3Client, bucket: string, key: string): Promise<number | undefined> {
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return head.ContentLength;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

const isMissing = (error: unknown) =>
  error instanceof NotFound ||
  error instanceof NoSuchKey ||
  ['NotFound', 'NoSuchKey'].includes((error as { name?: string })?.name ?? '');

async function readFooter(s3: S3Client, bucket: string, key: string, byteLength: number): Promise<SamplesFile> {
  const buffer = s3AsyncBuffer(s3, bucket, key, byteLength);
  const metadata = await parquetMetadataAsync(buffer, { initialFetchSize: FOOTER_FETCH_BYTES });
  return { bucket, key, byteLength, metadata, groups: await seriesGroups(buffer, metadata) };
}

/**
 * Each series' row groups, in file (so report) order. A group's series is its
 * `series` statistics when exact; the writer truncates long strings there
 * (then min and max differ), and such a group's first value is read instead.
 */
async function seriesGroups(buffer: AsyncBuffer, metadata: FileMetaData): Promise<Map<string, SeriesGroup[]>> {
  const seriesColumn = columnIndex(metadata, 'series');
  const reportColumn = columnIndex(metadata, 'report');
  let rowStart = 0;
  const found = metadata.row_groups.map((group) => {
    const rows = Number(group.num_rows);
    const at = rowStart;
    rowStart += rows;
    const series = exactString(group, seriesColumn) ?? firstSeries(buffer, metadata, at);
    const lastReport = group.columns[reportColumn]?.meta_data?.statistics?.max_value;
    return {
      series,
      group: { rowStart: at, rows, ...(typeof lastReport === 'number' ? { lastReport } : {}) },
    };
  });
  const names = await Promise.all(found.map((f) => f.series));
  const groups = new Map<string, SeriesGroup[]>();
  found.forEach(({ group }, i) => {
    if (group.rows === 0) return;
    const list = groups.get(names[i]!);
    if (list) list.push(group);
    else groups.set(names[i]!, [group]);
  });
  return groups;
}

function columnIndex(metadata: FileMetaData, name: string): number {
  // The schema's first element is the root; its children are the columns, in chunk order.
  const index = metadata.schema.slice(1).findIndex((element) => element.name === name);
  if (index < 0) throw new Error(`not a samples object: it has no ${name} column`);
  return index;
}

/** The group's one value of a string column, when its statistics hold it exactly. */
function exactString(group: RowGroup, column: number): string | undefined {
  const stats = group.columns[column]?.meta_data?.statistics;
  const min = stats?.min_value ?? stats?.min;
  const max = stats?.max_value ?? stats?.max;
  const exact = stats?.is_min_value_exact !== false && stats?.is_max_value_exact !== false;
  return typeof min === 'string' && min === max && exact ? min : undefined;
}

async function firstSeries(buffer: AsyncBuffer, metadata: FileMetaData, row: number): Promise<string> {
  const [value] = await readColumns(buffer, metadata, ['series'], row, row + 1).then((columns) => columns.series!);
  if (typeof value !== 'string') throw new Error(`not a samples object: row ${row} has no series`);
  return value;
}

/** The named columns of rows [rowStart, rowEnd), as plain arrays. */
async function readColumns(
  file: AsyncBuffer,
  metadata: FileMetaData,
  columns: string[],
  rowStart: number,
  rowEnd: number,
): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = Object.fromEntries(columns.map((c) => [c, new Array(rowEnd - rowStart)]));
  await parquetRead({
    file,
    metadata,
    columns,
    rowStart,
    rowEnd,
    compressors: samplesDecompressors,
    // A chunk may hold rows outside the range asked for: only those inside are kept.
    onChunk: ({ columnName, columnData, rowStart: from }) => {
      const target = out[columnName]!;
      for (let i = Math.max(rowStart - from, 0); i < columnData.length && from + i < rowEnd; i++)
        target[from + i - rowStart] = columnData[i];
    },
  });
  return out;
}

/** The series' names, in the order their first row group comes in the file. */
export const seriesNames = (file: SamplesFile): string[] => [...file.groups.keys()];

export interface PageRequest {
  /** The first report wanted (0 is the series' first). */
  start: number;
  /** Samples at most. */
  limit: number;
}

/**
 * One page of one series' metric (undefined: the object has no such series).
 * Only the row groups the page can reach are read, all at once.
 */
export async function readSeries(
  s3: S3Client,
  file: SamplesFile,
  series: string,
  metric: IostatMetric,
  page: PageRequest,
): Promise<SeriesSamples | undefined> {
  const all = file.groups.get(series);
  if (all === undefined) return undefined;
  // Groups wholly before `start` are skipped by their statistics; after that,
  // enough groups to hold `limit` rows even if the first starts before `start`.
  const from = all.findIndex((g) => g.lastReport === undefined || g.lastReport >= page.start);
  const candidates = from < 0 ? [] : all.slice(from);
  const reach = groupsFor(candidates, page.limit);
  const columns = ['report', 'time', 'since_boot', metric];
  const buffer = prefetched(
    s3AsyncBuffer(s3, file.bucket, file.key, file.byteLength),
    reach.map((g) => groupSpan(file.metadata, g, columns)),
  );
  const read = await Promise.all(
    reach.map((g) => readColumns(buffer, file.metadata, columns, g.rowStart, g.rowStart + g.rows)),
  );
  const { samples, more } = takePage(read, metric, page);
  const last = samples.reports.at(-1);
  const following = more || reach.length < candidates.length;
  return following && last !== undefined ? { ...samples, next: last + 1 } : samples;
}

interface ByteSpan {
  start: number;
  end: number;
}

/** The bytes of a group's chunks of these columns, first to last (the columns between come along). */
function groupSpan(metadata: FileMetaData, group: SeriesGroup, columns: readonly string[]): ByteSpan {
  const rowGroup = rowGroupAt(metadata, group.rowStart);
  let start = Infinity;
  let end = 0;
  for (const chunk of rowGroup.columns) {
    const meta = chunk.meta_data;
    if (meta === undefined || !columns.includes(meta.path_in_schema[0]!)) continue;
    const from = Number(meta.dictionary_page_offset || meta.data_page_offset);
    start = Math.min(start, from);
    end = Math.max(end, from + Number(meta.total_compressed_size));
  }
  return { start, end };
}

function rowGroupAt(metadata: FileMetaData, rowStart: number): RowGroup {
  let at = 0;
  for (const group of metadata.row_groups) {
    if (at === rowStart) return group;
    at += Number(group.num_rows);
  }
  throw new Error(`no row group starts at row ${rowStart}`);
}

/**
 * The buffer with these spans asked for at once, one GET each: the reader's
 * slices of them (a chunk, a page) are cut from what came. A group's columns
 * are a small object's neighbours (a few hundred kB at most), so one request
 * for all of them costs less than one per column (each GET waits its own
 * first byte); anything else is read as asked.
 */
function prefetched(file: AsyncBuffer, spans: readonly ByteSpan[]): AsyncBuffer {
  const fetched = spans.map((span) => ({ span, bytes: Promise.resolve(file.slice(span.start, span.end)) }));
  // A failed GET fails the slices cut from it; one nothing was cut from yet must not go unhandled.
  for (const { bytes } of fetched) bytes.catch(() => {});
  return {
    byteLength: file.byteLength,
    slice(start: number, end = file.byteLength) {
      const hit = fetched.find(({ span }) => span.start <= start && end <= span.end);
      if (hit === undefined) return file.slice(start, end);
      return hit.bytes.then((bytes) => bytes.slice(start - hit.span.start, end - hit.span.start));
    },
  };
}

/** The leading groups whose rows, less the first group's (it may start before `start`), reach `limit`. */
function groupsFor(groups: readonly SeriesGroup[], limit: number): SeriesGroup[] {
  const taken: SeriesGroup[] = [];
  let rows = 0;
  for (const group of groups) {
    taken.push(group);
    if (taken.length > 1) rows += group.rows;
    if (rows >= limit) break;
  }
  return taken;
}

/** The rows of the groups read, from report `start` on, at most `limit`; `more` when rows were left. */
function takePage(
  groups: Record<string, unknown[]>[],
  metric: string,
  page: PageRequest,
): { samples: SeriesSamples; more: boolean } {
  const samples: SeriesSamples = { reports: [], times: [], sinceBoot: [], values: [] };
  for (const group of groups) {
    const reports = group.report as number[];
    for (let i = 0; i < reports.length; i++) {
      if (reports[i]! < page.start) continue;
      if (samples.reports.length === page.limit) return { samples, more: true };
      samples.reports.push(reports[i]!);
      samples.times.push((group.time![i] as string | null | undefined) ?? null);
      samples.sinceBoot.push(group.since_boot![i] === true);
      samples.values.push(numberOrNull(group[metric]![i]));
    }
  }
  return { samples, more: false };
}

/** A DOUBLE as JSON can carry it: null where the log printed none (or NaN, which JSON cannot hold). */
const numberOrNull = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;
