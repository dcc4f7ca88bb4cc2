/**
 * A run's samples object read back with hyparquet: what tests compare with the
 * samples the parser produced, to check that nothing is lost on the way into
 * the results bucket. Each row is one sample:
 *
 *   { series: 'sda', report: 1, line: 20, time: '...', since_boot: false, read_iops: 812.4, ... }
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { parquetMetadata, parquetReadObjects, type FileMetaData } from 'hyparquet';
import { SAMPLE_METRICS, samplesDecompressors } from '../../shared/store/samples-schema.ts';
import type { IostatSample } from '../../shared/model.ts';

export interface StoredFile {
  bytes: ArrayBuffer;
  metadata: FileMetaData;
  rows: Record<string, unknown>[];
}

/** The object's bytes, its Parquet metadata and every row. */
export async function readSamplesObject(s3: S3Client, bucket: string, key: string): Promise<StoredFile> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const body = await object.Body!.transformToByteArray();
  const bytes = body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
  const rows = (await parquetReadObjects({ file: bytes, compressors: samplesDecompressors })) as Record<
    string,
    unknown
  >[];
  return { bytes, metadata: parquetMetadata(bytes), rows };
}

/** A sample as the object holds it: the parser's sample without its printed columns (`raw`). */
export type StoredSample = Omit<IostatSample, 'raw'>;

/** The parser's sample as the object stores it. */
export function storedForm(sample: IostatSample): StoredSample {
  const { raw: _raw, ...rest } = sample;
  return rest;
}

/** The samples of one series, in file order (report order: the writer keeps it). */
export function seriesSamples(rows: readonly Record<string, unknown>[], series: string): StoredSample[] {
  return rows
    .filter((row) => row['series'] === series)
    .map((row) => {
      const values: IostatSample['values'] = {};
      for (const metric of SAMPLE_METRICS) {
        const value = row[metric];
        // NaN where the log printed none (null in objects written before).
        if (typeof value === 'number' && !Number.isNaN(value)) values[metric] = value;
      }
      const sample: StoredSample = {
        report: row['report'] as number,
        line: row['line'] as number,
        sinceBoot: row['since_boot'] as boolean,
        values,
      };
      if (row['time'] !== null && row['time'] !== undefined) sample.time = row['time'] as string;
      return sample;
    });
}

/** The series each row group holds, from the `series` column's statistics (min and max). */
export function rowGroupSeries(metadata: FileMetaData): { min: unknown; max: unknown; rows: number }[] {
  return metadata.row_groups.map((group) => {
    const column = group.columns.find((c) => c.meta_data?.path_in_schema[0] === 'series')!;
    const stats = column.meta_data!.statistics!;
    return { min: stats.min_value, max: stats.max_value, rows: Number(group.num_rows) };
  });
}
