/**
 * Faults (issue 7, item 2): the real ingest handler against dynalite and s3rver
 * seen through a fault-injecting proxy (test/support/fault-proxy.ts), compared
 * with fault-free runs of the same uploads.
 *
 * - faults: 200 uploads (every parser fixture that parses, the four sample logs
 *   among them, and long generated sessions; some gzipped, some with device/tag
 *   metadata, 20 of them a second version of an earlier key) under 20% injected
 *   faults on every DynamoDB and S3 request,
 *   delivered by the lab's queue (infra/local/queue.ts: failed messages come back
 *   as SQS redelivers them, at most 3 receives). Every upload must end `ready`
 *   and the table must hold exactly the items of a fault-free run.
 * - kill: the handler in a child process, SIGKILLed when the proxy sees its Nth
 *   BatchWriteItem; between the kill and the redelivery the readers of the API
 *   show no half run; after the redelivery the table equals the fault-free one.
 * - cut downloads: the first GetObject answer of every long object breaks off
 *   mid-body; after the redelivery, the same table as an unbroken run.
 * - duplicates: every event delivered 3 times at once: the same table as once.
 *
 * Items are compared whole, after one normalisation: timestamps taken from the
 * clock during the run (ISO strings with milliseconds falling inside the run:
 * createdAt, updatedAt, ingestedAt, lastSeen, the `time` of a run whose log
 * prints no date, and the same values inside gsi1sk and gsi2sk) read `<clock>`.
 * They differ between any two runs, faults or not. Times printed in the logs
 * are never in the run's window and stay as they are. A label's change stamp
 * (DeviceItem.changed) reads `<stamp>`: it names whichever write changed the
 * label last (an upload, or the removal of a replaced run), and the order of
 * concurrent writes is the only thing that differs there; that each change
 * gives a new stamp is tested in test/integration/api.test.ts.
 */
import '../../harness/quiet.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { build, type BuildOptions } from 'esbuild';
import { bundleEncoderWorker } from '../../infra/encoder-worker.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler, setIngestDeps } from '../../functions/ingest/handler.ts';
import { LocalQueue } from '../../infra/local/queue.ts';
import {
  s3EventRecord,
  s3Notification,
  sequencerGenerator,
  sqsEvent,
  type S3NotificationRecord,
} from '../../infra/local/events.ts';
import { createDocumentClient, createS3Client, INGEST_DYNAMODB_ATTEMPTS } from '../../shared/aws.ts';
import { ENV } from '../../shared/config.ts';
import { SDK_NODE_NOTICE_OFF } from '../../shared/node-support-notice.ts';
import type { IngestDeps } from '../../shared/ingest.ts';
import { parseSelector } from '../../shared/selectors.ts';
import { runPk } from '../../shared/store/keys.ts';
import { MAX_SERIES_IN_META } from '../../shared/store/items.ts';
import { getRun, listDevices, listRuns } from '../../shared/listings.ts';
import { resolveSelector } from '../../shared/compare/selection.ts';
import {
  REGION,
  S3RVER_CREDENTIALS,
  startEmulators,
  type Emulators,
  type PutOptions,
} from '../../harness/emulators.ts';
import { startFaultProxy, type Intercept } from '../support/fault-proxy.ts';
import { lambdaContext } from '../../harness/lambda.ts';
import { solarisDevices, solarisIostatLog } from '../../harness/logs.ts';
import { recordStressSummary } from '../support/stress-summary.ts';
import { byKey, queryAll, scanAll, type Item, type TableRef } from '../../harness/table.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const FIXTURES = join(HERE, '../fixtures');
const INGEST_PROCESS = join(HERE, '../support/ingest-process.ts');

const UPLOADS = 200;
/** Of the 200, this many are a second version of an earlier key (delivered after the first versions). */
const REPLACEMENTS = 20;
const FAULT_RATE = 0.2;
const SEED = Number(process.env['BENCHDROP_FAULT_SEED'] ?? 20240501);
const MAX_UPLOAD_BYTES = 50_000_000;
/** Scaled-down SQS visibility timeout: a failed message is received again after 100 ms, 200 ms, ... */
const RETRY_DELAY_MS = 100;

let env: Emulators;
const sequencer = sequencerGenerator(0x2000000000000n);

beforeAll(async () => {
  env = await startEmulators({ maxUploadBytes: MAX_UPLOAD_BYTES, tableName: 'faults-unused' });
});

afterAll(async () => {
  setIngestDeps(undefined);
  await env?.stop();
});

