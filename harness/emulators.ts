/**
 * dynalite (DynamoDB) and s3rver (S3) started in this process on free loopback
 * ports, with the table built from shared/store/table.ts and one bucket: what the
 * integration tests run the real handlers against. stop() closes the clients and
 * both servers and removes the temporary directory. The benches start them too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import '../infra/local/dynalite-iterators.ts';
import { createDocumentClient, createS3Client } from '../shared/aws.ts';
import type { ApiDeps } from '../functions/api/routes.ts';
import type { IngestDeps } from '../shared/ingest.ts';
import { untilStored } from '../infra/local/s3rver-writes.ts';
import { createLocalTable } from '../infra/local/table.ts';
import { startDynaliteProcess } from './dynalite-process.ts';

/** s3rver accepts only its own pair; dynalite accepts anything. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const DYNALITE_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
export const REGION = 'us-east-1';

export interface PutOptions {
  /** User metadata (`x-amz-meta-*`): `device`, `tags`. */
  metadata?: Record<string, string>;
  contentType?: string;
}

export interface PutResult {
  /** Without quotes, as S3 event notifications carry it. */
  eTag: string;
  size: number;
}

export interface Emulators {
  s3: S3Client;
  db: DynamoDBDocumentClient;
  tableName: string;
  bucket: string;
  /** The results bucket: ingest writes runs' samples objects there. */
  resultsBucket: string;
  s3Endpoint: string;
  dynamodbEndpoint: string;
  /** The dynalite child's process id, when it runs in one (to read its CPU time). */
  dynalitePid?: number;
  /** What the ingest handler needs, pointed at the emulators. */
  deps: IngestDeps;
  /** What the API handler needs, pointed at the same buckets and table. */
  apiDeps: ApiDeps;
  put(key: string, body: string | Uint8Array, options?: PutOptions): Promise<PutResult>;
  /** Another empty table in the same dynalite, built from shared/store/table.ts. */
  createTable(name: string): Promise<void>;
  stop(): Promise<void>;
}

export interface EmulatorOptions {
  tableName?: string;
  bucket?: string;
  maxUploadBytes?: number;
  /** dynalite in a child process (benchmarks: DynamoDB's work is not the caller's), instead of on this thread. */
  dynaliteProcess?: boolean;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}

type Cleanup = () => Promise<void> | void;

/** Runs the cleanups, last first; every one runs, and their errors are thrown together. */
async function runCleanups(cleanups: Cleanup[]): Promise<void> {
  const errors: unknown[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, 'stopping the emulators');
}

/** DynamoDB: in memory (no path), tables ACTIVE at once; in a child process or on this thread. */
async function startDynamo(inProcess: boolean, cleanups: Cleanup[]): Promise<{ endpoint: string; pid?: number }> {
  if (!inProcess) {
    const child = await startDynaliteProcess();
    cleanups.push(() => child.stop());
    return { endpoint: child.endpoint, pid: child.pid };
  }
  const dynamo = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    dynamo.once('error', reject);
    dynamo.listen(0, '127.0.0.1', () => resolve());
  });
  cleanups.push(() => closeServer(dynamo));
  return { endpoint: `http://127.0.0.1:${(dynamo.address() as AddressInfo).port}` };
}

async function startS3rver(directory: string, cleanups: Cleanup[]): Promise<string> {
  const s3rver = new S3rver({ port: 0, address: '127.0.0.1', directory, silent: true });
  const address = await s3rver.run();
  cleanups.push(() => s3rver.close());
  return `http://127.0.0.1:${address.port}`;
}

/** Creates a table of shared/store/table.ts's definition and waits until it is ACTIVE. */
function createTableAt(dynamodbEndpoint: string, name: string): Promise<void> {
  return createLocalTable(name, { region: REGION, endpoint: dynamodbEndpoint, credentials: DYNALITE_CREDENTIALS });
}

/** PUTs an object and waits until s3rver holds all of it. */
async function putObject(
  s3: S3Client,
  bucket: string,
  key: string,
  body: string | Uint8Array,
  options: PutOptions = {},
): Promise<PutResult> {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const result = await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: bytes,
      ContentType: options.contentType ?? 'text/plain',
      ...(options.metadata ? { Metadata: options.metadata } : {}),
    }),
  );
  if (!result.ETag) throw new Error(`s3rver returned no ETag for ${key}`);
  if (!(await untilStored(s3, bucket, key, bytes.byteLength)))
    throw new Error(`s3rver still holds less than the ${bytes.byteLength} bytes of ${key} after 2 s`);
  return { eTag: result.ETag.replace(/"/g, ''), size: bytes.byteLength };
}

export async function startEmulators(options: EmulatorOptions = {}): Promise<Emulators> {
  const tableName = options.tableName ?? 'benchdrop-test';
  const bucket = options.bucket ?? 'benchdrop-test-uploads';
  const directory = mkdtempSync(join(tmpdir(), 'benchdrop-s3rver-'));
  const cleanups: Cleanup[] = [() => rmSync(directory, { recursive: true, force: true })];
  const stop = () => runCleanups(cleanups);
  try {
    const dynamo = await startDynamo(!options.dynaliteProcess, cleanups);
    const dynamodbEndpoint = dynamo.endpoint;
    const s3Endpoint = await startS3rver(directory, cleanups);
    const s3 = createS3Client({ region: REGION, s3Endpoint, credentials: S3RVER_CREDENTIALS });
    cleanups.push(() => s3.destroy());
    const db = createDocumentClient({ region: REGION, dynamodbEndpoint, credentials: DYNALITE_CREDENTIALS });
    cleanups.push(() => db.destroy());
    const createTable = (name: string) => createTableAt(dynamodbEndpoint, name);
    await createTable(tableName);
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const resultsBucket = `${bucket}-results`;
    await s3.send(new CreateBucketCommand({ Bucket: resultsBucket }));
    const deps: IngestDeps = {
      s3,
      db,
      tableName,
      resultsBucket,
      maxUploadBytes: options.maxUploadBytes ?? 10_000_000,
    };
    const put = (key: string, body: string | Uint8Array, putOptions?: PutOptions) =>
      putObject(s3, bucket, key, body, putOptions);
    return {
      s3,
      db,
      tableName,
      bucket,
      resultsBucket,
      s3Endpoint,
      dynamodbEndpoint,
      ...(dynamo.pid !== undefined ? { dynalitePid: dynamo.pid } : {}),
      deps,
      apiDeps: { s3, db, tableName, bucket, resultsBucket, maxUploadBytes: deps.maxUploadBytes },
      put,
      createTable,
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}
