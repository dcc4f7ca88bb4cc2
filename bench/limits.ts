/**
 * `npm run bench:limits`: what the ingest limits admit, at their edge (issue 13).
 *
 *   1. the widest file the limits admit: maxSeriesPerFile (20,000) series, two
 *      Solaris `iostat -xn` sessions of 10,000 devices (the per-session limit),
 *      20 reports each, ingested by the ingest path alone (bench/runner-process.ts:
 *      the handler bundled as the stack bundles it, in a plain node process);
 *      its peak RSS (VmHWM) against the target;
 *   2. one series more: the upload fails at the row that passes the limit;
 *   3. a 50,000-series upload (the limit raised for it) ingested, then deleted
 *      by an ObjectRemoved event: the delete's wall time against one
 *      invocation's timeout, and nothing of it left in the table.
 *
 * S3 is s3rver in this process, DynamoDB dynalite in a child process of its own
 * (harness/emulators.ts); the runner is a third process. Exit 1 when a
 * check fails; a missed target is only reported.
 */
import '../shared/node-support-notice.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { s3EventRecord, sequencerGenerator, type S3EventRecordInput } from '../infra/local/events.ts';
import { ENV, INGEST_LIMITS, LAB_DEFAULTS } from '../shared/config.ts';
import { objectRefOf } from '../shared/ingest.ts';
import { runPk } from '../shared/store/keys.ts';
import type { UploadRecord } from '../shared/store/items.ts';
import { REGION, startEmulators, type Emulators } from '../harness/emulators.ts';
import { solarisDevices, solarisIostatLog } from '../harness/logs.ts';
import { getUpload } from '../harness/table.ts';
import '../harness/quiet.ts';
import { bundleIngestRunner, createRunnerTable, runIngestRunner, type RunnerEndpoints } from './runner-process.ts';
import { loadAverage, table } from './stats.ts';

const RSS_TARGET_MB = 512;
/** A single invocation's time: a delete that takes longer goes on in continuation messages. */
const DELETE_TARGET_S = INGEST_LIMITS.timeoutSeconds;
const SESSION_DEVICES = 10_000;
const WIDE_SERIES = LAB_DEFAULTS.maxSeriesPerFile;
const DELETE_SERIES = 50_000;
const TABLE = 'benchdrop-bench-limits';
const MB = 1_000_000;

class CheckFailed extends Error {}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const count = (n: number) => n.toLocaleString('en-US');

/** `series` series as Solaris sessions of at most SESSION_DEVICES devices. */
function wideLog(series: number, reports: number): string {
  const sessions: string[] = [];
  for (let left = series; left > 0; left -= SESSION_DEVICES)
    sessions.push(solarisIostatLog({ reports, devices: solarisDevices(Math.min(left, SESSION_DEVICES)) }));
  return sessions.join('');
}

interface Context {
  env: Emulators;
  endpoints: RunnerEndpoints;
  bundle: string;
  scratch: string;
  sequencer: () => string;
}

async function putLog(ctx: Context, key: string, body: string): Promise<S3EventRecordInput> {
  const put = await ctx.env.put(key, body);
  return {
    eventName: 'ObjectCreated:Put',
    bucket: ctx.env.bucket,
    key,
    size: put.size,
    eTag: put.eTag,
    sequencer: ctx.sequencer(),
  };
}

async function uploadRecord(ctx: Context, record: S3EventRecordInput): Promise<UploadRecord | undefined> {
  const { version } = objectRefOf(s3EventRecord(record));
  return (await getUpload({ db: ctx.env.db, tableName: TABLE }, record.bucket, record.key, version)) as
    UploadRecord | undefined;
}

/** Every run partition's key starts so. */
const RUN_PK_PREFIX = runPk('');

