/**
 * The number codec of the store: numbers as packed text (space-separated, `-`
 * for a hole), diskperf tables column-wise, an iostat run's series (with their
 * summaries) as one compressed attribute, and, in runs stored before, their
 * means as one string. Packed attributes keep items small and cheap to write and to read.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { DISKPERF_METRICS, type DiskperfMetric, type IostatMetric } from '../metrics.ts';
import { seriesLabel } from '../labels.ts';
import type {
  DiskperfRows,
  DiskperfRunItem,
  IostatRunItem,
  PackedRows,
  RunItem,
  RunRecord,
  StoredSeries,
} from './items.ts';

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
 * writer reads character by character (a rope of a chunk's parts made that
 * writer the ingest path's hottest function).
 */
export function packValues(values: readonly (number | undefined)[], count: number): string {
  const parts = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    const v = values[i];
    parts[i] = v === undefined || !Number.isFinite(v) ? MISSING : numberText(v);
  }
  return parts.join(' ');
}

/** Packed values back: numbers, undefined for a hole. */
export const unpackValues = (text: string) => text.split(' ').map((t) => (t === MISSING ? undefined : Number(t)));

/** What a comparison reads of a series: its names and each metric's mean and sample count. */
export type SeriesMeans = Pick<StoredSeries, 'native' | 'device'> & {
  summary: Partial<Record<IostatMetric, { mean: number; count: number }>>;
};

/**
 * A run's series means as one string, `[[native, {metric: [mean, count]}], ...]`
 * in JSON. A comparison reading many runs unmarshals one string per run instead
 * of every number in nested maps, which costs the SDK far more CPU.
 */
export function packSeriesMeans(series: readonly Pick<StoredSeries, 'native' | 'summary'>[]): string {
  return JSON.stringify(
    series.map((s) => [
      s.native,
      Object.fromEntries(Object.entries(s.summary).map(([m, v]) => [m, [v.mean, v.count]])),
    ]),
  );
}

/**
 * A run's series, summaries and all, as one gzip-compressed JSON binary: the
 * META's largest part, a third of its write units or less (BENCHMARKS.md, write cost).
 */
export const packSeries = (series: readonly StoredSeries[]): Uint8Array =>
  new Uint8Array(gzipSync(JSON.stringify(series)));

/** Packed series already read, by their bytes: a request that reaches one META twice unpacks it once. */
const unpacked = new WeakMap<Uint8Array, readonly StoredSeries[]>();

/** The series a run's META holds (packed, or as written before packing); undefined when it holds none. Read only. */
export function storedSeriesOf(
  item: Pick<IostatRunItem, 'packedSeries' | 'series'>,
): readonly StoredSeries[] | undefined {
  const packed = item.packedSeries;
  if (packed === undefined) return item.series;
  let series = unpacked.get(packed);
  if (series === undefined) {
    series = JSON.parse(gunzipSync(packed).toString('utf8')) as StoredSeries[];
    unpacked.set(packed, series);
  }
  return series;
}

/** What a comparison reads of the series a run's META holds; undefined when it holds none (SERIES items do). */
export function seriesMeansOf(
  item: Pick<IostatRunItem, 'packedSeries' | 'seriesMeans' | 'label'>,
): SeriesMeans[] | undefined {
  if (item.packedSeries !== undefined)
    return storedSeriesOf(item)!.map((s) => ({ native: s.native, device: s.device, summary: s.summary }));
  return item.seriesMeans !== undefined ? unpackSeriesMeans(item.seriesMeans, item.label) : undefined;
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
    if (rows.some((r) => r.values[metric] !== undefined))
      values[metric] = packValues(
        rows.map((r) => r.values[metric]),
        rows.length,
      );
  }
  return {
    req_size: packValues(
      rows.map((r) => r.req_size),
      rows.length,
    ),
    values,
  };
}

/** A packed table's columns: the request sizes, and each metric's values by row (undefined where a row has none). */
export function unpackRows(packed: PackedRows): {
  sizes: number[];
  columns: Partial<Record<DiskperfMetric, (number | undefined)[]>>;
} {
  const columns: Partial<Record<DiskperfMetric, (number | undefined)[]>> = {};
  for (const [metric, column] of Object.entries(packed.values))
    columns[metric as DiskperfMetric] = unpackValues(column!);
  return { sizes: packed.req_size === '' ? [] : (unpackValues(packed.req_size) as number[]), columns };
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

/** A stored run as readers hand it out: a diskperf table as rows, an iostat run's series unpacked. */
export function runRecord(item: RunItem): RunRecord {
  if (item.format === 'fio') return item;
  if (item.format !== 'diskperf') {
    if (item.packedSeries === undefined) return item;
    const { packedSeries: _packed, ...rest } = item;
    return { ...rest, series: storedSeriesOf(item)!.slice() };
  }
  const { packedRows: _packed, rows: _rows, ...rest } = item;
  return { ...rest, rows: diskperfRows(item) };
}
