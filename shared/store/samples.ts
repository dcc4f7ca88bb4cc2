/**
 * Writing a run's samples object (the layout is samples-schema.ts): samples
 * are added one by one as the parser streams them, kept column by column in a
 * buffer per series, and written as one row group of that series when the
 * buffer holds ROW_GROUP_SAMPLES (or earlier, when the caller cuts every
 * buffer to bound memory). Row groups stream into S3 through a multipart
 * upload as they are written, so a 200 MB log never sits in memory whole.
 *
 *   add('sda', sample) ... add('sdb', sample) ... drain() ... finish()
 *     -> { key: 'samples/<runId>.parquet', bytes, rows }
 *
 * Deleting them is samples-removal.ts: the steps that only remove runs need
 * nothing of the writing.
 */
import { Upload } from '@aws-sdk/lib-storage';
import { ByteWriter, ParquetWriter, schemaFromColumnData, type ColumnSource } from 'hyparquet-writer';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { IostatMetric } from '../metrics.ts';
import type { IostatSample } from '../model.ts';
import type { SamplesObject, TimeSpan } from './items.ts';
import type { ResultsBucket } from './samples-removal.ts';
import { spanOf } from './run-items.ts';
import { ROW_GROUP_SAMPLES, SAMPLE_METRICS, samplesKey } from './samples-schema.ts';

/** Bytes the upload's stream holds before the writer waits for S3 to take them. */
const STREAM_BUFFER_BYTES = 1_048_576;
/** Multipart parts in flight at once: each holds a part in memory. */
const UPLOAD_PARTS_IN_FLIGHT = 2;
/** Part size of the multipart upload (S3's minimum); a smaller object is one PUT. */
const UPLOAD_PART_BYTES = 5_242_880;
export const SAMPLES_CONTENT_TYPE = 'application/vnd.apache.parquet';

/**
 * The file's columns: types and nullability as samples-schema.ts lays them out.
 * Statistics only where a reader picks row groups by them (the series, its
 * reports); no offset indexes (readers read whole column chunks): a file of
 * thousands of series has as many row groups, and each column chunk's extras
 * would stay in memory until the footer is written.
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
    column('time', 'STRING', true),
    column('since_boot', 'BOOLEAN', false),
    ...SAMPLE_METRICS.map((name) => column(name, 'DOUBLE', true)),
  ];
}

/**
 * The columns and the schema, made when the first file is: a bundle that only
 * imports this module (the steps that remove runs) runs nothing of it.
 */
let layout: { columns: Omit<ColumnSource, 'data'>[]; schema: ReturnType<typeof schemaFromColumnData> } | undefined;
function fileLayout(): NonNullable<typeof layout> {
  if (layout !== undefined) return layout;
  const columns = columnTypes();
  return (layout = { columns, schema: schemaFromColumnData({ columnData: columns.map((c) => ({ ...c, data: [] })) }) });
}

/** One series' samples not yet written, column by column: the sample objects themselves are dropped. */
class SeriesBuffer {
  reports: number[] = [];
  lines: number[] = [];
  times: (string | null)[] = [];
  sinceBoot: boolean[] = [];
  metrics = new Map<IostatMetric, (number | null)[]>(SAMPLE_METRICS.map((m) => [m, []]));
  /** First and last sample time of the whole series (log order is time order): its span. */
  firstTime: string | undefined;
  lastTime: string | undefined;

  get count(): number {
    return this.reports.length;
  }

  add(sample: IostatSample): void {
    this.reports.push(sample.report);
    this.lines.push(sample.line);
    this.times.push(sample.time ?? null);
    this.sinceBoot.push(sample.sinceBoot);
    if (sample.time !== undefined) {
      this.firstTime ??= sample.time;
      this.lastTime = sample.time;
    }
    const values = sample.values;
    for (const [metric, column] of this.metrics) column.push(values[metric] ?? null);
  }

  /** The buffered samples as the file's columns, and the buffer emptied. */
  take(native: string): ColumnSource[] {
    const count = this.count;
    const columns: ColumnSource[] = [
      { name: 'series', data: new Array<string>(count).fill(native) },
      { name: 'report', data: this.reports },
      { name: 'line', data: this.lines },
      { name: 'time', data: this.times },
      { name: 'since_boot', data: this.sinceBoot },
      ...SAMPLE_METRICS.map((m) => ({ name: m, data: this.metrics.get(m)! })),
    ];
    this.reports = [];
    this.lines = [];
    this.times = [];
    this.sinceBoot = [];
    this.metrics = new Map(SAMPLE_METRICS.map((m) => [m, []]));
    const types = fileLayout().columns;
    return columns.map((c, i) => ({ ...types[i]!, ...c }));
  }
}

