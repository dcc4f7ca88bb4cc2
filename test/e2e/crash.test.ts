/**
 * The local lab killed with SIGKILL in the middle of an ingest, as a crash would
 * end it: `npm start`'s command line in a child process (fresh data folder, free
 * ports), uploads with the AWS SDK, the API over plain HTTP. A small log is
 * ingested while a large one holds a worker; the lab dies while the large one is
 * `processing`, its message in the journal; the next start on the same folder
 * delivers it again (its second receive) and it ends `ready`, every sample there.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAB_CREDENTIALS } from '../../shared/config.ts';
import type { RunDetail, UploadListing } from '../../shared/api.ts';
import { createS3Client } from '../../shared/aws.ts';
import { solarisIostatLog } from '../../harness/logs.ts';
import { clientEnv, LabProcess, REPO_ROOT } from '../../harness/processes.ts';

/** ~80 MB: about 4 s of ingest (measured: 2 s for 40 MB), long enough to be caught in the middle. */
const BIG_REPORTS = 400_000;
const BIG_KEY = 'crash/big-solaris.iostat.txt';
const SMALL_KEY = 'crash/irix-indy-scsi2sd-redux.diskperf.txt';

let scratch: string;
let dataDir: string;
let lab: LabProcess | undefined;
let s3: S3Client | undefined;

const labEnv = () =>
  clientEnv(scratch, {
    POWERTOOLS_LOG_LEVEL: 'INFO',
    POWERTOOLS_LOGGER_LOG_EVENT: 'true',
    POWERTOOLS_METRICS_DISABLED: 'true',
  });

async function uploads(): Promise<Map<string, UploadListing[]>> {
  const response = await fetch(`${lab!.endpoints.apiUrl}/uploads?limit=500`);
  const byKey = new Map<string, UploadListing[]>();
  for (const u of ((await response.json()) as { uploads: UploadListing[] }).uploads)
    byKey.set(u.key, [...(byKey.get(u.key) ?? []), u]);
  return byKey;
}

async function statusOf(key: string): Promise<string | undefined> {
  return (await uploads()).get(key)?.[0]?.status;
}

async function until(what: string, condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s\n${lab?.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function journalFiles(): string[] {
  return readdirSync(join(dataDir, 'queue'));
}

describe('the local lab, killed mid-ingest', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'benchdrop-crash-'));
    dataDir = join(scratch, 'lab');
    lab = await LabProcess.start({ dataDir, fresh: true, args: ['--no-samples'], env: labEnv() });
    s3 = createS3Client({ region: 'us-east-1', s3Endpoint: lab.endpoints.s3Endpoint, credentials: LAB_CREDENTIALS });
  }, 90_000);

  afterAll(async () => {
    try {
      s3?.destroy();
      await lab?.stop();
    } finally {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    }
  }, 30_000);

  it('ingests a small log while a large one holds a worker, and finishes the large one after a SIGKILL', async () => {
    const big = solarisIostatLog({ reports: BIG_REPORTS, devices: ['c1t0d0'], host: 'crashhost' });
    await s3!.send(new PutObjectCommand({ Bucket: lab!.endpoints.bucket, Key: BIG_KEY, Body: big }));
    await until('the large log is being ingested', async () => (await statusOf(BIG_KEY)) === 'processing', 20_000);

    // One slow file holds one worker, not the queue.
    await s3!.send(
      new PutObjectCommand({
        Bucket: lab!.endpoints.bucket,
        Key: SMALL_KEY,
        Body: readFileSync(join(REPO_ROOT, 'demo/irix-indy-scsi2sd-redux.diskperf.txt')),
      }),
    );
    await until('the small log is ingested', async () => (await statusOf(SMALL_KEY)) === 'ready', 10_000);
    expect(await statusOf(BIG_KEY), lab!.output()).toBe('processing');

    // The large one's message is on disk, received once; the small one's is gone.
    const kept = journalFiles();
    expect(kept).toHaveLength(1);
    const entry = JSON.parse(readFileSync(join(dataDir, 'queue', kept[0]!), 'utf8')) as {
      receives: number;
      body: string;
    };
    expect(entry.receives).toBe(1);
    expect(entry.body).toContain(`"key":"${BIG_KEY}"`);

    expect(await lab!.kill()).toEqual({ code: null, signal: 'SIGKILL' });

    lab = await LabProcess.start({ dataDir, fresh: false, env: labEnv(), args: ['--no-samples'], timeoutMs: 120_000 });
    expect(lab.printedLines(/^resuming /), lab.output()).toEqual(['resuming 1 message(s) left from the last run']);
    // Ready means idle: the message was delivered again, for the second time, and is done with.
    expect(lab.deliveredEvents()).toEqual([
      expect.objectContaining({
        eventName: 'ObjectCreated:Put',
        key: BIG_KEY,
        size: Buffer.byteLength(big),
        receiveCount: 2,
      }),
    ]);
    expect(journalFiles()).toEqual([]);
    expect(existsSync(join(dataDir, 'dead-letters.jsonl'))).toBe(false);

    const byKey = await uploads();
    expect(byKey.get(SMALL_KEY)?.map((u) => u.status)).toEqual(['ready']);
    const [record] = byKey.get(BIG_KEY) ?? [];
    expect(byKey.get(BIG_KEY), lab.output()).toHaveLength(1);
    expect(record, JSON.stringify(record)).toMatchObject({ status: 'ready', runCount: 1 });
    const detail = (await (
      await fetch(`${lab.endpoints.apiUrl}/runs/${encodeURIComponent(record!.runIds[0]!)}`)
    ).json()) as RunDetail;
    expect(detail.series.map((s) => [s.device, s.sampleCount])).toEqual([['crash/c1t0d0', BIG_REPORTS]]);

    const stopped = await lab.stop();
    expect(stopped, lab.output()).toEqual({ code: 0, signal: null, killed: false });
  }, 180_000);
});
