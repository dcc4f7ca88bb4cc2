/**
 * The samples object of an iostat run: one Parquet file (GZIP-compressed
 * columns, plain-encoded) per run, in the lab's results bucket under `samples/<runId>.parquet`.
 * The run id already names the object version, so a replaced version's runs
 * keep their own objects until they are removed with the runs.
 *
 *   series  report  line  time                 since_boot  read_iops  write_iops ... util_pct
 *   sda     0       12    2026-11-02T10:00:00  true        3.1        0.4           1.2
 *   sda     1       20    2026-11-02T10:00:05  false       812.4      0.0           99.0
 *
 * Every row group holds samples of one series only, in report order (the
 * writer keeps a buffer per series, as the table's chunks did), so a reader of
 * one series reads only that series' row groups, found by the `series`
 * column's statistics. Metrics are the canonical iostat metrics
 * (shared/metrics.ts), NaN where a platform does not print them (objects
 * written by earlier versions hold null there; readers take both as none).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { IOSTAT_METRICS, type IostatMetric } from '../metrics.ts';

/** Where a run's samples object lives in the results bucket. */
export const samplesKey = (runId: string) => `samples/${runId}.parquet`;

/** The key prefix of every samples object (a lifecycle rule or a listing may use it). */
export const SAMPLES_PREFIX = 'samples/';

/** Columns before the metrics, in file order. */
export const SAMPLE_COLUMNS = ['series', 'report', 'line', 'time', 'since_boot'] as const;

/** The metric columns, in file order: one per canonical iostat metric. */
export const SAMPLE_METRICS: readonly IostatMetric[] = IOSTAT_METRICS;

/** Samples a series' buffer holds before it is written as a row group. */
export const ROW_GROUP_SAMPLES = 4096;

/**
 * The pages' codec. GZIP at level 1 runs in zlib's native code: faster than
 * hyparquet-writer's snappy in JavaScript, and smaller (BENCHMARKS.md).
 * Objects written before with snappy still read.
 */
export const SAMPLES_CODEC = 'GZIP';
const GZIP_LEVEL = 1;
export const samplesCompressors = { GZIP: (bytes: Uint8Array) => gzipSync(bytes, { level: GZIP_LEVEL }) };
export const samplesDecompressors = { GZIP: (bytes: Uint8Array) => new Uint8Array(gunzipSync(bytes)) };