// ---------------------------------------------------------------- the logs

interface Log {
  name: string;
  group: string;
  bytes: Buffer;
  /** Always uploaded gzipped (others: every 4th upload is). */
  gzip?: boolean;
}

/** Every fixture that parses (their expected.json says which do not; the four sample logs are among them). */
function corpus(): Log[] {
  const logs: Log[] = [];
  for (const group of ['irix', 'solaris', 'linux', 'freebsd']) {
    for (const name of readdirSync(join(FIXTURES, group)).sort()) {
      if (name.endsWith('.expected.json') || !/\.(txt|json)$/.test(name)) continue;
      const expected = JSON.parse(
        readFileSync(join(FIXTURES, group, `${name.replace(/\.(txt|json)$/, '')}.expected.json`), 'utf8'),
      ) as { error?: unknown };
      if (expected.error === undefined) logs.push({ name, group, bytes: readFileSync(join(FIXTURES, group, name)) });
    }
  }
  // Long sessions: many chunks, MBs to stream (and to cut mid-body), plain and gzipped.
  const long16 = Buffer.from(solarisIostatLog({ reports: 1500, devices: solarisDevices(16), host: 'gen16' }));
  const long40 = Buffer.from(solarisIostatLog({ reports: 600, devices: solarisDevices(40), host: 'gen40' }));
  logs.push({ name: 'generated-solaris-16dev.iostat.txt', group: 'solaris', bytes: long16 });
  logs.push({ name: 'generated-solaris-40dev.iostat.txt', group: 'solaris', bytes: long40 });
  logs.push({ name: 'generated-solaris-16dev.iostat.txt', group: 'solaris', bytes: long16, gzip: true });
  logs.push({ name: 'generated-solaris-40dev.iostat.txt', group: 'solaris', bytes: long40, gzip: true });
  return logs;
}

interface Upload {
  key: string;
  body: Buffer;
  metadata?: Record<string, string>;
  /** 1: first version of its key, 2: the second. */
  phase: 1 | 2;
}

/**
 * `count` uploads under `prefix`: logs in turn, every 4th (and the long gzip ones)
 * gzipped, every 3rd with a device label in its metadata, every 5th with tags; the
 * last `replacements` are new versions of earlier keys (another log of the same platform).
 */
function plan(prefix: string, count: number, replacements: number): Upload[] {
  const logs = corpus();
  const uploads: Upload[] = [];
  const first = count - replacements;
  for (let i = 0; i < first; i++) {
    const log = logs[i % logs.length]!;
    const gz = log.gzip === true || i % 4 === 3;
    const metadata: Record<string, string> = {};
    if (i % 3 === 1) metadata['device'] = `${prefix}-${log.group}-m${i % 5}`;
    if (i % 5 === 2) metadata['tags'] = `interface=SAS;rpm=${i % 2 ? 10000 : 15000}`;
    uploads.push({
      // The first folder is the label when the metadata names none.
      key: `${prefix}-${log.group}-${i % 6}/${String(i).padStart(3, '0')} ${log.name}${gz ? '.gz' : ''}`,
      body: gz ? gzipSync(log.bytes) : log.bytes,
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      phase: 1,
    });
  }
  for (let r = 0; r < replacements; r++) {
    const old = uploads[(r * 7) % first]!;
    const group = old.key.split('-')[1]!;
    const same = logs.filter((l) => l.group === group);
    const log = same[(r * 3 + 1) % same.length]!;
    uploads.push({
      key: old.key,
      body: old.key.endsWith('.gz') ? gzipSync(log.bytes) : log.bytes,
      ...(old.metadata ? { metadata: old.metadata } : {}),
      phase: 2,
    });
  }
  return uploads;
}

/** Put one phase's objects into s3rver (not through a proxy) and build the events S3 would send. */
async function putPhase(uploads: readonly Upload[], phase: 1 | 2): Promise<S3NotificationRecord[]> {
  const events: S3NotificationRecord[] = [];
  for (const upload of uploads.filter((u) => u.phase === phase)) {
    const options: PutOptions = upload.metadata ? { metadata: upload.metadata } : {};
    const put = await env.put(upload.key, upload.body, options);
    events.push(
      s3EventRecord({
        eventName: 'ObjectCreated:Put',
        bucket: env.bucket,
        key: upload.key,
        size: put.size,
        eTag: put.eTag,
        sequencer: sequencer(),
      }),
    );
  }
  return events;
}

// ---------------------------------------------------------------- delivery

