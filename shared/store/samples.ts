/**
 * Writing a run's samples object (the layout is samples-schema.ts): samples
 * are added one by one as the parser streams them, kept column by column in a
 * buffer per series, and written as one row group of that series when the
 * buffer holds ROW_GROUP_SAMPLES (or earlier, when the caller cuts every
 * buffer to bound memory). Row groups stream into S3 through a multipart
 * upload as they are written, so a 200 MB log never sits in memory whole.
 *
 *   add('sda', row) ... add('sdb', row) ... drain() ... finish()
 *     -> { key: 'samples/<runId>.parquet', bytes, rows }
 *
 * Deleting them is samples-removal.ts: the steps that only remove runs need
 * nothing of the writing.
 */
import { Upload } from '@aws-sdk/lib-storage';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { IostatSampleRow } from '../model.ts';
import type { SamplesObject, TimeSpan } from './items.ts';
import type { ResultsBucket } from './samples-removal.ts';
import { spanOf } from './run-items.ts';
import { encoderPool } from './samples-encoder.ts';
import type { EncodedGroup, PlacedGroup, SampleGroup } from './samples-encoding.ts';
import { ROW_GROUP_SAMPLES, SAMPLE_METRICS, samplesKey } from './samples-schema.ts';

/** Bytes the upload's stream holds before the writer waits for S3 to take them. */
const STREAM_BUFFER_BYTES = 1_048_576;
/** Multipart parts in flight at once: each holds a part in memory. */
const UPLOAD_PARTS_IN_FLIGHT = 2;
/** Part size of the multipart upload (S3's minimum); a smaller object is one PUT. */
const UPLOAD_PART_BYTES = 5_242_880;
export const SAMPLES_CONTENT_TYPE = 'application/vnd.apache.parquet';

/**
 * Samples a new series buffer has room for; it doubles up to ROW_GROUP_SAMPLES.
 * Small: a file of 20,000 series (maxSeriesPerFile) holds a buffer for each.
 */
const FIRST_CAPACITY = 16;
/**
 * Samples a writer may have at the encoder threads, not yet streamed out: a
 * whole round of row groups (128 full ones, as many as the ingest buffers),
 * since the series of a log fill theirs together, and the parse goes on while
 * the encoders catch up. A quarter of it made the parse wait for them, a 200 MB
 * log ready a quarter later (BENCHMARKS.md). A literal, so that bundles which
 * never write drop this module.
 */
const SAMPLES_IN_FLIGHT = 524_288;

/** One series' samples not yet written, column by column in typed arrays: the sample objects are dropped. */
class SeriesBuffer {
  count = 0;
  private capacity = 0;
  /** The capacity the next arrays start with: what the series filled last time. */
  private nextCapacity = FIRST_CAPACITY;
  private reports!: Int32Array;
  private lines!: Int32Array;
  private sinceBoot!: Uint8Array;
  private metrics!: Float64Array;
  private times!: (string | null)[];
  /** First and last sample time of the whole series (log order is time order): its span. */
  firstTime: string | undefined;
  lastTime: string | undefined;

  constructor() {
    this.empty();
  }

  add(row: IostatSampleRow): void {
    if (this.count === this.capacity) this.grow();
    const i = this.count++;
    this.reports[i] = row.report;
    this.lines[i] = row.line;
    this.sinceBoot[i] = row.sinceBoot ? 1 : 0;
    this.times.push(row.time ?? null);
    if (row.time !== undefined) {
      this.firstTime ??= row.time;
      this.lastTime = row.time;
    }
    const from = row.metrics;
    const metrics = this.metrics;
    for (let m = 0, at = i; m < from.length; m++, at += this.capacity) metrics[at] = from[m]!;
  }

  /** The buffered samples as a group for the encoder (its arrays change hands), and the buffer emptied. */
  take(series: string): SampleGroup {
    const group: SampleGroup = {
      series,
      count: this.count,
      capacity: this.capacity,
      reports: this.reports,
      lines: this.lines,
      times: this.times,
      sinceBoot: this.sinceBoot,
      metrics: this.metrics,
    };
    // Its arrays are the encoder's now. A series that filled this much will likely fill as much
    // again, but gets its arrays at its next sample: thousands of cut buffers hold none meanwhile.
    this.nextCapacity = this.capacity;
    this.empty();
    return group;
  }

  private empty(): void {
    this.count = 0;
    this.capacity = 0;
    this.reports = new Int32Array(0);
    this.lines = new Int32Array(0);
    this.sinceBoot = new Uint8Array(0);
    this.metrics = new Float64Array(0);
    this.times = [];
  }

