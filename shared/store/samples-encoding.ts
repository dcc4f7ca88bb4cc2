/**
 * Encoding a run's samples object, row group by row group (the layout is
 * samples-schema.ts). Pure: bytes in, bytes out, so it runs on the thread
 * samples-encoder-worker.ts starts, beside the parse.
 *
 *   { series: 'sda', count: 2, reports: Int32Array [0, 1], metrics: Float64Array [...] }
 *     -> encoder.write(group) -> Uint8Array (one row group)   ... encoder.finish() -> the footer
 *
 * A group travels between threads as typed arrays (transferred, not copied),
 * and its metrics go into the file as they are: NaN where the log printed none.
 */
import { ByteWriter, ParquetWriter, schemaFromColumnData, type ColumnSource } from 'hyparquet-writer';
import type { SampleGroup } from './samples-encoder.ts';
import { SAMPLE_METRICS, SAMPLES_CODEC, samplesCompressors } from './samples-schema.ts';

/**
 * The file's columns: types and nullability as samples-schema.ts lays them out.
 * Statistics only where a reader picks row groups by them (the series, its
 * reports); no offset indexes (readers read whole column chunks): a file of
 * thousands of series has as many row groups, and each column chunk's extras
 * would stay in memory until the footer is written. Metrics and times are
 * plain-encoded: a dictionary costs more time than it saves once GZIP has the
 * pages; metrics are required (NaN for none), so they need no levels.
 */
function columnTypes(): Omit<ColumnSource, 'data'>[] {
  const column = (name: string, type: ColumnSource['type'], nullable: boolean, statistics = false) => ({
    name,
    type,
    nullable,
    statistics,
    offsetIndex: false,
  });
  return [
    column('series', 'STRING', false, true),
    column('report', 'INT32', false, true),
    column('line', 'INT32', false),
    { ...column('time', 'STRING', true), encoding: 'PLAIN' as const },
    column('since_boot', 'BOOLEAN', false),
    ...SAMPLE_METRICS.map((name) => ({ ...column(name, 'DOUBLE', false), encoding: 'PLAIN' as const })),
  ];
}

let layout: { columns: Omit<ColumnSource, 'data'>[]; schema: ReturnType<typeof schemaFromColumnData> } | undefined;
function fileLayout(): NonNullable<typeof layout> {
  if (layout !== undefined) return layout;
  const columns = columnTypes();
  return (layout = { columns, schema: schemaFromColumnData({ columnData: columns.map((c) => ({ ...c, data: [] })) }) });
}

function columnSources(group: SampleGroup): ColumnSource[] {
  const { count } = group;
  const data: ColumnSource['data'][] = [
    new Array<string>(count).fill(group.series),
    group.reports.subarray(0, count),
    group.lines.subarray(0, count),
    group.times.length === count ? group.times : group.times.slice(0, count),
    Array.from(group.sinceBoot.subarray(0, count), (b) => b === 1),
    ...SAMPLE_METRICS.map((_, m) => group.metrics.subarray(m * group.capacity, m * group.capacity + count)),
  ];
  return fileLayout().columns.map((c, i) => ({ ...c, data: data[i]! }));
}

/** One samples object's bytes, produced a row group at a time. */
export class SamplesEncoder {
  private readonly writer = new ByteWriter(64 * 1024);
  private readonly parquet = new ParquetWriter({
    writer: this.writer,
    schema: fileLayout().schema,
    codec: SAMPLES_CODEC,
    compressors: samplesCompressors,
    // Whole series names in the statistics: readers find a series' row groups by them.
    statisticsTruncateLength: Infinity,
  });

  /** The bytes of one row group (preceded, for the first, by the file's magic). */
  write(group: SampleGroup): Uint8Array {
    // One call per group: rowGroupSize its length, so a row group never mixes series.
    this.parquet.write({ columnData: columnSources(group), rowGroupSize: group.count, pageSize: 0 });
    return this.take();
  }

  /** The footer's bytes: the file is complete once they follow the row groups. */
  finish(): Uint8Array {
    this.parquet.finish();
    return this.take();
  }

  private take(): Uint8Array {
    // A copy: the writer reuses its buffer for the next row group.
    const bytes = new Uint8Array(this.writer.buffer.slice(0, this.writer.index));
    this.writer.index = 0;
    return bytes;
  }
}