interface Delivery {
  /** Messages the handler received, redeliveries included. */
  receives: number;
  /** Messages that failed (batchItemFailures) and came back. */
  redelivered: number;
  deadLetters: number;
}

/** Through the lab's queue: batches of 10, failed messages redelivered, dead-lettered after 3 receives. */
async function deliver(events: readonly S3NotificationRecord[], deps: IngestDeps): Promise<Delivery> {
  setIngestDeps(deps);
  const result: Delivery = { receives: 0, redelivered: 0, deadLetters: 0 };
  const queue = new LocalQueue({
    handler: async (event: SQSEvent) => {
      result.receives += event.Records.length;
      const response = await handler(event, lambdaContext());
      result.redelivered += response.batchItemFailures.length;
      return response;
    },
    context: () => lambdaContext(),
    batchWindowMs: 10,
    retryDelayMs: RETRY_DELAY_MS,
  });
  for (const event of events) queue.send(s3Notification(event));
  await queue.idle();
  await queue.stop();
  result.deadLetters = queue.deadLetters.length;
  result.redelivered -= result.deadLetters;
  return result;
}

/** Clients for the handler as ingestDeps builds them (retries included), pointed at two proxies or straight at the emulators. */
function depsVia(tableName: string, s3Endpoint: string, dynamodbEndpoint: string): IngestDeps {
  return {
    s3: createS3Client({ region: REGION, s3Endpoint, credentials: S3RVER_CREDENTIALS }),
    db: createDocumentClient({
      region: REGION,
      dynamodbEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: INGEST_DYNAMODB_ATTEMPTS,
    }),
    tableName,
    resultsBucket: env.resultsBucket,
    maxUploadBytes: MAX_UPLOAD_BYTES,
  };
}

function destroyClients(deps: IngestDeps): void {
  deps.s3.destroy();
  deps.db.destroy();
}

// ---------------------------------------------------------------- comparing tables

const CLOCK = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;
const startedAt = Date.now();

/** A copy with every timestamp the clock gave during this file's run read as `<clock>`. */
function normalise<T>(value: T): T {
  const until = Date.now() + 1000;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string')
      return v.replace(CLOCK, (t) => (Date.parse(t) >= startedAt - 1000 && Date.parse(t) <= until ? '<clock>' : t));
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [
          k,
          (k === 'changed' || k === 'claim') && typeof x === 'string' ? '<stamp>' : walk(x),
        ]),
      );
    return v;
  };
  return walk(value) as T;
}

interface TableDiff {
  /** Items of the reference that are not in the table. */
  missing: string[];
  /** Items in the table that the reference does not have. */
  extra: string[];
  /** Same key, different content. */
  different: string[];
  /** A few differences, spelled out for the failure message. */
  examples: string[];
}

const keyOf = (item: Item) => `${item.pk} | ${item.sk}`;

function diffItems(reference: readonly Item[], actual: readonly Item[]): TableDiff {
  const want = new Map(reference.map((i) => [keyOf(i), JSON.stringify(normalise(i))]));
  const got = new Map(actual.map((i) => [keyOf(i), JSON.stringify(normalise(i))]));
  const diff: TableDiff = { missing: [], extra: [], different: [], examples: [] };
  for (const [key, item] of want) {
    const other = got.get(key);
    if (other === undefined) diff.missing.push(key);
    else if (other !== item) {
      diff.different.push(key);
      if (diff.examples.length < 3)
        diff.examples.push(`${key}\n  want ${item.slice(0, 600)}\n  got  ${other.slice(0, 600)}`);
    }
  }
  for (const key of got.keys()) if (!want.has(key)) diff.extra.push(key);
  for (const key of [...diff.missing.slice(0, 3), ...diff.extra.slice(0, 3)])
    diff.examples.push(`${diff.missing.includes(key) ? 'missing' : 'extra'}: ${key}`);
  return diff;
}

const table = (tableName: string): TableRef => ({ db: env.db, tableName });
const isSame = (d: TableDiff) => d.missing.length + d.extra.length + d.different.length === 0;
const describeDiff = (d: TableDiff) =>
  `${d.missing.length} missing, ${d.extra.length} extra, ${d.different.length} different\n${d.examples.join('\n')}`;

/** Upload records of a table by status. */
function statuses(items: readonly Item[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items)
    if (item['type'] === 'upload') out[String(item['status'])] = (out[String(item['status'])] ?? 0) + 1;
  return out;
}

// ---------------------------------------------------------------- faults