  private grow(): void {
    const capacity = this.capacity === 0 ? this.nextCapacity : Math.min(this.capacity * 2, ROW_GROUP_SAMPLES);
    const metrics = new Float64Array(capacity * SAMPLE_METRICS.length);
    for (let m = 0; m < SAMPLE_METRICS.length; m++)
      metrics.set(this.metrics.subarray(m * this.capacity, (m + 1) * this.capacity), m * capacity);
    const widen = <T extends Int32Array | Uint8Array>(from: T, to: T): T => (to.set(from), to);
    this.reports = widen(this.reports, new Int32Array(capacity));
    this.lines = widen(this.lines, new Int32Array(capacity));
    this.sinceBoot = widen(this.sinceBoot, new Uint8Array(capacity));
    this.metrics = metrics;
    this.capacity = capacity;
  }
}

/** Wait until the stream takes more, or the upload has failed. */
async function send(out: PassThrough, bytes: Uint8Array, failed: Promise<never>): Promise<void> {
  if (!out.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)))
    await Promise.race([once(out, 'drain'), failed]);
}

interface OpenFile {
  out: PassThrough;
  upload: Upload;
  done: Promise<unknown>;
  failed: Promise<never>;
  /** Bytes streamed so far: where the next row group goes. */
  bytes: number;
  /** Row groups at the encoders, in file order, and how many samples they hold. */
  encoding: { group: Promise<EncodedGroup>; samples: number }[];
  inFlight: number;
  /** The streamed row groups' footer entries and places. */
  placed: PlacedGroup[];
}

/**
 * One run's samples object, written while the run streams past: the row
 * groups are encoded on the encoder threads (samples-encoder.ts), at most
 * SAMPLES_IN_FLIGHT samples at a time, and streamed out in file order.
 */
export class SamplesWriter {
  private readonly series = new Map<string, SeriesBuffer>();
  /** Row groups ready to be written (full or cut buffers), in the order they filled. */
  private ready: SampleGroup[] = [];
  private file: OpenFile | undefined;
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

  /**
   * Add one sample of a series, copied from the parser's row (true when it is
   * the series' first); a full buffer becomes a row group for the next drain().
   */
  add(native: string, row: IostatSampleRow): boolean {
    let buffer = this.series.get(native);
    const first = buffer === undefined;
    if (buffer === undefined) this.series.set(native, (buffer = new SeriesBuffer()));
    buffer.add(row);
    this.buffered++;
    if (buffer.count >= ROW_GROUP_SAMPLES) this.cut(native, buffer);
    return first;
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

  /**
   * Hand the ready row groups to the encoders (`parsed`: the run is read, its
   * last groups may use every core); resolves once the file is within its samples in flight.
   */
  async drain(parsed = false): Promise<void> {
    while (this.ready.length > 0) {
      const group = this.ready.shift()!;
      const file = (this.file ??= this.open());
      const encoded = encoderPool.write(group, this.rows === 0, parsed);
      encoded.catch(() => undefined);
      file.encoding.push({ group: encoded, samples: group.count });
      file.inFlight += group.count;
      this.rows += group.count;
      while (file.inFlight > SAMPLES_IN_FLIGHT) await this.writeNext(file);
    }
  }

  /** End the file and wait until S3 stores it; undefined (and no object) when the run had no samples. */
  async finish(): Promise<SamplesObject | undefined> {
    this.cutAll();
    await this.drain(true);
    const file = this.file;
    if (file === undefined) return undefined;
    while (file.encoding.length > 0) await this.writeNext(file);
    const footer = await encoderPool.footer(file.placed);
    file.bytes += footer.byteLength;
    await send(file.out, footer, file.failed);
    file.out.end();
    await file.done;
    return { key: this.key, bytes: file.bytes, rows: this.rows };
  }

  /** Give up on the object: an unfinished multipart upload is aborted (a lifecycle rule catches any left). */
  async abort(): Promise<void> {
    this.series.clear();
    this.ready = [];
    const file = this.file;
    if (file === undefined) return;
    await Promise.allSettled(file.encoding.map((e) => e.group));
    file.encoding = [];
    await file.upload.abort().catch(() => undefined);
    await file.done.catch(() => undefined);
  }

  private cut(native: string, buffer: SeriesBuffer): void {
    this.buffered -= buffer.count;
    this.ready.push(buffer.take(native));
  }

  /** The oldest group at the encoder, into the upload's stream. */
  private async writeNext(file: OpenFile): Promise<void> {
    const next = file.encoding.shift()!;
    file.inFlight -= next.samples;
    const { bytes, rowGroup } = await next.group;
    file.placed.push({ rowGroup, at: file.bytes });
    file.bytes += bytes.byteLength;
    await send(file.out, bytes, file.failed);
  }

  private open(): OpenFile {
    const out = new PassThrough({ highWaterMark: STREAM_BUFFER_BYTES });
    const upload = new Upload({
      client: this.bucket.s3,
      params: {
        Bucket: this.bucket.resultsBucket,
        Key: this.key,
        Body: out,
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
    return { out, upload, done, failed, bytes: 0, encoding: [], inFlight: 0, placed: [] };
  }
}
