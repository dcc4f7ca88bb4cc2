/**
 * The lab's S3 endpoint keeps every request inside its data folder: the lab's own
 * s3rver (infra/local/s3.ts, key guard installed) on a free loopback port, driven
 * by raw HTTP requests (percent-encoded or not, as a hostile client sends them)
 * and by the AWS SDK (as real clients do). Files planted next to the data folder
 * are what a traversal would read, overwrite, copy or unlink; afterwards nothing
 * outside <data>/s3 may have changed and no refused request may have sent an event.
 */
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3NotificationRecord } from '../../../infra/local/events.ts';
import { keyProblem, refusal } from '../../../infra/local/key-guard.ts';
import { startLabS3, type LabS3 } from '../../../infra/local/s3.ts';
import { createS3Client } from '../../../shared/aws.ts';

const BUCKET = 'benchdrop-drop';
/** s3rver's file names for an object's content and metadata (lib/stores/filesystem.js). */
const OBJECT_FILE = (name: string) => `${name}._S3rver_object`;
const METADATA_FILE = (name: string) => `${name}._S3rver_metadata.json`;

let scratch: string;
let dataDir: string;
let lab: LabS3;
let endpoint: string;
let s3: S3Client;
const events: S3NotificationRecord[] = [];
/** Every file under scratch outside <data>/s3, with its size, before the requests. */
let outsideBefore: Map<string, number>;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'benchdrop-key-guard-'));
  dataDir = join(scratch, 'lab');
  mkdirSync(join(dataDir, 's3'), { recursive: true });
  // What ../../ from the bucket reaches (<scratch>/lab/s3/benchdrop-drop/../../ is <scratch>/lab): an "object" to steal, one to delete.
  plantObject(join(dataDir, 'secret'), 'not for the bucket');
  plantObject(join(dataDir, 'victim'), 'must survive');
  lab = await startLabS3({
    host: '127.0.0.1',
    port: 0,
    directory: join(dataDir, 's3'),
    bucket: BUCKET,
    resultsBucket: `${BUCKET}-results`,
    onEvent: (record) => events.push(record),
  });
  endpoint = `http://127.0.0.1:${lab.address.port}`;
  s3 = createS3Client({
    region: 'us-east-1',
    s3Endpoint: endpoint,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  outsideBefore = filesOutsideS3();
});

afterAll(async () => {
  s3?.destroy();
  await lab?.s3rver.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

function plantObject(path: string, content: string): void {
  writeFileSync(OBJECT_FILE(path), content);
  writeFileSync(METADATA_FILE(path), JSON.stringify({ 'content-type': 'text/plain', etag: '"0"' }));
}

function filesOutsideS3(): Map<string, number> {
  const files = new Map<string, number>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (path === join(dataDir, 's3')) continue;
      if (entry.isDirectory()) walk(path);
      else files.set(relative(scratch, path), statSync(path).size);
    }
  };
  walk(scratch);
  return files;
}

interface Answer {
  status: number;
  body: string;
}