describe('faults', () => {
  it(`${UPLOADS} uploads under ${FAULT_RATE * 100}% injected faults all end ready, with exactly the items of a fault-free run`, async (ctx) => {
    const uploads = plan('f', UPLOADS, REPLACEMENTS);
    await env.createTable('faults-reference');
    await env.createTable('faults-injected');
    const reference = depsVia('faults-reference', env.s3Endpoint, env.dynamodbEndpoint);
    const dbProxy = await startFaultProxy({
      target: env.dynamodbEndpoint,
      service: 'dynamodb',
      faultRate: FAULT_RATE,
      seed: SEED,
    });
    // On S3 the SDK hides every fault but one, an answer that breaks off mid-body (the
    // body is the ingest's to read): resets weigh three times as much there.
    const s3Proxy = await startFaultProxy({
      target: env.s3Endpoint,
      service: 's3',
      faultRate: FAULT_RATE,
      seed: SEED + 1,
      weights: { reset: 3 },
    });
    const faulty = depsVia('faults-injected', s3Proxy.endpoint, dbProxy.endpoint);
    const deliveries: Delivery[] = [];
    try {
      // Each phase: the reference first, then the same events under faults (second
      // versions only once every first version is done, in both tables).
      for (const phase of [1, 2] as const) {
        const events = await putPhase(uploads, phase);
        const clean = await deliver(events, reference);
        expect(clean, 'the fault-free run needs no redelivery').toEqual({
          receives: events.length,
          redelivered: 0,
          deadLetters: 0,
        });
        deliveries.push(await deliver(events, faulty));
      }
    } finally {
      destroyClients(reference);
      destroyClients(faulty);
      await dbProxy.close();
      await s3Proxy.close();
    }

    const want = await scanAll(table('faults-reference'));
    const got = await scanAll(table('faults-injected'));
    const diff = diffItems(want, got);
    const wantStatuses = statuses(want);
    const gotStatuses = statuses(got);
    // Every key ends ready; a key put again in phase 2 keeps its first version as replaced.
    const settled = (gotStatuses['ready'] ?? 0) + (gotStatuses['replaced'] ?? 0);
    const notReady = UPLOADS - settled;
    const receives = deliveries.reduce((a, d) => a + d.receives, 0);
    const redelivered = deliveries.reduce((a, d) => a + d.redelivered, 0);
    const deadLetters = deliveries.reduce((a, d) => a + d.deadLetters, 0);
    const injected = { db: dbProxy.counts.injected, s3: s3Proxy.counts.injected };
    const sum = (k: keyof typeof injected.db) => injected.db[k] + injected.s3[k];
    const detail =
      `injected: ${sum('throttle')} throttles, ${sum('error500')} 500s, ${sum('reset')} resets, ${sum('slow')} slow ` +
      `(of ${dbProxy.counts.requests} DynamoDB + ${s3Proxy.counts.requests} S3 requests); ` +
      `${receives} receives, ${redelivered} redelivered, ${deadLetters} dead-lettered; ${want.length} items compared, ${diff.different.length} different, ${diff.extra.length} extra`;
    recordStressSummary(ctx, {
      section: 'faults',
      cases: UPLOADS,
      failures: notReady + diff.different.length + diff.extra.length,
      lost: diff.missing.length + deadLetters,
      detail,
    });
    console.log(
      `faults: ${detail}\n  DynamoDB variants ${JSON.stringify(dbProxy.counts.variants)}\n  S3 variants ${JSON.stringify(s3Proxy.counts.variants)}`,
    );

    expect(wantStatuses).toEqual({ ready: UPLOADS - REPLACEMENTS, replaced: REPLACEMENTS });
    expect(gotStatuses).toEqual(wantStatuses);
    expect(isSame(diff), describeDiff(diff)).toBe(true);
    // The run exercised every kind of fault, on both services.
    for (const kind of ['throttle', 'error500', 'reset', 'slow'] as const) {
      expect(injected.db[kind], `DynamoDB ${kind}`).toBeGreaterThan(0);
      expect(injected.s3[kind], `S3 ${kind}`).toBeGreaterThan(0);
    }
  });
});

// ---------------------------------------------------------------- downloads cut off