/**
 * The bytes ParquetWriter appends, handed to a stream each time it flushes (after
 * every row group) instead of kept: the buffer only ever holds one row group.
 * A ByteWriter with its flush and finish given, as hyparquet-writer's own file
 * writer is made (a subclass would keep this module in bundles that never write).
 */
function streamingWriter(out: PassThrough, failed: Promise<never>): ByteWriter {
  const writer = new ByteWriter(64 * 1024);
  const flush = async (): Promise<void> => {
    if (writer.index === 0) return;
    // A copy: the writer reuses its buffer for the next row group.
    const bytes = Buffer.from(new Uint8Array(writer.buffer, 0, writer.index));
    writer.index = 0;
    if (!out.write(bytes)) await Promise.race([once(out, 'drain'), failed]);
  };
  const finish = async (): Promise<void> => {
    await flush();
    out.end();
  };
  return Object.assign(writer, { flush, finish });
}

/** One run's samples object, written while the run streams past. */
export class SamplesWriter {
  private readonly series = new Map<string, SeriesBuffer>();
  /** Row groups ready to be written (full or cut buffers), in the order they filled. */
  private ready: ColumnSource[][] = [];
  private file: { parquet: ParquetWriter; writer: ByteWriter; upload: Upload; done: Promise<unknown> } | undefined;
  private rows = 0;
  /** Samples added and not yet handed to the file. */
  buffered = 0;

  readonly key: string;

  constructor(
    private readonly bucket: ResultsBucket,
    runId: string,
  ) {
    this.key = samplesKey(runId);
  }

  /** Add one sample of a series; a full buffer becomes a row group for the next drain(). */
  add(native: string, sample: IostatSample): void {
    let buffer = this.series.get(native);
    if (buffer === undefined) this.series.set(native, (buffer = new SeriesBuffer()));
    buffer.add(sample);
    this.buffered++;
    if (buffer.count >= ROW_GROUP_SAMPLES) this.cut(native, buffer);
  }

  /** Every series' partial buffer becomes a row group now: bounds memory when thousands of series fill slowly. */
  cutAll(): void {
    for (const [native, buffer] of this.series) if (buffer.count > 0) this.cut(native, buffer);
  }

  /** The time range of a series' samples (for iostatRunItem, through joinSpans). */
  span(native: string): TimeSpan | undefined {
    const buffer = this.series.get(native);
    return buffer === undefined ? undefined : spanOf([buffer.firstTime, buffer.lastTime]);
  }

  /** Write the row groups that are ready into the upload; resolves once S3 has taken enough to go on. */
  async drain(): Promise<void> {
    while (this.ready.length > 0) {
      const columnData = this.ready.shift()!;
      const file = (this.file ??= this.open());
      const rows = columnData[0]!.data.length;
      // One call per row group: rowGroupSize its length, so a group never mixes series.
      await file.parquet.write({ columnData, rowGroupSize: rows });
      this.rows += rows;
    }
  }

  /** End the file and wait until S3 stores it; undefined (and no object) when the run had no samples. */
  async finish(): Promise<SamplesObject | undefined> {
    this.cutAll();
    await this.drain();
    const file = this.file;
    if (file === undefined) return undefined;
    await file.parquet.finish();
    await file.done;
    return { key: this.key, bytes: file.writer.offset, rows: this.rows };
  }

  /** Give up on the object: an unfinished multipart upload is aborted (a lifecycle rule catches any left). */
  async abort(): Promise<void> {
    this.series.clear();
    this.ready = [];
    const file = this.file;
    if (file === undefined) return;
    await file.upload.abort().catch(() => undefined);
    await file.done.catch(() => undefined);
  }

  private cut(native: string, buffer: SeriesBuffer): void {
    this.buffered -= buffer.count;
    this.ready.push(buffer.take(native));
  }

  private open() {
    const body = new PassThrough({ highWaterMark: STREAM_BUFFER_BYTES });
    const upload = new Upload({
      client: this.bucket.s3,
      params: {
        Bucket: this.bucket.resultsBucket,
        Key: this.key,
        Body: body,
        ContentType: SAMPLES_CONTENT_TYPE,
      },
      queueSize: UPLOAD_PARTS_IN_FLIGHT,
      partSize: UPLOAD_PART_BYTES,
      leavePartsOnError: false,
    });
    const done = upload.done();
    // A failed upload stops the writer waiting on a stream nobody reads any more.
    const failed = done.then(
      () => new Promise<never>(() => undefined),
      (error: unknown) => Promise.reject(error),
    );
    failed.catch(() => undefined);
    done.catch(() => undefined);
    const writer = streamingWriter(body, failed as Promise<never>);
    // Whole series names in the statistics: readers find a series' row groups by them.
    const parquet = new ParquetWriter({ writer, schema: fileLayout().schema, statisticsTruncateLength: Infinity });
    return { parquet, writer, upload, done };
  }
}