/** One request exactly as written: Node sends the path without normalising it. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body = 'escaped!'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = request(
      `${endpoint}${path.startsWith('/') ? '' : '/'}`,
      { method, path, headers: { 'content-length': String(Buffer.byteLength(body)), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

const B = `/${BUCKET}`;
const uploadId = 'a'.repeat(32);

/** Requests that would reach outside the bucket's folder, each with what it tries. */
const HOSTILE: { what: string; method: string; path: string; headers?: Record<string, string>; status?: number }[] = [
  { what: 'PUT ../ as the AWS CLI sends it', method: 'PUT', path: `${B}/../../x/escape.txt` },
  { what: 'PUT %2e%2e', method: 'PUT', path: `${B}/%2e%2e/%2e%2e/x/escape.txt` },
  { what: 'PUT %2E%2E after a folder', method: 'PUT', path: `${B}/a/%2E%2E/%2E%2E/%2E%2E/x/escape.txt` },
  { what: 'PUT with encoded slashes', method: 'PUT', path: `${B}/a%2F..%2F..%2F..%2Fx%2Fescape.txt` },
  { what: 'PUT a . segment', method: 'PUT', path: `${B}/./escape.txt` },
  { what: 'PUT a trailing .. segment', method: 'PUT', path: `${B}/a/..` },
  { what: 'PUT a leading /', method: 'PUT', path: `${B}//escape.txt` },
  { what: 'PUT raw backslashes', method: 'PUT', path: `${B}/..\\..\\x\\escape.txt` },
  { what: 'PUT %5C backslashes', method: 'PUT', path: `${B}/..%5C..%5Cescape.txt` },
  { what: 'PUT a NUL', method: 'PUT', path: `${B}/escape%00.txt` },
  { what: 'PUT a key over 1024 bytes', method: 'PUT', path: `${B}/${'k'.repeat(1025)}` },
  { what: 'PUT a malformed escape', method: 'PUT', path: `${B}/escape%E0%A4%A.txt` },
  { what: 'PUT into bucket ..', method: 'PUT', path: '/%2e%2e/escape.txt' },
  { what: 'PUT into bucket ../x', method: 'PUT', path: '/..%2Fx/escape.txt' },
  {
    what: 'PUT with a Host naming bucket ..',
    method: 'PUT',
    path: '/escape.txt',
    headers: { host: '...s3.amazonaws.com' },
  },
  { what: 'GET ../secret', method: 'GET', path: `${B}/../../secret` },
  { what: 'GET %2e%2e/secret', method: 'GET', path: `${B}/%2e%2e/%2e%2e/secret` },
  { what: 'HEAD ../secret', method: 'HEAD', path: `${B}/../../secret` },
  { what: 'GET a listing of bucket ..', method: 'GET', path: '/%2e%2e' },
  { what: 'DELETE ../victim', method: 'DELETE', path: `${B}/../../victim` },
  { what: 'DELETE %2e%2e/victim', method: 'DELETE', path: `${B}/%2e%2e/%2E%2e/victim` },
  { what: 'POST multipart start at ../', method: 'POST', path: `${B}/../../x/escape.txt?uploads` },
  { what: 'POST multipart start at %2e%2e', method: 'POST', path: `${B}/%2e%2e/%2e%2e/x/escape.txt?uploads` },
  { what: 'PUT a part under uploadId ../', method: 'PUT', path: `${B}/ok.txt?partNumber=1&uploadId=..%2F..%2F..%2Fx` },
  {
    what: 'PUT a part numbered ../',
    method: 'PUT',
    path: `${B}/ok.txt?partNumber=..%2F..%2F..%2F..%2Fescape.txt&uploadId=${uploadId}`,
  },
  { what: 'POST multipart completion of uploadId ../', method: 'POST', path: `${B}/ok.txt?uploadId=..%2F..%2F..%2F..` },
  { what: 'DELETE (abort) uploadId ../', method: 'DELETE', path: `${B}/ok.txt?uploadId=..%2F..%2F..` },
  {
    what: 'COPY from ../secret (header)',
    method: 'PUT',
    path: `${B}/stolen.txt`,
    headers: { 'x-amz-copy-source': `${BUCKET}/../../secret` },
  },
  {
    what: 'COPY from %2e%2e/secret (header)',
    method: 'PUT',
    path: `${B}/stolen.txt`,
    headers: { 'x-amz-copy-source': `/${BUCKET}/%2e%2e/%2e%2e/secret` },
  },
  {
    what: 'COPY from bucket .. (header)',
    method: 'PUT',
    path: `${B}/stolen.txt`,
    headers: { 'x-amz-copy-source': '../secret' },
  },
  {
    what: 'COPY from ../secret (query parameter)',
    method: 'PUT',
    path: `${B}/stolen.txt?X-Amz-Copy-Source=${encodeURIComponent(`${BUCKET}/../../secret`)}`,
  },
  {
    what: 'COPY to ../',
    method: 'PUT',
    path: `${B}/../../stolen.txt`,
    headers: { 'x-amz-copy-source': `${BUCKET}/fine.txt` },
  },
  { what: 'POST a form upload (key in the body)', method: 'POST', path: B, status: 501 },
  { what: 'POST DeleteObjects (keys in the body)', method: 'POST', path: `${B}?delete`, status: 501 },
];