describe('cut downloads', () => {
  it('every object whose download breaks off mid-body (once each) is retried to the items of an unbroken run', async (ctx) => {
    // Long logs, plain and gzipped: the answer breaks off well inside the data.
    const logs = corpus().filter((l) => l.bytes.length > 100_000 || l.name.includes('x4100'));
    const uploads: Upload[] = [];
    for (const [i, log] of [...logs, ...logs].entries()) {
      const gz = log.gzip === true || i % 2 === 1;
      uploads.push({
        key: `c-${i}/${log.name}${gz ? '.gz' : ''}`,
        body: gz ? gzipSync(log.bytes) : log.bytes,
        phase: 1,
      });
    }
    await env.createTable('cut-reference');
    await env.createTable('cut-injected');
    const reference = depsVia('cut-reference', env.s3Endpoint, env.dynamodbEndpoint);
    // The first GetObject of each key is cut off somewhere inside its body; later ones go through.
    const cut = new Set<string>();
    const s3Proxy = await startFaultProxy({
      target: env.s3Endpoint,
      service: 's3',
      seed: SEED + 3,
      variants: ['reset:mid-answer'],
      faultWhen: (request) => request.method === 'GET' && !cut.has(request.path) && Boolean(cut.add(request.path)),
    });
    const faulty = depsVia('cut-injected', s3Proxy.endpoint, env.dynamodbEndpoint);
    let delivery: Delivery;
    try {
      const events = await putPhase(uploads, 1);
      expect(await deliver(events, reference)).toMatchObject({ redelivered: 0, deadLetters: 0 });
      delivery = await deliver(events, faulty);
    } finally {
      destroyClients(reference);
      destroyClients(faulty);
      await s3Proxy.close();
    }
    const want = await scanAll(table('cut-reference'));
    const got = await scanAll(table('cut-injected'));
    const diff = diffItems(want, got);
    const ready = statuses(got)['ready'] ?? 0;
    const detail = `${s3Proxy.counts.injected.reset} GetObject answers cut mid-body, ${delivery.redelivered} redelivered, ${delivery.deadLetters} dead-lettered; ${want.length} items compared, ${diff.different.length} different, ${diff.extra.length} extra`;
    recordStressSummary(ctx, {
      section: 'faults: downloads cut mid-body',
      cases: uploads.length,
      failures: uploads.length - ready + diff.different.length + diff.extra.length,
      lost: diff.missing.length + delivery.deadLetters,
      detail,
    });
    expect(s3Proxy.counts.injected.reset).toBe(uploads.length);
    expect(statuses(got)).toEqual({ ready: uploads.length });
    expect(isSame(diff), describeDiff(diff)).toBe(true);
  });
});

// ---------------------------------------------------------------- kill mid-file

/** Two sessions in one file (two runs), long enough for several rounds of batch writes. */
/** A run of a host too wide for its META (SERIES items, several batch writes), then one its META holds. */
const TWO_RUNS = Buffer.from(
  `${solarisIostatLog({ reports: 100, devices: solarisDevices(MAX_SERIES_IN_META + 1), host: 'crash' })}tunefs -a 16 /opt\n${solarisIostatLog({ reports: 300, devices: solarisDevices(12), host: 'crash' })}`,
);
const X4100 = readFileSync(join(FIXTURES, 'solaris/solaris-10-x4100-sas-maxcontig.iostat.txt'));

interface KillScenario {
  name: string;
  key: string;
  /** An earlier version, ingested completely before the one that is killed. */
  before?: Buffer;
  body: Buffer;
}

const KILL_SCENARIOS: KillScenario[] = [
  { name: 'new key', key: 'k-new/crash.iostat.txt', body: TWO_RUNS },
  { name: 'replacing a version', key: 'k-replace/crash.iostat.txt', before: X4100, body: TWO_RUNS },
];

/**
 * test/support/ingest-process.ts bundled by esbuild into one file, as the stack
 * bundles the function: a process starts in one or two seconds on this shared
 * machine instead of four with tsx compiling on the way.
 */
async function bundleIngestProcess(): Promise<string> {
  const outfile = join(mkdtempSync(join(tmpdir(), 'benchdrop-ingest-process-')), 'index.mjs');
  const options: BuildOptions = {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    // CommonJS dependencies call require() for Node's own modules.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'warning',
  };
  await build({ ...options, entryPoints: [INGEST_PROCESS], outfile });
  // The samples encoder's thread, beside the handler as in the function's package.
  await bundleEncoderWorker(dirname(outfile), options);
  return outfile;
}

