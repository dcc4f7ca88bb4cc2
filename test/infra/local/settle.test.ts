/**
 * The domain's settle use cases as the lab wires them (infra/local/settle.ts):
 * a message that fails every delivery is dead-lettered by the lab's queue and
 * its upload ends `failed` with the reason (the lab in this process, its real
 * queue, handler and emulators); the sweeper ends a `processing` record no
 * delivery will finish, once what it waits for is done and then on its timer.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3EventRecord, s3Notification } from '../../../infra/local/events.ts';
import { startLab, type Lab } from '../../../infra/local/lab.ts';
import { startSweeper } from '../../../infra/local/settle.ts';
import type { UploadListing } from '../../../shared/api.ts';
import { STUCK_AFTER_MS } from '../../../shared/config.ts';
import { MAX_MESSAGE_LENGTH } from '../../../shared/ingest/deps.ts';
import { claimUpload, getUpload } from '../../../shared/store/uploads.ts';
import { startEmulators, type Emulators } from '../../../harness/emulators.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'benchdrop-settle-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('dead letters in the lab', () => {
  let lab: Lab | undefined;
  const lines: string[] = [];
  afterAll(async () => {
    await lab?.stop();
  });

  it('end the upload failed with the reason, after the last receive, and are listed in dead-letters.jsonl', async () => {
    lab = await startLab({
      dataDir: join(scratch, 'lab'),
      fresh: true,
      samples: false,
      s3Port: 0,
      apiPort: 0,
      log: (line) => lines.push(line),
    });
    // An object in a bucket the lab does not have: every GetObject fails, and no retry helps.
    lab.queue.send(
      s3Notification(
        s3EventRecord({
          eventName: 'ObjectCreated:Put',
          bucket: 'no-such-bucket',
          key: 'lost/run.txt',
          size: 10,
          eTag: 'abc',
        }),
      ),
    );
    await lab.idle();

    const letters = (await readFile(join(lab.endpoints.dataDir, 'dead-letters.jsonl'), 'utf8')).trim().split('\n');
    expect(letters.map((l) => (JSON.parse(l) as { receives: number }).receives)).toEqual([3]);
    expect(lines.filter((l) => l.startsWith('dead letter')).join('\n')).toMatch(
      /failed 3 times[\s\S]*"what":"upload".*"ended":"ended"/,
    );
    const failed = (await (await fetch(`${lab.endpoints.apiUrl}/uploads?status=failed`)).json()) as {
      uploads: UploadListing[];
    };
    const lost = failed.uploads.find((u) => u.key === 'lost/run.txt');
    // Short, without the key (the listing names it): what happened and what to do. The last error is in `details`.
    expect(lost).toMatchObject({
      status: 'failed',
      key: 'lost/run.txt',
      line: 0,
      runCount: 0,
      message: 'ingest failed 3 time(s) and gave up; its partial runs were removed: upload the file again',
    });
    expect(lost!.message).not.toContain('lost/run.txt');
    expect(Array.from(lost!.message!).length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
    expect(lost!.details).toMatch(
      /^ingest failed 3 time\(s\) and gave up; the last error was: NoSuchBucket: .+; its partial runs were removed: upload the file again$/,
    );
  }, 30_000);
});

describe('the lab sweeper', () => {
  let env: Emulators;
  beforeAll(async () => {
    env = await startEmulators();
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('ends a processing record past its time once what it waits for is done, and keeps sweeping on its timer', async () => {
    const old = new Date(Date.now() - STUCK_AFTER_MS - 60_000).toISOString();
    const stuck = (key: string) => claimUpload(env.deps, { bucket: env.bucket, key, version: 'v1' }, old);
    await stuck('stuck/first.txt');
    let idle: () => void = () => {};
    const lines: string[] = [];
    const sweeper = startSweeper(
      {
        db: env.db,
        tableName: env.tableName,
        s3: env.s3,
        resultsBucket: env.resultsBucket,
        log: (line) => lines.push(line),
      },
      new Promise<void>((r) => (idle = r)),
      200,
    );
    try {
      expect((await getUpload(env.deps, env.bucket, 'stuck/first.txt', 'v1'))?.status).toBe('processing');
      idle();
      await until(async () => (await getUpload(env.deps, env.bucket, 'stuck/first.txt', 'v1'))?.status === 'failed');
      // Found later, by the timer.
      await stuck('stuck/second.txt');
      await until(async () => (await getUpload(env.deps, env.bucket, 'stuck/second.txt', 'v1'))?.status === 'failed');
      expect(lines.filter((l) => l.startsWith('sweep:'))).toEqual([
        'sweep: 1 stuck upload(s) ended failed, 1 overdue',
        'sweep: 1 stuck upload(s) ended failed, 1 overdue',
      ]);
    } finally {
      await sweeper.stop();
    }
  });
});

async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}
