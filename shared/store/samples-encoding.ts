/**
 * Encoding a run's samples object, row group by row group (the layout is
 * samples-schema.ts). Pure: bytes in, bytes out, so it runs on the threads
 * samples-encoder-worker.ts starts, beside the parse, any group on any thread.
 *
 *   { series: 'sda', count: 2, reports: Int32Array [0, 1], metrics: Float64Array [...] }
 *     -> encodeRowGroup(group, first) -> { bytes, rowGroup }   (one row group, placed anywhere)
 *   [{ rowGroup, at: 4 }, ...] -> encodeFooter(placed) -> the footer
 *
 * A group travels between threads as typed arrays (transferred, not copied),
 * and its metrics go into the file as they are: NaN where the log printed none.
 */
import { ByteWriter, ParquetWriter, schemaFromColumnData, type ColumnSource } from 'hyparquet-writer';
import { SAMPLE_METRICS, SAMPLES_CODEC, samplesCompressors } from './samples-schema.ts';

/** A row group's footer entry, as the writer's own hyparquet types it. */
type RowGroup = ParquetWriter['row_groups'][number];
type ColumnChunk = RowGroup['columns'][number];

/** One series' samples as the writer hands them over: `count` of each, metrics column after column. */
export interface SampleGroup {
  series: string;
  count: number;
  reports: Int32Array;
  lines: Int32Array;
  times: (string | null)[];
  sinceBoot: Uint8Array;
  /** SAMPLE_METRICS.length columns of `capacity` values: metric m of sample i at m * capacity + i. */
  metrics: Float64Array;
  capacity: number;
}

/**
 * The file's columns: types and nullability as samples-schema.ts lays them out.
 * Statistics only where a reader picks row groups by them (the series, its
 * reports); no offset indexes (readers read whole column chunks): a file of
 * thousands of series has as many row groups, and each column chunk's extras
 * would stay in memory until the footer is written. Metrics and times are
 * plain-encoded: a dictionary costs more time than it saves once GZIP has the
 * pages; metrics are required (NaN for none), so they need no levels. Report
 * and line numbers rise by small steps: delta-encoded, they shrink to bits
 * before GZIP sees them (a quarter of the object, and less to compress).
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
    { ...column('report', 'INT32', false, true), encoding: 'DELTA_BINARY_PACKED' as const },
    { ...column('line', 'INT32', false), encoding: 'DELTA_BINARY_PACKED' as const },
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

/** A row group's bytes and its footer entry, with offsets counted from the first of those bytes. */
export interface EncodedGroup {
  bytes: Uint8Array;
  rowGroup: RowGroup;
}

/** A row group's footer entry and where in the file its bytes went. */
export interface PlacedGroup {
  rowGroup: RowGroup;
  at: number;
}

/** File magic the writer puts first: dropped from every row group but a file's first. */
const MAGIC_BYTES = 4;

const newWriter = () => {
  const writer = new ByteWriter(64 * 1024);
  const parquet = new ParquetWriter({
    writer,
    schema: fileLayout().schema,
    codec: SAMPLES_CODEC,
    compressors: samplesCompressors,
    // Whole series names in the statistics: readers find a series' row groups by them.
    statisticsTruncateLength: Infinity,
  });
  return { writer, parquet };
};

/**
 * One row group on its own, so that any thread may encode any group of a file:
 * the footer entry's offsets are fixed once the group's place is known
 * (encodeFooter). The first group of a file keeps the file's magic.
 */
export function encodeRowGroup(group: SampleGroup, first: boolean): EncodedGroup {
  const { writer, parquet } = newWriter();
  // One call per group: rowGroupSize its length, so a row group never mixes series.
  parquet.write({ columnData: columnSources(group), rowGroupSize: group.count, pageSize: 0 });
  const skip = first ? 0 : MAGIC_BYTES;
  return {
    bytes: new Uint8Array(writer.buffer.slice(skip, writer.index)),
    rowGroup: shiftOffsets(parquet.row_groups[0]!, -skip),
  };
}

/** The footer's bytes for the groups as they were placed: the file is complete once they follow them. */
export function encodeFooter(groups: PlacedGroup[]): Uint8Array {
  const { writer, parquet } = newWriter();
  for (const { rowGroup, at } of groups) {
    parquet.row_groups.push(shiftOffsets(rowGroup, at));
    parquet.num_rows += rowGroup.num_rows;
  }
  parquet.finish();
  return new Uint8Array(writer.buffer.slice(MAGIC_BYTES, writer.index));
}

/** A footer entry moved by `by` bytes: every offset it holds (the layout writes no indexes or blooms). */
function shiftOffsets(rowGroup: RowGroup, by: number): RowGroup {
  const delta = BigInt(by);
  const move = (offset: bigint | undefined) => (offset === undefined ? undefined : offset + delta);
  const columns = rowGroup.columns.map((chunk): ColumnChunk => {
    const extras = [chunk.offset_index_offset, chunk.column_index_offset, chunk.meta_data?.bloom_filter_offset];
    if (extras.some((offset) => offset !== undefined))
      throw new Error('a samples row group holds a page index or bloom filter, which its layout has none of');
    const meta = chunk.meta_data;
    return {
      ...chunk,
      file_offset: chunk.file_offset + delta,
      ...(meta && {
        meta_data: {
          ...meta,
          data_page_offset: meta.data_page_offset + delta,
          ...(meta.dictionary_page_offset !== undefined && {
            dictionary_page_offset: move(meta.dictionary_page_offset)!,
          }),
          ...(meta.index_page_offset !== undefined && { index_page_offset: move(meta.index_page_offset)! }),
        },
      }),
    };
  });
  return {
    ...rowGroup,
    columns,
    ...(rowGroup.file_offset !== undefined && { file_offset: move(rowGroup.file_offset)! }),
  };
}