/** Run the bundled handler in its own process on one SQS event; `onSpawn` gets the process (to kill it). */
function ingestProcess(
  bundle: string,
  event: SQSEvent,
  environment: Record<string, string>,
  onSpawn: (child: ChildProcess) => void = () => {},
) {
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, [bundle], {
        cwd: dirname(bundle),
        env: {
          PATH: process.env['PATH'] ?? '',
          HOME: process.env['HOME'] ?? '',
          ...SDK_NODE_NOTICE_OFF,
          ...environment,
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
      onSpawn(child);
      child.stdin.end(JSON.stringify(event));
    },
  );
}

/** The environment a Lambda container would give the handler, pointed at the emulators (DynamoDB through `dynamodbEndpoint`). */
const lambdaEnvironment = (tableName: string, dynamodbEndpoint: string): Record<string, string> => ({
  [ENV.tableName]: tableName,
  [ENV.resultsBucket]: env.resultsBucket,
  [ENV.s3Endpoint]: env.s3Endpoint,
  [ENV.dynamodbEndpoint]: dynamodbEndpoint,
  [ENV.maxUploadBytes]: String(MAX_UPLOAD_BYTES),
  AWS_REGION: REGION,
  AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
});

async function putVersion(key: string, body: Buffer): Promise<S3NotificationRecord> {
  const put = await env.put(key, body);
  return s3EventRecord({
    eventName: 'ObjectCreated:Put',
    bucket: env.bucket,
    key,
    size: put.size,
    eTag: put.eTag,
    sequencer: sequencer(),
  });
}

/** One delivery to the in-process handler, with its own clients (a fresh container). */
async function deliverOnce(
  record: S3NotificationRecord,
  tableName: string,
  dynamodbEndpoint = env.dynamodbEndpoint,
): Promise<SQSBatchResponse> {
  const deps = depsVia(tableName, env.s3Endpoint, dynamodbEndpoint);
  setIngestDeps(deps);
  try {
    return await handler(sqsEvent([record]), lambdaContext());
  } finally {
    destroyClients(deps);
  }
}

interface Visible {
  /** Runs any reader shows. */
  runIds: Set<string>;
  /** Device labels GET /devices lists. */
  devices: string[];
}

/**
 * What the API's readers show: the device list, run listings (all, and per
 * label), selectors per label and per run, and run details for every run id either
 * state could have.
 */
async function visible(tableName: string, labels: Iterable<string>, runIds: Iterable<string>): Promise<Visible> {
  const store = table(tableName);
  const seen = new Set<string>();
  const devices = (await listDevices(store)).map((d) => d.label);
  for (const run of await listRuns(store, { limit: 1000 })) seen.add(run.runId);
  for (const label of new Set([...labels, ...devices])) {
    for (const run of await listRuns(store, { device: label, limit: 1000 })) seen.add(run.runId);
    for (const o of await resolveSelector(store, parseSelector(`device=${label}`))) seen.add(o.runId);
  }
  for (const id of runIds) {
    if ((await getRun(store, id)) !== undefined) seen.add(id);
    for (const o of await resolveSelector(store, parseSelector(`run=${id}`))) seen.add(o.runId);
  }
  return { runIds: seen, devices };
}

/** What one BatchWriteItem does, e.g. `put CHUNK+SERIES` or `delete META`: the phases of an ingest. */
function writePhase(body: Buffer): string {
  const input = JSON.parse(body.toString('utf8')) as {
    RequestItems: Record<
      string,
      {
        PutRequest?: { Item: Record<string, { S?: string }> };
        DeleteRequest?: { Key: Record<string, { S?: string }> };
      }[]
    >;
  };
  const kinds = new Set<string>();
  for (const requests of Object.values(input.RequestItems)) {
    for (const r of requests) {
      const key = r.PutRequest?.Item ?? r.DeleteRequest!.Key;
      const what = key['pk']?.S === 'DEVICES' ? 'DEVICES' : (key['sk']?.S ?? '').split('#')[0]!;
      kinds.add(`${r.PutRequest ? 'put' : 'delete'} ${what}`);
    }
  }
  return [...kinds].sort().join('+');
}

/** Where to kill (1-based write numbers): the first and the last write of each kind, so the first and last of all. */
function killPoints(phases: readonly string[]): number[] {
  const points = new Set<number>();
  for (const phase of new Set(phases)) {
    points.add(phases.indexOf(phase) + 1);
    points.add(phases.lastIndexOf(phase) + 1);
  }
  return [...points].sort((a, b) => a - b);
}

const runIdOf = (item: Item) => (item.pk.startsWith('RUN#') ? item.pk.slice('RUN#'.length) : undefined);
const runIdsIn = (items: readonly Item[]) => new Set(items.map(runIdOf).filter((id): id is string => id !== undefined));
const labelsIn = (items: readonly Item[]) => items.filter((i) => i.pk === 'DEVICES').map((i) => i.sk);