describe("the lab's S3 endpoint", () => {
  it('refuses every request whose key, bucket, upload id, part number or copy source would leave the bucket, with an S3 XML error', async () => {
    for (const hostile of HOSTILE) {
      const answer = await raw(hostile.method, hostile.path, hostile.headers);
      expect(answer.status, hostile.what).toBe(hostile.status ?? 400);
      if (hostile.method !== 'HEAD')
        expect(answer.body, hostile.what).toMatch(
          /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<Error><Code>(InvalidArgument|InvalidBucketName|NoSuchUpload|NotImplemented)<\/Code><Message>[^<]+<\/Message><\/Error>$/,
        );
    }
    expect(events).toEqual([]);
    // Nothing outside <data>/s3 was written, changed or removed; nothing at all landed as escape.txt.
    expect(filesOutsideS3()).toEqual(outsideBefore);
    expect(readFileSync(OBJECT_FILE(join(dataDir, 'victim')), 'utf8')).toBe('must survive');
    expect(existsSync(join(scratch, 'x'))).toBe(false);
    expect(existsSync(join(dataDir, 'x'))).toBe(false);
  });

  it('still takes every ordinary request: PUT, GET, copy, multipart and DELETE, keys with spaces and dots inside segments', async () => {
    const keys = ['fine.txt', 'my disk/run 1.txt', 'dots/..not-a-segment/file...txt', 'x4100/solaris-x4100.iostat.txt'];
    for (const key of keys)
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: `content of ${key}` }));
    for (const key of keys)
      expect(await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString()).toBe(
        `content of ${key}`,
      );
    await s3.send(
      new CopyObjectCommand({ Bucket: BUCKET, Key: 'copied/fine.txt', CopySource: `${BUCKET}/my%20disk/run%201.txt` }),
    );
    expect(
      await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'copied/fine.txt' }))).Body!.transformToString(),
    ).toBe('content of my disk/run 1.txt');
    const started = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'multi/part.txt' }));
    const part = await s3.send(
      new UploadPartCommand({
        Bucket: BUCKET,
        Key: 'multi/part.txt',
        UploadId: started.UploadId,
        PartNumber: 1,
        Body: 'one part',
      }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: 'multi/part.txt',
        UploadId: started.UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag! }] },
      }),
    );
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'fine.txt' }));

    const decoded = (key: string) => decodeURIComponent(key.replace(/\+/g, ' '));
    expect(events.map((e) => [e.eventName, decoded(e.s3.object.key)])).toEqual([
      ...keys.map((key) => ['ObjectCreated:Put', key]),
      ['ObjectCreated:Copy', 'copied/fine.txt'],
      ['ObjectCreated:CompleteMultipartUpload', 'multi/part.txt'],
      ['ObjectRemoved:Delete', 'fine.txt'],
    ]);
    expect(filesOutsideS3()).toEqual(outsideBefore);
  });
});

describe('the key rule', () => {
  it("is the API presigner's rule (shared/api.ts CreateUploadBody) plus no backslash", () => {
    for (const key of ['a', 'my disk/run 1.txt', '..a/b..', 'a//b', 'ünïcode/ключ.txt', 'k'.repeat(1024)])
      expect(keyProblem(key), key).toBeUndefined();
    const refused: [string, string][] = [
      ['', ''],
      ['..', '. or ..'],
      ['a/./b', '. or ..'],
      ['a/..', '. or ..'],
      ['/a', 'leading /'],
      ['a\u0000b', 'control'],
      ['a\nb', 'control'],
      ['a\\..\\b', 'backslash'],
      ['k'.repeat(1025), '1024 bytes'],
      ['é'.repeat(513), '1024 bytes'],
    ];
    for (const [key, problem] of refused) expect(keyProblem(key), JSON.stringify(key)).toContain(problem);
  });

  it('lets service-level and bucket-level requests through, but no POST on a bucket', () => {
    const request = (method: string, path: string) => refusal({ method, path, query: {}, headers: {} });
    expect(request('GET', '/')).toBeUndefined();
    expect(request('GET', B)).toBeUndefined();
    expect(request('GET', `${B}/`)).toBeUndefined();
    expect(request('PUT', '/another-bucket')).toBeUndefined();
    expect(request('POST', B)?.status).toBe(501);
    expect(request('GET', '//x')?.code).toBe('InvalidBucketName');
  });
});
