/**
 * Ingestion of one S3 event record, the domain behind the ingest Lambda and the
 * local lab: stream the object, parse it, write its runs, record the outcome.
 *
 * - A created object version is claimed (`processing`), streamed (gunzipped when
 *   gzip), parsed, and its items written: sample chunks as they come, series index
 *   entries after them, each run's META item (the mark of a complete run), then
 *   the device labels.
 *   It then becomes the key's current version; the runs of the version it
 *   replaces are deleted. The record ends `ready` with its run ids.
 * - Anything wrong with the file itself (cannot be parsed, too large, bad tags) is
 *   permanent: the record ends `failed` with a message and line, and the function
 *   returns normally so the message is not retried. Anything else (throttling,
 *   timeouts) throws, and the queue retries the record.
 * - A removed object (or a delete marker) makes the key's current state
 *   `deleted` and removes its runs. Objects are never written or deleted here.
 * - Replays converge: run ids come from bucket, key, version and position.
 */
import { GetObjectCommand, NoSuchKey, type S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { labelFromObject, labelFromRun, LabelError, parseTags } from './labels.ts';
import { printable } from './printable.ts';
import type { IostatSample, Run } from './model.ts';
import { isParseError, parseStream } from './parsers/index.ts';
import { BatchWriter } from './store/batch.ts';
import { CHUNK_SAMPLES, runId as makeRunId, runIdsOf } from './store/keys.ts';
import { claimUpload, currentObject, deleteRuns, finishPending, finishUpload, makeCurrent, setUploadStatus, type Store, type VersionRuns } from './store/objects.ts';
import { ChunkBuilder, deviceItem, diskperfRunItem, iostatRunItem, MAX_LISTED_RUNS, runTagItems, type ObjectRef, type RunContext } from './store/records.ts';

/** The part of an S3 event record ingestion reads (validated by the handler). */
export interface S3ObjectEvent {
  eventName: string;
  s3: {
    bucket: { name: string };
    object: { key: string; size?: number; eTag?: string; versionId?: string; sequencer?: string };
  };
}

export interface IngestDeps extends Store {
  s3: S3Client;
  maxUploadBytes: number;
  now?: () => string;
}

export type IngestOutcome =
  | { status: 'ready'; object: ObjectRef; runIds: string[]; warnings: number; superseded?: boolean }
  | { status: 'failed'; object: ObjectRef; message: string; line: number }
  | { status: 'duplicate'; object: ObjectRef }
  | { status: 'deleted'; object: ObjectRef; removedRuns: number }
  | { status: 'stale'; object: ObjectRef };

/** S3 event keys are URL-encoded with `+` for spaces. */
export function decodeKey(key: string): string {
  return decodeURIComponent(key.replace(/\+/g, ' '));
}

export function objectRefOf(event: S3ObjectEvent): ObjectRef {
  const o = event.s3.object;
  const eTag = o.eTag?.replace(/"/g, '');
  // Without versioning, the same content uploaded again has the same eTag: the
  // sequencer tells the uploads apart (and a redelivered event keeps it).
  const version = o.versionId ?? ([eTag, o.sequencer].filter(Boolean).join('.') || 'unversioned');
  const ref: ObjectRef = { bucket: event.s3.bucket.name, key: decodeKey(o.key), version };
  if (o.versionId !== undefined) ref.versionId = o.versionId;
  if (eTag !== undefined) ref.eTag = eTag;
  if (o.size !== undefined) ref.size = o.size;
  if (o.sequencer !== undefined) ref.sequencer = o.sequencer;
  return ref;
}

export async function ingestRecord(event: S3ObjectEvent, deps: IngestDeps): Promise<IngestOutcome> {
  const object = objectRefOf(event);
  if (event.eventName.startsWith('ObjectRemoved')) return removeObject(object, event.eventName === 'ObjectRemoved:Delete', deps);
  return ingestObject(object, deps);
}

const now = (deps: IngestDeps) => (deps.now ?? (() => new Date().toISOString()))();

/** Samples held in partial chunks across all series before they are written as they are (see onIostatSample). */
export const MAX_BUFFERED_SAMPLES = 50_000;

class PermanentFailure extends Error {
  constructor(
    message: string,
    readonly line = 0,
  ) {
    // Messages name the key, which may hold any character: escaped, they are safe to print.
    super(printable(message));
  }
}

async function ingestObject(object: ObjectRef, deps: IngestDeps): Promise<IngestOutcome> {
  if (!(await claimUpload(deps, object, now(deps)))) return { status: 'duplicate', object };
  const seenRuns = new Set<string>();
  try {
    const result = await parseAndStore(object, deps, seenRuns);
    const current = await makeCurrent(deps, object, result.runIds.length, false);
    const summary = { format: result.format, device: result.device, tags: result.tags, warnings: result.warnings };
    if (current.stale) {
      // A newer version of the key already won: this one's runs must not show.
      await deleteRuns(deps, result.runIds, now(deps));
      await finishUpload(deps, object, 'ready', { ...summary, message: 'superseded by a newer version of this key' }, now(deps));
      return { status: 'ready', object, runIds: [], warnings: result.warnings, superseded: true };
    }
    await removePending(object, current.pending, deps);
    await finishUpload(deps, object, 'ready', { ...summary, runIds: result.runIds.slice(0, MAX_LISTED_RUNS), runCount: result.runIds.length }, now(deps));
    return { status: 'ready', object, runIds: result.runIds, warnings: result.warnings };
  } catch (error) {
    const failure = permanentFailure(error, object);
    if (failure === undefined) throw error;
    // Items written before the failure belong to no complete run: remove them.
    await deleteRuns(deps, [...seenRuns], now(deps));
    await finishUpload(deps, object, 'failed', { message: failure.message, line: failure.line }, now(deps));
    return { status: 'failed', object, message: failure.message, line: failure.line };
  }
}

/** The failure a person must fix (the file, its size, its metadata), or undefined for a transient one. */
function permanentFailure(error: unknown, object: ObjectRef): PermanentFailure | undefined {
  if (error instanceof PermanentFailure) return error;
  if (isParseError(error)) return new PermanentFailure(error.message, error.line);
  // DynamoDB refusing an item (too large, bad value) will refuse it again: no retry helps.
  if ((error as { name?: string })?.name === 'ValidationException') return new PermanentFailure(`${object.key}: could not be stored: ${(error as Error).message}`);
  if (error instanceof LabelError) return new PermanentFailure(`${object.key}: ${error.message}`);
  if (error instanceof NoSuchKey || (error as { name?: string })?.name === 'NoSuchKey' || (error as { name?: string })?.name === 'NoSuchVersion') {
    return new PermanentFailure(`${object.key}: the object (version ${object.version}) no longer exists in ${object.bucket}`);
  }
  return undefined;
}

interface Stored {
  runIds: string[];
  format: string;
  device?: string;
  tags: Record<string, string>;
  warnings: number;
}

async function parseAndStore(object: ObjectRef, deps: IngestDeps, seenRuns: Set<string>): Promise<Stored> {
  const response = await deps.s3.send(new GetObjectCommand({ Bucket: object.bucket, Key: object.key, ...(object.versionId ? { VersionId: object.versionId } : {}) }));
  const size = response.ContentLength ?? object.size ?? 0;
  if (size > deps.maxUploadBytes) {
    (response.Body as Readable | undefined)?.destroy();
    throw new PermanentFailure(
      `${object.key}: ${size} bytes, more than this lab's limit of ${deps.maxUploadBytes} bytes; split the log into smaller files, or raise the lab's maxUploadMB`,
    );
  }
  const metadata = response.Metadata ?? {};
  const objectLabel = labelFromObject(object.key, metadata);
  const tags = parseTags(metadata['tags']);
  const ingestedAt = now(deps);
  const writer = new BatchWriter(deps.db, deps.tableName);
  const chunks = new Map<string, ChunkBuilder>();
  /** Samples waiting in partial chunks. */
  let buffered = 0;
  // Written after every chunk: index entries (series), then the META items that complete runs.
  const indexItems: object[] = [];
  const metaItems: object[] = [];
  const runIds: string[] = [];
  const labels = new Set<string>();
  let warnings = 0;

  const idOf = (index: number) => {
    const id = makeRunId(object.bucket, object.key, object.version, index);
    seenRuns.add(id);
    return id;
  };
  const builderFor = (index: number, native: string) => {
    const key = `${index}\u0000${native}`;
    let builder = chunks.get(key);
    if (builder === undefined) chunks.set(key, (builder = new ChunkBuilder(idOf(index), native, CHUNK_SAMPLES)));
    return builder;
  };

  const onIostatSample = (index: number, native: string, sample: IostatSample) => {
    const full = builderFor(index, native).add(sample);
    buffered++;
    if (full) {
      writer.put(full);
      buffered -= full.count;
    }
    if (buffered >= MAX_BUFFERED_SAMPLES) {
      // Thousands of devices would each hold CHUNK_SAMPLES samples: write the partial chunks now (chunks carry their count).
      for (const builder of chunks.values()) {
        const part = builder.finish();
        if (part) writer.put(part);
      }
      buffered = 0;
    }
  };
  const onRun = (run: Run) => {
    const id = idOf(run.index);
    runIds.push(id);
    warnings += run.warnings.length;
    const label = objectLabel ?? labelFromRun(run.name, object.key);
    const ctx: RunContext = { runId: id, label, tags, source: object, ingestedAt };
    if (run.format === 'diskperf') {
      labels.add(label);
      const item = diskperfRunItem(run, ctx);
      indexItems.push(...runTagItems(item));
      metaItems.push(item);
      return;
    }
    const counts = new Map<string, number>();
    for (const series of run.series) {
      const builder = builderFor(run.index, series.device);
      const last = builder.finish();
      if (last) {
        writer.put(last);
        buffered -= last.count;
      }
      counts.set(series.device, builder.chunks);
      chunks.delete(`${run.index}\u0000${series.device}`);
    }
    const items = iostatRunItem(run, ctx, (native) => counts.get(native) ?? 0);
    // The upload's label is listed too: its runs are indexed under it, and its stamp covers every series.
    labels.add(label);
    for (const s of items.series) labels.add(s.device);
    // A reader that finds a series through the index checks that its run's META exists.
    indexItems.push(...items.series, ...runTagItems(items.run));
    metaItems.push(items.run);
  };

  // Write while reading: before each chunk of input, send what the parser produced.
  async function* withBackpressure(body: AsyncIterable<Buffer>) {
    for await (const chunk of body) {
      await writer.flushFull();
      yield chunk;
    }
  }

  const body = response.Body as (Readable & AsyncIterable<Buffer>) | undefined;
  if (body === undefined) throw new PermanentFailure(`${object.key}: the object has no body`);
  const parsed = await parseStream(withBackpressure(body), { source: object.key, keepSamples: false, maxBytes: deps.maxUploadBytes, onIostatSample, onRun });
  await writer.flush();
  for (const item of indexItems) writer.put(item);
  await writer.flush();
  for (const item of metaItems) writer.put(item);
  await writer.flush();
  // Labels last: GET /devices lists a label once it has a complete run, even if the
  // function dies in between (then the runs are found by exact device until a retry).
  for (const label of labels) writer.put(deviceItem(label, parsed.format, ingestedAt, object.version));
  await writer.flush();
  const device = objectLabel ?? (labels.size === 1 ? [...labels][0] : undefined);
  return { runIds, format: parsed.format, ...(device !== undefined ? { device } : {}), tags, warnings };
}

/** Remove the runs of the versions a new state replaced, then forget them. */
async function removePending(object: ObjectRef, pending: readonly VersionRuns[], deps: IngestDeps): Promise<number> {
  let removed = 0;
  for (const old of pending) {
    await deleteRuns(deps, runIdsOf(object.bucket, object.key, old.version, old.runCount), now(deps));
    removed += old.runCount;
  }
  if (pending.length > 0) await finishPending(deps, object);
  return removed;
}

async function removeObject(object: ObjectRef, versionDeleted: boolean, deps: IngestDeps): Promise<IngestOutcome> {
  // `delete-object --version-id V` (ObjectRemoved:Delete with a versionId) of a version
  // that is not current changes nothing visible; a delete marker always hides the key.
  if (versionDeleted && object.versionId !== undefined) {
    const existing = await currentObject(deps, object.bucket, object.key);
    if (existing !== undefined && !existing.deleted && existing.version !== object.versionId && !(existing.pending ?? []).length) {
      await setUploadStatus(deps, object.bucket, object.key, object.versionId, 'deleted', 'this version was deleted; it was not the current one', now(deps));
      return { status: 'deleted', object, removedRuns: 0 };
    }
  }
  const current = await makeCurrent(deps, object, 0, true);
  if (current.stale) return { status: 'stale', object };
  const removed = await removePending(object, current.pending, deps);
  for (const old of current.pending) {
    await setUploadStatus(deps, object.bucket, object.key, old.version, 'deleted', 'the object was deleted; its runs were removed', now(deps));
  }
  return { status: 'deleted', object, removedRuns: removed };
}

