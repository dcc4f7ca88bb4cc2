/**
 * One object version from S3 into the store while it is read: an iostat run's
 * samples stream into its samples object in the results bucket as they come
 * (store/samples.ts), a finished run's index entries (series, tags) go out at
 * once, and its META item (the mark of a complete run, naming the samples
 * object) as soon as the object is stored and every item before it is written;
 * the device labels come last. Memory stays bounded: buffered samples are
 * capped (MAX_BUFFERED_SAMPLES, or the deps' bufferedSamples), a file may
 * hold at most maxSeriesPerFile series, and nothing of a finished run is kept
 * but its labels.
 *
 * Before the items of a new run are written, the upload record notes that the
 * run was started (uploads.ts noteProgress): whoever ends the version as failed
 * knows which runs to remove.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { LAB_DEFAULTS } from '../config.ts';
import { labelFromObject, labelFromRun, parseTags } from '../labels.ts';
import type { FioRun, IostatSampleRow, Run } from '../model.ts';
import { ParseError, parseStream } from '../parsers/index.ts';
import { BatchWriter } from '../store/batch.ts';
import { runId as makeRunId } from '../store/keys.ts';
import {
  deviceItem,
  MAX_FIO_POINTS,
  runTagItems,
  type IostatRunItem,
  type ObjectRef,
  type RunContext,
  type TimeSpan,
} from '../store/items.ts';
import { SamplesWriter } from '../store/samples.ts';
import { diskperfRunItem, fioRunItem, iostatRunItem, joinSpans } from '../store/run-items.ts';
import { noteProgress, type Claim } from '../store/uploads.ts';
import { PermanentFailure, type IngestDeps } from './deps.ts';

/**
 * Samples held in series buffers across all runs before every partial buffer
 * is written as a row group: 128 series fill whole row groups of
 * ROW_GROUP_SAMPLES (smaller ones cost the encoder three times as much a
 * sample), and a file of thousands of series stays within about 60 MB of
 * buffers (BENCHMARKS.md). A literal: an expression of an import would keep
 * this module in bundles that never ingest (the dead-letter function's).
 */
export const MAX_BUFFERED_SAMPLES = 524_288;
/** A delivery that writes for this long without starting a run still tells the sweeper it is alive. */
const HEARTBEAT_MS = 60_000;

export interface StoredVersion {
  runIds: string[];
  format: string;
  device?: string;
  tags: Record<string, string>;
  warnings: number;
}

export async function streamRuns(object: ObjectRef, claim: Claim, deps: IngestDeps): Promise<StoredVersion> {
  const response = await deps.s3.send(
    new GetObjectCommand({
      Bucket: object.bucket,
      Key: object.key,
      ...(object.versionId ? { VersionId: object.versionId } : {}),
    }),
  );
  const size = response.ContentLength ?? object.size ?? 0;
  if (size > deps.maxUploadBytes) {
    (response.Body as Readable | undefined)?.destroy();
    throw new PermanentFailure(
      `${size} bytes, more than this lab's limit of ${deps.maxUploadBytes} bytes`,
      "split the log into smaller files, or raise the lab's maxUploadMB",
    );
  }
  const body = response.Body as (Readable & AsyncIterable<Buffer>) | undefined;
  if (body === undefined) throw new PermanentFailure('the object has no body', 'upload the file again');
  const metadata = response.Metadata ?? {};
  const writer = new VersionWriter(
    object,
    claim,
    deps,
    labelFromObject(object.key, metadata),
    parseTags(metadata['tags']),
  );
  try {
    const parsed = await parseStream(writer.feed(body), {
      source: object.key,
      keepSamples: false,
      maxBytes: deps.maxUploadBytes,
      onIostatRow: (index, native, row) => writer.sample(index, native, row),
      onRun: (run) => writer.run(run),
    });
    return await writer.finish(parsed.format);
  } catch (error) {
    await writer.abort();
    throw error;
  }
}

