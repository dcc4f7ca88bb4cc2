/**
 * Every upload ends: the deliveries that die half-way (their DynamoDB writes cut
 * off for real, through the fault proxy), the messages the queue gives up on, the
 * files past the series limit, and the replacements and deletions too large for
 * one step, against dynalite and s3rver with the real handlers and use cases.
 * What is checked each time: the record's final status and reason, and that not
 * one item of the version is left behind.
 */
import '../../harness/quiet.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler, logger, setIngestDeps } from '../../functions/ingest/handler.ts';
import {
  s3EventRecord,
  s3Notification,
  sequencerGenerator,
  sqsEvent,
  type S3NotificationRecord,
} from '../../infra/local/events.ts';
import { createDocumentClient } from '../../shared/aws.ts';
import { STUCK_AFTER_MS } from '../../shared/config.ts';
import { failDeadLetter } from '../../shared/dead-letters.ts';
import { continueIngest, ingestRecord, objectRefOf, parseContinuation, type IngestDeps } from '../../shared/ingest.ts';
import { DEVICES_PK, runId, runPk } from '../../shared/store/keys.ts';
import { MAX_SERIES_IN_META, type UploadRecord } from '../../shared/store/items.ts';
import { sweepStuckUploads } from '../../shared/sweep.ts';
import { REGION, startEmulators, type Emulators } from '../../harness/emulators.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { lambdaContext } from '../../harness/lambda.ts';
import { solarisDevices, solarisIostatLog } from '../../harness/logs.ts';
import { getCurrent, getUpload, scanAll, type Item } from '../../harness/table.ts';

let env: Emulators;
let deps: IngestDeps;
const sequencer = sequencerGenerator(0x2000000000000n);
const uid = () => randomUUID().slice(0, 8);

beforeAll(async () => {
  env = await startEmulators();
  deps = { ...env.deps };
});

afterAll(async () => {
  setIngestDeps(undefined);
  await env?.stop();
});

async function upload(key: string, body: string, metadata?: Record<string, string>): Promise<S3NotificationRecord> {
  const put = await env.put(key, body, metadata ? { metadata } : {});
  return s3EventRecord({
    eventName: 'ObjectCreated:Put',
    bucket: env.bucket,
    key,
    size: put.size,
    eTag: put.eTag,
    sequencer: sequencer(),
  });
}

const removal = (key: string) =>
  s3EventRecord({ eventName: 'ObjectRemoved:DeleteMarkerCreated', bucket: env.bucket, key, sequencer: sequencer() });
const record = async (event: S3NotificationRecord) =>
  (await getUpload(env, env.bucket, objectRefOf(event).key, objectRefOf(event).version)) as unknown as
    UploadRecord | undefined;

/** Every run item (and DEVICES entry) an upload's version could have written. */
async function leftOf(event: S3NotificationRecord, label?: string): Promise<Item[]> {
  const { bucket, key, version } = objectRefOf(event);
  const runPks = new Set(Array.from({ length: 64 }, (_, i) => runPk(runId(bucket, key, version, i))));
  return (await scanAll(env)).filter(
    (item) => runPks.has(item.pk) || (label !== undefined && item.pk === DEVICES_PK && item.sk.startsWith(label)),
  );
}

/** A log of `devices` disks over `sessions` iostat sessions (one run each), `reports` reports a session. */
function sessionsLog(devices: number, sessions: number, reports = 3): string {
  return Array.from({ length: sessions }, () => solarisIostatLog({ reports, devices: solarisDevices(devices) })).join(
    '',
  );
}

