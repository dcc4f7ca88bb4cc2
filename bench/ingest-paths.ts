/**
 * Time to `ready` for one large iostat log, the samples written the new way
 * and the old way, in the same run on the same machine (issue 17, point 3):
 *
 *   - new: the ingest handler as shipped (functions/ingest/handler.ts): each
 *     run's samples stream into one Parquet object in the results bucket, and
 *     the table gets only the run's META, SERIES and TAG items;
 *   - old (the baseline): the same object streamed through the same parser,
 *     the samples written as the CHUNK items ingest used to write
 *     (bench/baseline-chunks.ts, 250 samples of one series each), then the same
 *     SERIES, TAG and META items, in the order the old ingest used.
 *
 * Both read the log from s3rver and write to one dynalite in a child process
 * (harness/emulators.ts), the old path first, on a fresh table. Time runs from
 * the start of the read to the end of the last write; the new path also claims
 * and settles its upload record, which the old one skips (a few writes).
 * Target: the new path at least TARGET_SPEEDUP times as fast.
 *
 *   npx tsx bench/ingest-paths.ts [--size-mb 200]   (bench:ingest runs it too)
 */
import '../shared/node-support-notice.ts';
import '../harness/quiet.ts';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { Upload } from '@aws-sdk/lib-storage';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { handler, setIngestDeps } from '../functions/ingest/handler.ts';
import { s3EventRecord, sequencerGenerator, sqsEvent } from '../infra/local/events.ts';
import { untilStored } from '../infra/local/s3rver-writes.ts';
import { objectRefOf } from '../shared/ingest.ts';
import { labelFromObject } from '../shared/labels.ts';
import type { IostatRun, Run } from '../shared/model.ts';
import { parseStream } from '../shared/parsers/index.ts';
import { BatchWriter } from '../shared/store/batch.ts';
import { deviceItem, runTagItems, type TimeSpan } from '../shared/store/items.ts';
import { runId, runPk, RUN_META_SK } from '../shared/store/keys.ts';
import { iostatRunItem, joinSpans } from '../shared/store/run-items.ts';
import { startEmulators, type Emulators } from '../harness/emulators.ts';
import { lambdaContext } from '../harness/lambda.ts';
import { getUpload } from '../harness/table.ts';
import { numberArg } from './args.ts';
import { ChunkBuilder, CHUNK_SAMPLES } from './baseline-chunks.ts';
import { ensureLog, MB, type GeneratedLog } from './generate.ts';

/** The new path must reach `ready` at least this many times as fast as the old one. */
export const TARGET_SPEEDUP = 2;
/** Samples held in partial chunks before they are written as they are (the old ingest's cap). */
const BASELINE_MAX_BUFFERED = 50_000;

export interface PathTimes {
  bytes: number;
  /** Seconds to `ready` with the samples object. */
  newSeconds: number;
  /** Seconds to the last item with CHUNK items. */
  oldSeconds: number;
  /** Items each path wrote to the table. */
  newItems: number;
  oldItems: number;
  samplesObjectBytes: number;
}