/** A fio run of more points than its item holds: the file fails at the job of the first one past. */
function tooManyPoints(run: FioRun, key: string): ParseError {
  return new ParseError({
    source: key,
    line: run.rows[MAX_FIO_POINTS]!.line,
    problem: `${run.rows.length} points (rw, bs, iodepth, numjobs) in one fio run, more than ${MAX_FIO_POINTS}`,
    expected: `at most ${MAX_FIO_POINTS} points a run: split the sweep into several outputs`,
  });
}

class VersionWriter {
  private readonly writer: BatchWriter;
  /** Samples buffered before every partial buffer is cut. */
  private readonly budget: number;
  /** The samples objects of iostat runs still being read, by run index. */
  private readonly samples = new Map<number, SamplesWriter>();
  /** Series seen per run, for the limit on series a file. */
  private readonly seen = new Set<string>();
  /** Finished iostat runs whose samples object is still being stored: their META waits for it. */
  private closing: { writer: SamplesWriter; meta: IostatRunItem }[] = [];
  private readonly ingestedAt: string;
  private series = 0;
  /** Runs whose items may be queued: noted on the record before they are written. */
  private started = 0;
  private lastNote = 0;
  /** META items whose run's other items may not all be written yet. */
  private metas: object[] = [];
  private readonly runIds: string[] = [];
  private readonly labels = new Set<string>();
  private warnings = 0;

  constructor(
    private readonly object: ObjectRef,
    private readonly claim: Claim,
    private readonly deps: IngestDeps,
    private readonly objectLabel: string | undefined,
    private readonly tags: Record<string, string>,
  ) {
    this.writer = new BatchWriter(deps.db, deps.tableName);
    this.budget = deps.bufferedSamples ?? MAX_BUFFERED_SAMPLES;
    this.ingestedAt = this.now();
  }

