/**
 * One object version from S3 into the store while it is read: samples become
 * chunk items as they come, a finished run's index entries (series, tags) go
 * out at once, and its META item (the mark of a complete run) as soon as every
 * item before it is written; the device labels come last. Memory stays bounded:
 * partial chunks are capped (MAX_BUFFERED_SAMPLES), a file may hold at most
 * maxSeriesPerFile series, and nothing of a finished run is kept but its labels.
 *
 * Before the items of a new run are written, the upload record notes that the
 * run was started (uploads.ts noteProgress): whoever ends the version as failed
 * knows which runs to remove.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { LAB_DEFAULTS } from '../config.ts';
import { labelFromObject, labelFromRun, parseTags } from '../labels.ts';
import type { IostatSample, Run } from '../model.ts';
import { ParseError, parseStream } from '../parsers/index.ts';
import { BatchWriter } from '../store/batch.ts';
import { CHUNK_SAMPLES, runId as makeRunId } from '../store/keys.ts';
import { ChunkBuilder } from '../store/chunks.ts';
import { deviceItem, runTagItems, type ObjectRef, type RunContext, type TimeSpan } from '../store/items.ts';
import { diskperfRunItem, iostatRunItem, joinSpans } from '../store/run-items.ts';
import { noteProgress, type Claim } from '../store/uploads.ts';
import { PermanentFailure, type IngestDeps } from './deps.ts';

/** Samples held in partial chunks across all series before they are written as they are. */
export const MAX_BUFFERED_SAMPLES = 50_000;
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
  const parsed = await parseStream(writer.feed(body), {
    source: object.key,
    keepSamples: false,
    maxBytes: deps.maxUploadBytes,
    onIostatSample: (index, native, sample) => writer.sample(index, native, sample),
    onRun: (run) => writer.run(run),
  });
  return writer.finish(parsed.format);
}

class VersionWriter {
  private readonly writer: BatchWriter;
  private readonly chunks = new Map<string, ChunkBuilder>();
  private readonly ingestedAt: string;
  /** Samples waiting in partial chunks. */
  private buffered = 0;
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
    this.ingestedAt = this.now();
  }

  /** The object's bytes, with what the parser produced written before each chunk of input. */
  async *feed(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of body) {
      await this.writePending();
      yield chunk;
    }
  }

  sample(index: number, native: string, sample: IostatSample): void {
    const full = this.builderFor(index, native, sample.line).add(sample);
    this.buffered++;
    if (full) {
      this.writer.put(full);
      this.buffered -= full.count;
    }
    if (this.buffered >= MAX_BUFFERED_SAMPLES) {
      // Thousands of devices would each hold CHUNK_SAMPLES samples: write the partial chunks now
      // (chunks carry their count).
      for (const builder of this.chunks.values()) {
        const part = builder.finish();
        if (part) this.writer.put(part);
      }
      this.buffered = 0;
    }
  }

  run(run: Run): void {
    const id = this.idOf(run.index);
    this.runIds.push(id);
    this.warnings += run.warnings.length;
    const label = this.objectLabel ?? labelFromRun(run.name, this.object.key);
    const ctx: RunContext = { runId: id, label, tags: this.tags, source: this.object, ingestedAt: this.ingestedAt };
    this.labels.add(label);
    if (run.format === 'diskperf') {
      this.countSeries(run.endLine);
      const item = diskperfRunItem(run, ctx);
      for (const tag of runTagItems(item)) this.writer.put(tag);
      this.metas.push(item);
      return;
    }
    const counts = new Map<string, number>();
    // The samples streamed past without being kept: their time range is what the builders saw.
    const spans: TimeSpan[] = [];
    for (const series of run.series) {
      const key = `${run.index}\u0000${series.device}`;
      const builder = this.chunks.get(key);
      if (builder === undefined) {
        this.countSeries(run.endLine);
      } else {
        const last = builder.finish();
        if (last) {
          this.writer.put(last);
          this.buffered -= last.count;
        }
        counts.set(series.device, builder.chunks);
        if (builder.span) spans.push(builder.span);
        this.chunks.delete(key);
      }
    }
    const items = iostatRunItem(run, ctx, (native) => counts.get(native) ?? 0, joinSpans(spans));
    // The upload's label is listed too: its runs are indexed under it, and its stamp covers every series.
    for (const s of items.series) {
      this.labels.add(s.device);
      this.writer.put(s);
    }
    // A reader that finds a series through the index checks that its run's META exists.
    for (const tag of runTagItems(items.run)) this.writer.put(tag);
    this.metas.push(items.run);
  }

  /** Everything still queued, then the labels: a label is listed once it has a complete run. */
  async finish(format: string): Promise<StoredVersion> {
    await this.writePending();
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

  /** Write what is ready: full rounds while parsing; METAs once all before them is written. */
  private async writePending(): Promise<void> {
    if (this.metas.length > 0) await this.flushAll();
    await this.noteStarted();
    await this.writer.flushFull();
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

  private builderFor(index: number, native: string, line: number): ChunkBuilder {
    const key = `${index}\u0000${native}`;
    let builder = this.chunks.get(key);
    if (builder === undefined) {
      this.countSeries(line);
      this.chunks.set(key, (builder = new ChunkBuilder(this.idOf(index), native, CHUNK_SAMPLES)));
    }
    return builder;
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