/** Deps whose DynamoDB calls go through a proxy that resets every BatchWriteItem after the first `writes`. */
async function dyingDeps(writes: number): Promise<{ deps: IngestDeps; proxy: FaultProxy }> {
  let seen = 0;
  const proxy = await startFaultProxy({
    target: env.dynamodbEndpoint,
    service: 'dynamodb',
    intercept: (request) => (request.operation === 'BatchWriteItem' && ++seen > writes ? 'drop' : undefined),
  });
  const db = createDocumentClient({
    region: REGION,
    dynamodbEndpoint: proxy.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  return { deps: { ...deps, db }, proxy };
}

/** Ingest through a delivery whose writes stop after `writes` batches: it throws, as a crash would leave it. */
async function dieMidFile(event: S3NotificationRecord, writes: number): Promise<void> {
  const { deps: dying, proxy } = await dyingDeps(writes);
  try {
    await expect(ingestRecord(event, dying)).rejects.toThrow();
  } finally {
    dying.db.destroy();
    await proxy.close();
  }
}

/** Deps whose DynamoDB calls pass a proxy that holds the `nth` BatchWriteItem until released. */
async function heldAtWrite(
  nth: number,
): Promise<{ deps: IngestDeps; holding: Promise<void>; release: () => void; close: () => Promise<void> }> {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let reached: () => void = () => undefined;
  const holding = new Promise<void>((resolve) => (reached = resolve));
  let writes = 0;
  const proxy = await startFaultProxy({
    target: env.dynamodbEndpoint,
    service: 'dynamodb',
    intercept: async (request) => {
      if (request.operation === 'BatchWriteItem' && ++writes === nth) {
        reached();
        await held;
      }
    },
  });
  const db = createDocumentClient({
    region: REGION,
    dynamodbEndpoint: proxy.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const close = async () => {
    release();
    db.destroy();
    await proxy.close();
  };
  return { deps: { ...deps, db }, holding, release, close };
}

describe('a delivery that dies half-way', () => {
  it('leaves a processing record that notes its started runs; the sweeper ends it failed and removes every item', async () => {
    const label = `sweep-${uid()}`;
    const event = await upload(`${label}/long.iostat.txt`, sessionsLog(30, 3, 20));
    await dieMidFile(event, 3);
    const stuck = await record(event);
    expect(stuck?.status).toBe('processing');
    expect(stuck?.startedRuns).toBeGreaterThanOrEqual(1);
    expect(stuck?.lastError).toMatch(/\S/);
    expect((await leftOf(event)).length, 'the dead delivery wrote items').toBeGreaterThan(0);

    // Not yet past its time: the sweeper leaves it alone.
    expect(await sweepStuckUploads(deps)).toMatchObject({ overdue: 0, ended: 0 });
    const later = { ...deps, now: () => new Date(Date.now() + STUCK_AFTER_MS + 60_000).toISOString() };
    const sweep = await sweepStuckUploads(later);
    expect(sweep.ended).toBeGreaterThanOrEqual(1);
    const ended = await record(event);
    expect(ended?.status).toBe('failed');
    expect(ended?.message).toMatch(
      new RegExp(`did not finish within ${STUCK_AFTER_MS / 60_000} minutes .*upload the file again`),
    );
    expect(ended?.details).toMatch(
      new RegExp(
        `did not finish within ${STUCK_AFTER_MS / 60_000} minutes .*the last error was: .*upload the file again`,
      ),
    );
    expect(await leftOf(event, label)).toEqual([]);
    // Ended for good: a second sweep finds nothing of it.
    expect((await sweepStuckUploads(later)).ended).toBe(0);
  });

  it('is taken up again by the next delivery of its message, which ends it ready with exactly its runs', async () => {
    const label = `again-${uid()}`;
    const event = await upload(`${label}/long.iostat.txt`, sessionsLog(30, 3, 20));
    await dieMidFile(event, 2);
    const outcome = await ingestRecord(event, deps);
    expect(outcome.status).toBe('ready');
    expect((await record(event))?.status).toBe('ready');
    const runIds = new Set((await leftOf(event)).map((item) => item.pk));
    expect(runIds.size).toBe(3);
  });

  it('that comes back after the sweeper ended its version stops at its next note and removes what it wrote', async () => {
    const label = `late-${uid()}`;
    const event = await upload(`${label}/long.iostat.txt`, sessionsLog(20, 4, 30));
    const held = await heldAtWrite(3);
    try {
      const ingest = ingestRecord(event, held.deps);
      await held.holding;
      const later = { ...deps, now: () => new Date(Date.now() + STUCK_AFTER_MS + 60_000).toISOString() };
      expect((await sweepStuckUploads(later)).ended).toBeGreaterThanOrEqual(1);
      held.release();
      expect((await ingest).status).toBe('stale');
    } finally {
      await held.close();
    }
    expect((await record(event))?.status).toBe('failed');
    expect(await leftOf(event, label)).toEqual([]);
  });
});

describe('two deliveries of one event at once', () => {
  it('the later takes the version up, the earlier stops at its next note without removing anything; the upload ends ready', async () => {
    const label = `twice-${uid()}`;
    const event = await upload(`${label}/long.iostat.txt`, sessionsLog(20, 4, 30));
    const held = await heldAtWrite(2);
    try {
      const first = ingestRecord(event, held.deps);
      await held.holding;
      const second = await ingestRecord(event, deps);
      expect(second.status).toBe('ready');
      held.release();
      expect((await first).status).toBe('duplicate');
    } finally {
      await held.close();
    }
    expect((await record(event))?.status).toBe('ready');
    const runs = new Set((await leftOf(event)).map((item) => item.pk));
    expect(runs.size).toBe(4);
    for (const pk of runs) expect((await scanAll(env)).some((item) => item.pk === pk && item.sk === 'META')).toBe(true);
  });
});

describe('a conditional write whose answer is lost', () => {
  it('is retried by the SDK into its own change, and the upload still ends ready', async () => {
    const label = `lost-${uid()}`;
    const event = await upload(`${label}/run.iostat.txt`, sessionsLog(4, 2));
    // Every other PutItem (the claim, the current-version pointer, the final record) is applied, then answered 500.
    let puts = 0;
    const proxy = await startFaultProxy({
      target: env.dynamodbEndpoint,
      service: 'dynamodb',
      variants: ['error500:after'],
      faultWhen: (request) => request.operation === 'PutItem' && ++puts % 2 === 1,
    });
    const db = createDocumentClient({
      region: REGION,
      dynamodbEndpoint: proxy.endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      expect((await ingestRecord(event, { ...deps, db })).status).toBe('ready');
      expect(proxy.counts.variants['error500:after']).toBeGreaterThanOrEqual(3);
    } finally {
      db.destroy();
      await proxy.close();
    }
    expect((await record(event))?.status).toBe('ready');
    expect(new Set((await leftOf(event)).map((item) => item.pk)).size).toBe(2);
  });
});

describe('a dead-lettered message', () => {
  it('ends its upload failed with the last error and removes the partial items', async () => {
    const label = `dlq-${uid()}`;
    const event = await upload(`${label}/long.iostat.txt`, sessionsLog(30, 3, 20));
    await dieMidFile(event, 3);
    const outcomes = await failDeadLetter(JSON.stringify(s3Notification(event)), deps, 3);
    expect(outcomes).toEqual([
      {
        what: 'upload',
        bucket: env.bucket,
        key: objectRefOf(event).key,
        version: objectRefOf(event).version,
        ended: 'ended',
      },
    ]);
    const ended = await record(event);
    expect(ended?.status).toBe('failed');
    expect(ended?.message).toBe(
      'ingest failed 3 time(s) and gave up; its partial runs were removed: upload the file again',
    );
    expect(ended?.details).toMatch(
      /ingest failed 3 time\(s\) and gave up; the last error was: .+; its partial runs were removed/,
    );
    expect(await leftOf(event, label)).toEqual([]);
  });

  it('of an upload no delivery could claim gets a failed record that says why', async () => {
    const event = await upload(`dlq-${uid()}/never.diskperf.txt`, 'anything');
    expect(await record(event)).toBeUndefined();
    const [outcome] = await failDeadLetter(JSON.stringify(s3Notification(event)), deps, 3);
    expect(outcome).toMatchObject({ what: 'upload', ended: 'ended' });
    expect(await record(event)).toMatchObject({
      status: 'failed',
      runCount: 0,
      message: expect.stringMatching(/ingest failed 3 time\(s\) and gave up/),
    });
  });

  it('leaves an upload that already ended as it is, and reports removals and foreign bodies', async () => {
    const event = await upload(`dlq-${uid()}/done.iostat.txt`, sessionsLog(2, 1));
    expect((await ingestRecord(event, deps)).status).toBe('ready');
    const [outcome] = await failDeadLetter(JSON.stringify(s3Notification(event)), deps, 3);
    expect(outcome).toMatchObject({ ended: 'already-final' });
    expect((await record(event))?.status).toBe('ready');
    expect(await failDeadLetter(JSON.stringify(s3Notification(removal('some/key'))), deps, 3)).toEqual([
      { what: 'removal', bucket: env.bucket, key: 'some/key' },
    ]);
    expect(await failDeadLetter('not json', deps, 3)).toEqual([{ what: 'not-an-event' }]);
  });
});

describe('the series limit', () => {
  it('fails a file at the row whose series passes maxSeriesPerFile, leaving nothing behind', async () => {
    const label = `limit-${uid()}`;
    const event = await upload(`${label}/many.iostat.txt`, sessionsLog(8, 1, 2));
    const outcome = await ingestRecord(event, { ...deps, maxSeriesPerFile: 5 });
    // Line 1 is the command, 2-3 the banner and header, 4-8 the first five devices: the sixth is line 9.
    expect(outcome).toMatchObject({ status: 'failed', line: 9 });
    const ended = await record(event);
    expect(ended?.message).toMatch(
      /^line 9: series number 6 \(devices x runs\) in one file, more than this lab's limit of 5; expected at most 5 series a file/,
    );
    expect(await leftOf(event, label)).toEqual([]);
    // Within the limit, the same file goes through.
    const again = await upload(`${label}/many.iostat.txt`, sessionsLog(8, 1, 2));
    expect((await ingestRecord(again, { ...deps, maxSeriesPerFile: 8 })).status).toBe('ready');
  });
});

/** A deadline that passes after `calls` checks; each step gets a fresh one. */
const stepDeps = (queue: string[], calls: number): IngestDeps => {
  let left = calls;
  return { ...deps, requeue: async (body) => void queue.push(body), remainingMs: () => (left-- > 0 ? 300_000 : 0) };
};

/** Run continuation messages until none is left; the item counts seen after each step. */
async function drain(queue: string[], event: S3NotificationRecord, calls: number): Promise<number[]> {
  const counts: number[] = [];
  for (let steps = 0; queue.length > 0; steps++) {
    expect(steps, 'the continuations end').toBeLessThan(200);
    const continuation = parseContinuation(JSON.parse(queue.shift()!));
    expect(continuation).toBeDefined();
    await continueIngest(continuation!, stepDeps(queue, calls));
    counts.push((await leftOf(event)).length);
  }
  return counts;
}

describe('removal in steps', () => {
  it('a replaced version too large for one step is removed over continuations, each doing new work, none redone', async () => {
    const key = `steps-${uid()}/big.iostat.txt`;
    // Hosts of more devices than a META holds: each run has a SERIES item per device too.
    const first = await upload(key, sessionsLog(MAX_SERIES_IN_META + 1, 3, 2));
    expect((await ingestRecord(first, deps)).status).toBe('ready');
    const before = (await leftOf(first)).length;
    expect(before).toBeGreaterThan(120);

    const queue: string[] = [];
    const second = await upload(key, sessionsLog(3, 1, 2));
    expect((await ingestRecord(second, stepDeps(queue, 0))).status).toBe('ready');
    expect(queue.map((b) => JSON.parse(b).step)).toEqual(['remove-replaced']);
    expect((await getCurrent(env, env.bucket, key))?.['pending']).toHaveLength(1);

    const counts = await drain(queue, first, 0);
    expect(counts.length).toBeGreaterThan(1);
    // Each step removed something the one before it had not: strictly fewer items every time.
    for (let i = 1; i < counts.length; i++) expect(counts[i]!).toBeLessThan(counts[i - 1]!);
    expect(counts.at(-1)).toBe(0);
    expect((await getCurrent(env, env.bucket, key))?.['pending']).toEqual([]);
    expect((await record(second))?.status).toBe('ready');
  });

  it('a deleted key is removed over continuations through the real handler, and its version ends deleted', async () => {
    const key = `steps-${uid()}/gone.iostat.txt`;
    const first = await upload(key, sessionsLog(MAX_SERIES_IN_META + 1, 3, 2));
    expect((await ingestRecord(first, deps)).status).toBe('ready');
    const queue: string[] = [];
    let left = 1;
    setIngestDeps({ ...deps, requeue: async (body) => void queue.push(body) });
    const context = () => ({
      ...lambdaContext('benchdrop-ingest', 300_000),
      getRemainingTimeInMillis: () => (left-- > 0 ? 300_000 : 0),
    });
    try {
      // The first delivery has time for the removal's first page only.
      left = 2;
      expect(await handler(sqsEvent([removal(key)]), context())).toEqual({ batchItemFailures: [] });
      expect(queue).toHaveLength(1);
      for (let steps = 0; queue.length > 0; steps++) {
        expect(steps).toBeLessThan(200);
        left = 2;
        expect(await handler(sqsEvent([queue.shift()!]), context())).toEqual({ batchItemFailures: [] });
      }
    } finally {
      setIngestDeps(undefined);
    }
    expect(await leftOf(first)).toEqual([]);
    expect((await record(first))?.status).toBe('deleted');
  });

  it('a message the invocation has no time to start is sent again, whole, instead of failed', async () => {
    const event = await upload(`late-${uid()}/file.iostat.txt`, sessionsLog(2, 1));
    const queue: string[] = [];
    setIngestDeps({ ...deps, requeue: async (body) => void queue.push(body) });
    try {
      const batch = sqsEvent([event]);
      expect(await handler(batch, lambdaContext('benchdrop-ingest', 30_000))).toEqual({ batchItemFailures: [] });
      expect(queue).toEqual([batch.Records[0]!.body]);
      expect(await record(event)).toBeUndefined();
    } finally {
      setIngestDeps(undefined);
    }
  });
});

describe('a bug met while parsing', () => {
  it('fails the upload for good with the line, is logged with its stack, and is not retried', async () => {
    const label = `bug-${uid()}`;
    const event = await upload(`${label}/any.iostat.txt`, sessionsLog(30, 1, 2));
    // A bug no input can cause, caused here: a setting of the wrong type breaks the ingest's own callback.
    setIngestDeps({ ...deps, maxSeriesPerFile: { valueOf: () => 0, toLocaleString: undefined } as unknown as number });
    const logged = vi.spyOn(logger, 'error');
    try {
      expect(await handler(sqsEvent([event]), lambdaContext())).toEqual({ batchItemFailures: [] });
      const failed = await record(event);
      expect(failed?.status).toBe('failed');
      // The line the parser was at: the first report, which it hands on when the second begins.
      expect(failed?.message).toBe(
        'line 35: internal error while parsing; reported (a benchdrop bug: the file needs no change)',
      );
      expect(failed?.line).toBe(35);
      const [message, fields] = logged.mock.calls.find(([m]) => m === 'internal error while parsing') ?? [];
      expect(message).toBe('internal error while parsing');
      const error = (fields as { error?: Error } | undefined)?.error;
      expect(error?.name).toBe('InternalParseError');
      expect((error?.cause as Error | undefined)?.stack).toMatch(/TypeError[\s\S]*stream-runs\.ts/);
      expect(await leftOf(event, label)).toEqual([]);
    } finally {
      logged.mockRestore();
      setIngestDeps(undefined);
    }
  });
});