describe('kill', () => {
  let bundle: string;
  beforeAll(async () => {
    bundle = await bundleIngestProcess();
  });
  afterAll(() => {
    if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
  });

  it('an ingest killed after its Nth write and redelivered ends as if never killed; no half run shows in between', async (ctx) => {
    const problems: string[] = [];
    let cases = 0;
    let lost = 0;
    const tried: string[] = [];
    for (const [s, scenario] of KILL_SCENARIOS.entries()) {
      // The reference: the same events, fault-free, and how many BatchWriteItem calls the last one makes.
      const refTable = `kill-${s}-reference`;
      await env.createTable(refTable);
      const before = scenario.before ? await putVersion(scenario.key, scenario.before) : undefined;
      if (before) expect(await deliverOnce(before, refTable)).toEqual({ batchItemFailures: [] });
      const oldState = await scanAll(table(refTable));
      const event = await putVersion(scenario.key, scenario.body);
      const phases: string[] = [];
      const counter = await startFaultProxy({
        target: env.dynamodbEndpoint,
        service: 'dynamodb',
        intercept: (request) => void (request.operation === 'BatchWriteItem' && phases.push(writePhase(request.body!))),
      });
      expect(await deliverOnce(event, refTable, counter.endpoint)).toEqual({ batchItemFailures: [] });
      await counter.close();
      const newState = await scanAll(table(refTable));
      const writes = phases.length;
      expect(writes, 'the file takes several batch writes').toBeGreaterThan(3);
      const partitions = new Map<string, string>();
      for (const item of [...oldState, ...newState]) {
        const id = runIdOf(item);
        if (id !== undefined) partitions.set(id, `${partitions.get(id) ?? ''}${JSON.stringify(normalise(item))}\n`);
      }
      const allRunIds = new Set([...runIdsIn(oldState), ...runIdsIn(newState)]);
      const allLabels = new Set([...labelsIn(oldState), ...labelsIn(newState)]);

      const triedHere: string[] = [];
      // Killed at the first and the last write of each kind; the write it dies on arrives
      // (sent just before) or not (still in the process), alternately, the last one arriving.
      const points = killPoints(phases);
      for (const [k, n] of points.entries()) {
        const lands = (points.length - 1 - k) % 2 === 0;
        cases++;
        const name = `${scenario.name}, killed at write ${n} of ${writes} (${phases[n - 1]}), which ${lands ? 'lands' : 'never arrives'}`;
        triedHere.push(`${n}${lands ? '' : '-'}`);
        const tableName = `kill-${s}-${n}`;
        await env.createTable(tableName);
        if (before) {
          // s3rver keeps no versions: the key holds the old content again while its event is ingested.
          await env.put(scenario.key, scenario.before!);
          expect(await deliverOnce(before, tableName)).toEqual({ batchItemFailures: [] });
          await env.put(scenario.key, scenario.body);
        }

        let child: ChildProcess | undefined;
        let seen = 0;
        let killed: Promise<void> | undefined;
        const intercept: Intercept = async (request) => {
          if (killed) return 'drop';
          if (request.operation !== 'BatchWriteItem' || ++seen < n) return undefined;
          // SIGKILL: no handler, no finally, nothing flushed; the process is gone before the write goes on (or not).
          killed = new Promise((resolve) => child!.once('exit', () => resolve()));
          child!.kill('SIGKILL');
          await killed;
          return lands ? undefined : 'drop';
        };
        const proxy = await startFaultProxy({ target: env.dynamodbEndpoint, service: 'dynamodb', intercept });
        const ran = await ingestProcess(
          bundle,
          sqsEvent([event]),
          lambdaEnvironment(tableName, proxy.endpoint),
          (c) => (child = c),
        );
        await proxy.close();
        if (ran.signal !== 'SIGKILL') {
          problems.push(
            `${name}: the process was not killed (exit ${ran.code}, ${ran.stdout.slice(0, 200)} ${ran.stderr.slice(-500)})`,
          );
          continue;
        }

        // Between the kill and the redelivery: only complete runs, each exactly as the fault-free run has it.
        const shown = await visible(tableName, allLabels, allRunIds);
        for (const id of shown.runIds) {
          const want = partitions.get(id);
          const got = (await queryAll(table(tableName), runPk(id)))
            .sort(byKey)
            .map((i) => `${JSON.stringify(normalise(i))}\n`)
            .join('');
          if (want === undefined) problems.push(`${name}: run ${id} is shown but belongs to neither state`);
          else if (got !== want)
            problems.push(
              `${name}: run ${id} is shown half-written (${got.split('\n').length - 1} of ${want.split('\n').length - 1} items as they should be)`,
            );
        }
        for (const label of shown.devices) {
          if ((await listRuns(table(tableName), { device: label, limit: 1000 })).length === 0)
            problems.push(`${name}: device ${label} is listed with no complete run`);
        }

        // Redelivered to a fresh handler: the state of a run that never crashed.
        const again = await deliverOnce(event, tableName);
        if (again.batchItemFailures.length > 0) problems.push(`${name}: the redelivery failed`);
        const diff = diffItems(newState, await scanAll(table(tableName)));
        lost += diff.missing.length;
        if (!isSame(diff)) problems.push(`${name}: after the redelivery ${describeDiff(diff)}`);
      }
      tried.push(`${scenario.name}: ${triedHere.join(' ')} of ${writes}`);
      console.log(`kill, ${scenario.name}: the ${writes} batch writes are ${phases.join(', ')}`);
    }
    recordStressSummary(ctx, {
      section: 'faults: kill mid-file, redeliver',
      cases,
      failures: problems.length,
      lost,
      detail: `SIGKILL at BatchWriteItem ${tried.join(', ')} (- = the write never arrived)`,
    });
    expect(problems).toEqual([]);
  });
});