  /** The object's bytes, with what the parser produced written before each chunk of input. */
  async *feed(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of body) {
      await this.writePending();
      yield chunk;
    }
  }

  sample(index: number, native: string, row: IostatSampleRow): void {
    const writer = this.samplesFor(index);
    if (writer.add(native, row)) {
      this.countSeries(row.line);
      this.seen.add(`${index}\u0000${native}`);
    }
    // Thousands of devices would each fill a row group slowly: write the partial buffers now.
    let buffered = 0;
    for (const w of this.samples.values()) buffered += w.buffered;
    if (buffered >= this.budget) for (const w of this.samples.values()) w.cutAll();
  }

  /** Abandon the samples objects not yet stored (the runs' items are removed by whoever ends the version). */
  async abort(): Promise<void> {
    const writers = [...this.samples.values(), ...this.closing.map((c) => c.writer)];
    this.samples.clear();
    this.closing = [];
    await Promise.all(writers.map((w) => w.abort()));
  }

  run(run: Run): void {
    const id = this.idOf(run.index);
    this.runIds.push(id);
    this.warnings += run.warnings.length;
    const label = this.objectLabel ?? labelFromRun(run.name, this.object.key);
    const ctx: RunContext = { runId: id, label, tags: this.tags, source: this.object, ingestedAt: this.ingestedAt };
    this.labels.add(label);
    // A diskperf or fio run is one series, its table in its META.
    if (run.format !== 'iostat') {
      this.countSeries(run.endLine);
      if (run.format === 'fio' && run.rows.length > MAX_FIO_POINTS) throw tooManyPoints(run, this.object.key);
      const item = run.format === 'diskperf' ? diskperfRunItem(run, ctx) : fioRunItem(run, ctx);
      for (const tag of runTagItems(item)) this.writer.put(tag);
      this.metas.push(item);
      return;
    }
    const writer = this.samples.get(run.index);
    this.samples.delete(run.index);
    // The samples streamed past without being kept: their time range is what the writer saw.
    const spans: TimeSpan[] = [];
    for (const series of run.series) {
      const key = `${run.index}\u0000${series.device}`;
      if (!this.seen.delete(key)) this.countSeries(run.endLine);
      const span = writer?.span(series.device);
      if (span) spans.push(span);
    }
    const items = iostatRunItem(run, ctx, { span: joinSpans(spans) });
    // The upload's label is listed too: its runs are indexed under it, and its stamp covers every series.
    for (const label of items.seriesLabels) this.labels.add(label);
    for (const s of items.series) this.writer.put(s);
    // A reader that finds a series through the index checks that its run's META exists.
    for (const tag of runTagItems(items.run)) this.writer.put(tag);
    // The META names the samples object: it is queued once the object is stored (closeSamples).
    if (writer === undefined) this.metas.push(items.run);
    else this.closing.push({ writer, meta: items.run });
  }

  /** Everything still queued, then the labels: a label is listed once it has a complete run. */
  async finish(format: string): Promise<StoredVersion> {
    await this.writePending();
    await this.closeSamples();
    await this.flushAll();
    for (const label of this.labels)
      this.writer.put(deviceItem(label, format as Run['format'], this.ingestedAt, this.object.version));
    await this.writer.flush();
    const device = this.objectLabel ?? (this.labels.size === 1 ? [...this.labels][0] : undefined);
    return {
      runIds: this.runIds,
      format,
      ...(device !== undefined ? { device } : {}),
      tags: this.tags,
      warnings: this.warnings,
    };
  }

  /** Write what is ready: row groups and full rounds while parsing; METAs once all before them is written. */
  private async writePending(): Promise<void> {
    await this.noteStarted();
    for (const writer of this.samples.values()) await writer.drain();
    if (this.closing.length > 0) await this.closeSamples();
    if (this.metas.length > 0) await this.flushAll();
    await this.writer.flushFull();
  }

  /** End the samples objects of finished runs; each run's META is queued once its object is stored. */
  private async closeSamples(): Promise<void> {
    for (const { writer, meta } of this.closing.splice(0)) {
      const stored = await writer.finish();
      this.metas.push(stored === undefined ? meta : { ...meta, samples: stored });
    }
  }

  private async flushAll(): Promise<void> {
    await this.noteStarted();
    await this.writer.flush();
    // Every item queued before these METAs is written now: their runs are complete.
    for (const meta of this.metas.splice(0)) this.writer.put(meta);
  }

  private async noteStarted(): Promise<void> {
    const alive = Date.now() - this.lastNote > HEARTBEAT_MS;
    if (this.started <= this.claim.startedRuns && !(alive && this.writer.pending > 0)) return;
    await noteProgress(this.deps, this.claim, this.started, this.now());
    this.lastNote = Date.now();
  }

  private idOf(index: number): string {
    this.started = Math.max(this.started, index + 1);
    return makeRunId(this.object.bucket, this.object.key, this.object.version, index);
  }

  private samplesFor(index: number): SamplesWriter {
    let writer = this.samples.get(index);
    if (writer === undefined) this.samples.set(index, (writer = new SamplesWriter(this.deps, this.idOf(index))));
    return writer;
  }

  /** One more series (a device of a run, or a diskperf run): past the limit, the file fails at this line. */
  private countSeries(line: number): void {
    const max = this.deps.maxSeriesPerFile ?? LAB_DEFAULTS.maxSeriesPerFile;
    if (++this.series <= max) return;
    const limit = max.toLocaleString('en-US');
    throw new ParseError({
      source: this.object.key,
      line,
      problem:
        `series number ${this.series.toLocaleString('en-US')} (devices x runs) in one file, ` +
        `more than this lab's limit of ${limit}`,
      expected: `at most ${limit} series a file: split the log into smaller files, or raise the lab's maxSeriesPerFile`,
    });
  }

  private now(): string {
    return (this.deps.now ?? (() => new Date().toISOString()))();
  }
}
