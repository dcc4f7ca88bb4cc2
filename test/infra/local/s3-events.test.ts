/**
 * The lab's S3 events reach the journal before the client hears back: the lab's
 * own s3rver (infra/local/s3.ts) wired to a LocalQueue with a journal as the lab
 * wires them, the queue held (nothing is delivered, so whatever is on
 * disk is what the request left). Real HTTP requests through the AWS SDK.
 */
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Notification, type S3Notification } from '../../../infra/local/events.ts';
import { Journal, type JournalEntry } from '../../../infra/local/journal.ts';
import { LocalQueue } from '../../../infra/local/queue.ts';
import { prepareNotification, startLabS3, type LabS3 } from '../../../infra/local/s3.ts';
import { createS3Client } from '../../../shared/aws.ts';

const BUCKET = 'benchdrop-drop';
const RESULTS_BUCKET = 'benchdrop-results';
let scratch: string;
let journal: Journal;
let lab: LabS3;
let s3: S3Client;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'benchdrop-s3-events-'));
  journal = new Journal(join(scratch, 'queue'), join(scratch, 'dead-letters.jsonl'));
  const queue = new LocalQueue({
    journal,
    held: true,
    context: () => ({}) as Context,
    handler: async () => expect.unreachable('the queue is not started'),
  });
  lab = await startLabS3({
    host: '127.0.0.1',
    port: 0,
    directory: join(scratch, 's3'),
    bucket: BUCKET,
    resultsBucket: RESULTS_BUCKET,
    onEvent: (record) => queue.send(s3Notification(record), { unprepared: true }),
  });
  // One attempt: a refused request must show as refused, not be sent again.
  s3 = createS3Client({
    region: 'us-east-1',
    s3Endpoint: `http://127.0.0.1:${lab.address.port}`,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    maxAttempts: 1,
  });
});

afterAll(async () => {
  s3?.destroy();
  await lab?.s3rver.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** The journal's messages added since `seen` of them, with their one S3 record each. */
function journaledAfter(seen: number): (JournalEntry & { record: S3Notification['Records'][number] })[] {
  const entries = readdirSync(journal.dir)
    .sort()
    .map((name) => JSON.parse(readFileSync(join(journal.dir, name), 'utf8')) as JournalEntry);
  return entries
    .slice(seen)
    .map((entry) => ({ ...entry, record: (JSON.parse(entry.body) as S3Notification).Records[0]! }));
}

const count = () => readdirSync(journal.dir).length;

describe("the lab's S3 events", () => {
  it('journal a PUT, whole and durable, before its response comes back', async () => {
    const before = count();
    const put = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'my disk/run 1.txt', Body: 'hello, disk' }));
    // Read as soon as the response is here: nothing else has run in the lab since.
    const [entry] = journaledAfter(before);
    expect(entry).toMatchObject({
      receives: 0,
      unprepared: true,
      record: {
        eventName: 'ObjectCreated:Put',
        eventSource: 'aws:s3',
        s3: {
          bucket: { name: BUCKET },
          object: { key: 'my+disk/run+1.txt', size: 11, eTag: put.ETag!.replace(/"/g, '') },
        },
      },
    });
    expect(entry!.record.s3.object.sequencer).toMatch(/^[0-9A-F]{18}$/);
    expect(readdirSync(journal.dir).filter((name) => !name.endsWith('.json'))).toEqual([]);
  });

  it('journal nothing for the results bucket: a samples object, put or multipart, is never an upload', async () => {
    const before = count();
    await s3.send(new PutObjectCommand({ Bucket: RESULTS_BUCKET, Key: 'samples/r1.parquet', Body: 'PAR1' }));
    const upload = await s3.send(
      new CreateMultipartUploadCommand({ Bucket: RESULTS_BUCKET, Key: 'samples/r2.parquet' }),
    );
    const part = await s3.send(
      new UploadPartCommand({
        Bucket: RESULTS_BUCKET,
        Key: 'samples/r2.parquet',
        UploadId: upload.UploadId,
        PartNumber: 1,
        Body: 'PAR1',
      }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: RESULTS_BUCKET,
        Key: 'samples/r2.parquet',
        UploadId: upload.UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
      }),
    );
    await s3.send(new DeleteObjectCommand({ Bucket: RESULTS_BUCKET, Key: 'samples/r1.parquet' }));
    expect(journaledAfter(before)).toEqual([]);
    // The drop bucket's events still go in.
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'after-results.txt', Body: 'x' }));
    expect(journaledAfter(before).map((e) => e.record.s3.bucket.name)).toEqual([BUCKET]);
  });

  it('journal a copy (its eTag asked for before the first delivery), a multipart upload and a delete, in order, sequencers growing', async () => {
    const before = count();
    const source = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'source.txt', Body: 'copied bytes' }));
    await s3.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'copy.txt', CopySource: `${BUCKET}/source.txt` }));
    const started = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'multi.txt' }));
    const part = await s3.send(
      new UploadPartCommand({
        Bucket: BUCKET,
        Key: 'multi.txt',
        UploadId: started.UploadId,
        PartNumber: 1,
        Body: 'a part',
      }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: 'multi.txt',
        UploadId: started.UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag! }] },
      }),
    );
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'source.txt' }));

    const entries = journaledAfter(before);
    expect(entries.map((e) => [e.record.eventName, e.record.s3.object.key])).toEqual([
      ['ObjectCreated:Put', 'source.txt'],
      ['ObjectCreated:Copy', 'copy.txt'],
      ['ObjectCreated:CompleteMultipartUpload', 'multi.txt'],
      ['ObjectRemoved:Delete', 'source.txt'],
    ]);
    const sequencers = entries.map((e) => e.record.s3.object.sequencer);
    expect([...sequencers].sort()).toEqual(sequencers);
    expect(new Set(sequencers).size).toBe(4);
    expect(entries[3]!.record.s3.object).not.toHaveProperty('size');

    // s3rver's copy event has no eTag: the first delivery asks S3 for it.
    const copy = entries[1]!;
    expect(copy.record.s3.object.eTag).toBe('');
    const prepared = JSON.parse((await prepareNotification(s3, copy.body))!) as S3Notification;
    expect(prepared.Records[0]!.s3.object).toMatchObject({
      key: 'copy.txt',
      size: 12,
      eTag: source.ETag!.replace(/"/g, ''),
    });
    // A copy whose object is gone before its first delivery has nothing left to deliver.
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'copy.txt' }));
    expect(await prepareNotification(s3, copy.body)).toBeUndefined();
  });

  it('fail the request (500, so the client tries again) when the message cannot be journaled', async () => {
    const before = count();
    // A file where the journal's folder was: the message cannot be written.
    const aside = `${journal.dir}.aside`;
    renameSync(journal.dir, aside);
    writeFileSync(journal.dir, 'not a folder');
    try {
      const refused = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'unjournaled.txt', Body: 'x' })).then(
        () => 'stored',
        (error: { $metadata?: { httpStatusCode?: number } }) => error.$metadata?.httpStatusCode,
      );
      expect(refused).toBe(500);
    } finally {
      rmSync(journal.dir);
      renameSync(aside, journal.dir);
    }
    expect(count()).toBe(before);
  });
});