/** The log into s3rver by a multipart upload from its file; its size and eTag for the event. */
async function uploadLog(env: Emulators, key: string, log: GeneratedLog): Promise<{ eTag: string; size: number }> {
  const done = await new Upload({
    client: env.s3,
    params: { Bucket: env.bucket, Key: key, Body: createReadStream(log.path), ContentType: 'text/plain' },
  }).done();
  if (!(await untilStored(env.s3, env.bucket, key, log.bytes, 60_000)))
    throw new Error(`s3rver does not hold the ${log.bytes} bytes of ${key}`);
  return { eTag: (done.ETag ?? '').replace(/"/g, ''), size: log.bytes };
}

/** The old ingest's writes for one object: CHUNK items as samples stream past, then each run's items. */
async function baselineIngest(env: Emulators, key: string, version: string): Promise<number> {
  const response = await env.s3.send(new GetObjectCommand({ Bucket: env.bucket, Key: key }));
  const writer = new BatchWriter(env.db, env.tableName);
  const builders = new Map<string, ChunkBuilder>();
  const metas: object[] = [];
  const labels = new Set<string>();
  const label = labelFromObject(key, {}) ?? 'baseline';
  const ingestedAt = new Date().toISOString();
  let buffered = 0;
  // As the old VersionWriter: what is ready goes out before each chunk of input, METAs once all before them is.
  async function* feed(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of body) {
      if (metas.length > 0) {
        await writer.flush();
        for (const meta of metas.splice(0)) writer.put(meta);
      }
      await writer.flushFull();
      yield chunk;
    }
  }
  const builderFor = (index: number, native: string) => {
    const id = `${index}\u0000${native}`;
    let builder = builders.get(id);
    if (builder === undefined)
      builders.set(id, (builder = new ChunkBuilder(runId(env.bucket, key, version, index), native, CHUNK_SAMPLES)));
    return builder;
  };
  const onRun = (run: Run) => {
    if (run.format !== 'iostat') throw new Error(`the baseline writes iostat runs only, not ${run.format}`);
    const spans: TimeSpan[] = [];
    for (const series of (run as IostatRun).series) {
      const builder = builders.get(`${run.index}\u0000${series.device}`);
      if (builder === undefined) continue;
      const last = builder.finish();
      if (last) {
        writer.put(last);
        buffered -= last.count;
      }
      if (builder.span) spans.push(builder.span);
      builders.delete(`${run.index}\u0000${series.device}`);
    }
    const ctx = {
      runId: runId(env.bucket, key, version, run.index),
      label,
      tags: {},
      source: { bucket: env.bucket, key, version },
      ingestedAt,
    };
    const items = iostatRunItem(run as IostatRun, ctx, { span: joinSpans(spans) });
    for (const label of items.seriesLabels) labels.add(label);
    for (const s of items.series) writer.put(s);
    for (const tag of runTagItems(items.run)) writer.put(tag);
    metas.push(items.run);
  };
  await parseStream(feed(response.Body as Readable & AsyncIterable<Buffer>), {
    source: key,
    keepSamples: false,
    maxBytes: env.deps.maxUploadBytes,
    onIostatSample: (index, native, sample) => {
      const full = builderFor(index, native).add(sample);
      if (full) writer.put(full);
      buffered += full ? 1 - full.count : 1;
      if (buffered >= BASELINE_MAX_BUFFERED) buffered = writePartialChunks(builders, writer);
    },
    onRun,
  });
  await writer.flush();
  for (const meta of metas.splice(0)) writer.put(meta);
  for (const l of [label, ...labels]) writer.put(deviceItem(l, 'iostat', ingestedAt, version));
  await writer.flush();
  return writer.written;
}

/** The old ingest's cap: every partial chunk written as it is; nothing is left buffered. */
function writePartialChunks(builders: Map<string, ChunkBuilder>, writer: BatchWriter): number {
  for (const builder of builders.values()) {
    const part = builder.finish();
    if (part) writer.put(part);
  }
  return 0;
}

/** Times both paths on one log; throws when either does not store it. */
export async function compareIngestPaths(log: GeneratedLog): Promise<PathTimes> {
  const env = await startEmulators({
    maxUploadBytes: Math.max(log.bytes + MB, 10 * MB),
    dynaliteProcess: true,
    tableName: 'benchdrop-bench-paths',
    bucket: 'benchdrop-bench-paths',
  });
  try {
    const key = 'paths/iostat-xn.log';
    const put = await uploadLog(env, key, log);
    const record = s3EventRecord({
      eventName: 'ObjectCreated:Put',
      bucket: env.bucket,
      key,
      size: put.size,
      eTag: put.eTag,
      sequencer: sequencerGenerator(0x1000000000000n)(),
    });
    const version = objectRefOf(record).version;

    let started = performance.now();
    const oldItems = await baselineIngest(env, key, `${version}.baseline`);
    const oldSeconds = (performance.now() - started) / 1000;

    const written = countWrites(env);
    setIngestDeps(env.deps);
    started = performance.now();
    // A context as long as the bench may need: the whole file in one invocation, as Lambda does within 15 minutes.
    const response = await handler(sqsEvent([record]), lambdaContext('benchdrop-ingest', 3_600_000));
    const newSeconds = (performance.now() - started) / 1000;
    setIngestDeps(undefined);
    const upload = await getUpload(env, env.bucket, key, version);
    if (response.batchItemFailures.length > 0 || upload?.status !== 'ready')
      throw new Error(`the new path did not end ready: ${upload?.status ?? 'no record'} ${upload?.message ?? ''}`);
    const meta = await objectBytes(env, (upload.runIds as string[])[0]!);
    return { bytes: log.bytes, newSeconds, oldSeconds, newItems: written(), oldItems, samplesObjectBytes: meta };
  } finally {
    setIngestDeps(undefined);
    await env.stop();
  }
}

/** Items the ingest handler writes from now on (BatchWriteItem requests counted through the client). */
function countWrites(env: Emulators): () => number {
  let items = 0;
  const send = env.db.send.bind(env.db) as (command: unknown, ...rest: unknown[]) => Promise<unknown>;
  (env.db as unknown as { send: unknown }).send = (
    command: { input?: Record<string, unknown> },
    ...rest: unknown[]
  ) => {
    const requests = command.input?.['RequestItems'] as Record<string, unknown[]> | undefined;
    if (requests) for (const list of Object.values(requests)) items += list.length;
    else if (command.input?.['Item'] !== undefined) items++;
    return send(command, ...rest);
  };
  return () => items;
}

/** The size of a run's samples object, as its META names it. */
async function objectBytes(env: Emulators, id: string): Promise<number> {
  const meta = await env.db.send(new GetCommand({ TableName: env.tableName, Key: { pk: runPk(id), sk: RUN_META_SK } }));
  return (meta.Item?.['samples'] as { bytes?: number } | undefined)?.bytes ?? 0;
}

/** The figures and the verdict, as bench:ingest prints them; true when the target is met. */
export function printPathTimes(times: PathTimes): boolean {
  const ratio = times.oldSeconds / times.newSeconds;
  const met = ratio >= TARGET_SPEEDUP;
  const mb = times.bytes / MB;
  console.log(`\ntime to ready, ${mb.toFixed(0)} MB iostat log (same run, same machine, old path first):`);
  console.log(
    `  new (samples object in the results bucket): ${times.newSeconds.toFixed(1)} s, ` +
      `${(mb / times.newSeconds).toFixed(1)} MB/s, ${times.newItems} table items, ` +
      `samples object ${(times.samplesObjectBytes / MB).toFixed(1)} MB`,
  );
  console.log(
    `  old (CHUNK items, the baseline):            ${times.oldSeconds.toFixed(1)} s, ` +
      `${(mb / times.oldSeconds).toFixed(1)} MB/s, ${times.oldItems} table items`,
  );
  console.log(`  speedup ${ratio.toFixed(2)}x; target >= ${TARGET_SPEEDUP}x: ${met ? 'PASS' : 'FAIL'}`);
  return met;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const log = ensureLog('solaris', Math.round(numberArg('--size-mb', 200) * MB));
  try {
    printPathTimes(await compareIngestPaths(log));
  } catch (error) {
    console.error(`ingest paths FAILED: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  }
}