/** Items of the table whose partition is a run (left behind if any after a delete). */
async function runItems(ctx: Context): Promise<number> {
  let items = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ctx.env.db.send(
      new ScanCommand({ TableName: TABLE, ExclusiveStartKey: start, ProjectionExpression: 'pk' }),
    );
    items += (page.Items ?? []).filter((i) => String(i['pk']).startsWith(RUN_PK_PREFIX)).length;
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

const removalOf = (ctx: Context, uploaded: S3EventRecordInput): S3EventRecordInput => ({
  eventName: 'ObjectRemoved:DeleteMarkerCreated',
  bucket: uploaded.bucket,
  key: uploaded.key,
  sequencer: ctx.sequencer(),
});

/** Step 1: the widest file admitted, ingested; its peak RSS in MB. */
async function ingestWidest(ctx: Context): Promise<{ record: S3EventRecordInput; peakMB: number }> {
  console.log(
    `\n1. the widest file admitted: ${count(WIDE_SERIES)} series ` +
      `(${WIDE_SERIES / SESSION_DEVICES} sessions x ${count(SESSION_DEVICES)} devices, 20 reports)`,
  );
  const wideBody = wideLog(WIDE_SERIES, 20);
  const wide = await putLog(ctx, 'wide/limit.iostat.txt', wideBody);
  const wideRun = await runIngestRunner(ctx.bundle, ctx.scratch, ctx.endpoints, TABLE, wide);
  const wideRecord = await uploadRecord(ctx, wide);
  if (wideRecord?.status !== 'ready' || wideRecord.runCount !== WIDE_SERIES / SESSION_DEVICES)
    throw new CheckFailed(`the widest file: ${JSON.stringify(wideRecord)?.slice(0, 300)}`);
  const peakMB = (wideRun.result.rss.peakKiB * 1024) / MB;
  console.log(
    `  ${(wideBody.length / MB).toFixed(1)} MB ready in ${seconds(wideRun.result.ms)} ` +
      `(CPU ${seconds(wideRun.result.cpuMs)}), peak RSS ${peakMB.toFixed(0)} MB ${wideRun.result.rss.source}`,
  );
  return { record: wide, peakMB };
}

/** Step 2: one series more fails at the row that passes the limit. */
async function ingestOneMore(ctx: Context): Promise<void> {
  console.log(`\n2. one series more: ${count(WIDE_SERIES + 1)}`);
  const over = await putLog(ctx, 'wide/over.iostat.txt', wideLog(WIDE_SERIES + 1, 2));
  await runIngestRunner(ctx.bundle, ctx.scratch, ctx.endpoints, TABLE, over);
  const overRecord = await uploadRecord(ctx, over);
  if (
    overRecord?.status !== 'failed' ||
    !/more than this lab's limit of 20,000/.test(overRecord.message ?? '') ||
    !(overRecord.line! > 0)
  )
    throw new CheckFailed(`one series more: ${JSON.stringify(overRecord)?.slice(0, 400)}`);
  console.log(`  failed at line ${overRecord.line}: ${overRecord.message?.slice(0, 140)}...`);
}

/**
 * Step 3: a big upload ingested with the limit raised, then deleted (and the widest file too); the
 * delete's seconds.
 */
async function ingestAndDelete(ctx: Context, wide: S3EventRecordInput): Promise<number> {
  console.log(`\n3. a ${count(DELETE_SERIES)}-series upload, ingested (limit raised for it), then deleted`);
  const big = await putLog(ctx, 'wide/fifty.iostat.txt', wideLog(DELETE_SERIES, 3));
  const raised = { [ENV.maxSeriesPerFile]: String(DELETE_SERIES) };
  const bigRun = await runIngestRunner(ctx.bundle, ctx.scratch, ctx.endpoints, TABLE, big, raised);
  if ((await uploadRecord(ctx, big))?.status !== 'ready')
    throw new CheckFailed('the 50,000-series upload did not end ready');
  const itemsBefore = await runItems(ctx);
  console.log(
    `  ingested in ${seconds(bigRun.result.ms)}, ` +
      `peak RSS ${((bigRun.result.rss.peakKiB * 1024) / MB).toFixed(0)} MB; ` +
      `${count(itemsBefore)} run items in the table`,
  );
  const deleteRun = await runIngestRunner(ctx.bundle, ctx.scratch, ctx.endpoints, TABLE, removalOf(ctx, big));
  const bigLeft = (await uploadRecord(ctx, big))?.status;
  await runIngestRunner(ctx.bundle, ctx.scratch, ctx.endpoints, TABLE, removalOf(ctx, wide));
  const itemsAfter = await runItems(ctx);
  if (bigLeft !== 'deleted' || itemsAfter !== 0)
    throw new CheckFailed(`after the deletes: record ${bigLeft}, ${itemsAfter} run items left`);
  console.log(
    `  deleted in ${seconds(deleteRun.result.ms)} (CPU ${seconds(deleteRun.result.cpuMs)}); 0 run items left`,
  );
  return deleteRun.result.ms / 1000;
}

function printTargets(widePeakMB: number, deleteS: number): void {
  const rssMet = widePeakMB <= RSS_TARGET_MB;
  const deleteMet = deleteS <= DELETE_TARGET_S;
  const rows = [
    ['figure', 'value', 'target', ''],
    [
      `ingest path peak RSS, ${count(WIDE_SERIES)} series (VmHWM)`,
      `${widePeakMB.toFixed(0)} MB`,
      `<= ${RSS_TARGET_MB} MB`,
      rssMet ? 'met' : 'NOT met',
    ],
    [
      `delete of ${count(DELETE_SERIES)} series, one invocation`,
      `${deleteS.toFixed(1)} s`,
      `<= ${DELETE_TARGET_S} s`,
      deleteMet ? 'met' : 'NOT met',
    ],
  ];
  console.log(`\n${table(rows, (c) => c === 1 || c === 2)}`);
  const missed = [
    ...(rssMet ? [] : [`peak RSS ${widePeakMB.toFixed(0)} MB > ${RSS_TARGET_MB} MB`]),
    ...(deleteMet ? [] : [`delete ${deleteS.toFixed(0)} s > ${DELETE_TARGET_S} s`]),
  ];
  console.log(`\ntargets: ${missed.length === 0 ? 'all met' : `NOT met: ${missed.join('; ')}`}`);
}

async function main(): Promise<number> {
  const started = performance.now();
  console.log('benchdrop limits benchmark (npm run bench:limits)');
  console.log(
    `machine: ${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}); node ${process.version}; ` +
      `load average ${loadAverage()}`,
  );
  const scratch = await mkdtemp(join(tmpdir(), 'benchdrop-bench-limits-'));
  const env = await startEmulators({ dynaliteProcess: true, maxUploadBytes: LAB_DEFAULTS.maxUploadMB * MB });
  let failed = false;
  try {
    const ctx: Context = {
      env,
      endpoints: {
        region: REGION,
        s3Endpoint: env.s3Endpoint,
        dynamodbEndpoint: env.dynamodbEndpoint,
        resultsBucket: env.resultsBucket,
      },
      bundle: await bundleIngestRunner(),
      scratch,
      sequencer: sequencerGenerator(),
    };
    await createRunnerTable(ctx.endpoints, TABLE);
    const wide = await ingestWidest(ctx);
    await ingestOneMore(ctx);
    const deleteS = await ingestAndDelete(ctx, wide.record);
    printTargets(wide.peakMB, deleteS);
  } catch (error) {
    failed = true;
    console.log(
      error instanceof CheckFailed
        ? `\nCHECK FAILED: ${error.message}`
        : `\nFAILED: ${(error as Error).stack ?? String(error)}`,
    );
  } finally {
    await env.stop();
    await rm(scratch, { recursive: true, force: true });
  }
  console.log(`bench:limits took ${seconds(performance.now() - started)}`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