// ---------------------------------------------------------------- duplicates

const DUPLICATE_UPLOADS = 60;
/** Of them, new versions of earlier keys (phase 2). */
const DUPLICATE_REPLACEMENTS = 6;
const COPIES = 3;

describe('duplicates', () => {
  it(`every event delivered ${COPIES} times at once leaves the same items as one delivery`, async (ctx) => {
    const uploads = plan('d', DUPLICATE_UPLOADS, DUPLICATE_REPLACEMENTS);
    await env.createTable('dup-reference');
    await env.createTable('dup-copies');
    const reference = depsVia('dup-reference', env.s3Endpoint, env.dynamodbEndpoint);
    // Random delays on a third of the requests shuffle how the copies interleave.
    const dbProxy = await startFaultProxy({
      target: env.dynamodbEndpoint,
      service: 'dynamodb',
      faultRate: 0.3,
      seed: SEED + 2,
      weights: { throttle: 0, error500: 0, reset: 0 },
      slowMs: { min: 5, max: 300 },
    });
    const copies = depsVia('dup-copies', env.s3Endpoint, dbProxy.endpoint);
    let invocations = 0;
    let failedMessages = 0;
    try {
      for (const phase of [1, 2] as const) {
        const events = await putPhase(uploads, phase);
        expect(await deliver(events, reference)).toMatchObject({ redelivered: 0, deadLetters: 0 });
        setIngestDeps(copies);
        for (let i = 0; i < events.length; i += 10) {
          const batch = events.slice(i, i + 10);
          // Each copy in its own invocation, in its own order.
          const responses = await Promise.all(
            Array.from({ length: COPIES }, (_, c) => {
              invocations++;
              const order = batch.map((_, j) => batch[(j + c * 3) % batch.length]!);
              return handler(sqsEvent(order), lambdaContext());
            }),
          );
          failedMessages += responses.reduce((a, r) => a + r.batchItemFailures.length, 0);
        }
      }
    } finally {
      destroyClients(reference);
      destroyClients(copies);
      await dbProxy.close();
    }
    const want = await scanAll(table('dup-reference'));
    const got = await scanAll(table('dup-copies'));
    const diff = diffItems(want, got);
    const detail = `${invocations} invocations of ${DUPLICATE_UPLOADS} events x ${COPIES}, ${failedMessages} messages failed; ${want.length} items compared, ${diff.different.length} different, ${diff.extra.length} extra`;
    recordStressSummary(ctx, {
      section: 'faults: duplicate delivery',
      cases: DUPLICATE_UPLOADS,
      failures: failedMessages + diff.different.length + diff.extra.length,
      lost: diff.missing.length,
      detail,
    });
    expect(failedMessages).toBe(0);
    expect(statuses(got)).toEqual({
      ready: DUPLICATE_UPLOADS - DUPLICATE_REPLACEMENTS,
      replaced: DUPLICATE_REPLACEMENTS,
    });
    expect(isSame(diff), describeDiff(diff)).toBe(true);
  });
});
