/**
 * The local lab: the whole pipeline in one process on this machine. s3rver and
 * dynalite (data under one folder) stand in for S3 and DynamoDB; s3rver's object
 * events become real-shaped S3 event records, delivered in SQS-shaped batches to
 * the very same ingest handler (LocalQueue: retries and a dead-letter list); an
 * HTTP server turns requests into API Gateway v2 events for the very same API
 * handler. The bucket and table come from the definitions the CDK stack uses.
 * Everything binds 127.0.0.1 unless asked otherwise.
 */
import { CreateTableCommand, DynamoDBClient, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import dynalite from 'dynalite';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { isIPv4, isIPv6, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import S3rver from 's3rver';
import { handler as apiHandler, setApiDeps } from '../../functions/api/handler.ts';
import { handler as ingestHandler, setIngestDeps } from '../../functions/ingest/handler.ts';
import { reportHtml } from '../../report/build.ts';
import { ROUTES } from '../../shared/api.ts';
import { createDocumentClient, createS3Client, type ClientOptions } from '../../shared/aws.ts';
import { LAB_DEFAULTS, MB } from '../../shared/config.ts';
import { indexIostatRunsByLabel } from '../../shared/store/migrations.ts';
import { createTableInput } from '../../shared/table.ts';
// Before dynalite serves a request: its LevelDB iterators must close (see the file).
import './dynalite-iterators.ts';
import { s3EventRecord, s3Notification, sequencerGenerator, type S3EventName } from './events.ts';
import { startHttpServer, type ApiHandler } from './http.ts';
import { DEFAULT_HOST, DEFAULT_PORTS } from './options.ts';
import { LocalQueue, type DeadLetter } from './queue.ts';
import { untilStored } from './s3rver-writes.ts';

export const LAB_BUCKET = 'benchdrop-drop';
export const LAB_TABLE = 'benchdrop';
/** s3rver accepts only its own credentials; dynalite accepts any. */
export const LAB_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
/** How long stopping waits for the queue to empty before it keeps the rest for the next start. */
const DRAIN_MS = 30_000;

export interface LabOptions {
  dataDir: string;
  s3Port?: number;
  apiPort?: number;
  /** Start with an empty data folder. */
  fresh?: boolean;
  /** Ingest the demo logs (if not already there). */
  samples?: boolean;
  /** Bind address; anything but loopback must be asked for explicitly. */
  host?: string;
  allowNonLoopback?: boolean;
  maxUploadBytes?: number;
  log?: (line: string) => void;
}

export interface LabEndpoints {
  s3Endpoint: string;
  bucket: string;
  table: string;
  dynamodbEndpoint: string;
  apiUrl: string;
  reportUrl: string;
  region: string;
  dataDir: string;
}

export interface Lab {
  endpoints: LabEndpoints;
  queue: LocalQueue;
  /** Resolves when every event so far is ingested (or dead-lettered). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const DEMO_DIR = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../../demo');

/** The demo logs and the keys (and metadata) they are uploaded under. */
export function demoUploads(): { file: string; key: string; metadata: Record<string, string> }[] {
  return readdirSync(DEMO_DIR)
    .filter((f) => f.endsWith('.txt'))
    .sort()
    .map((file) => {
      const metadata: Record<string, string> = file.includes('iostat') ? { tags: 'interface=SAS;rpm=10000;medium=hdd' } : {};
      return { file, key: file.includes('iostat') ? `x4100/${file}` : file, metadata };
    });
}

/**
 * A loopback address: 127.0.0.0/8, ::1 (also IPv4-mapped), or `localhost`, which
 * RFC 6761 keeps on loopback. A host name that merely starts with "127." is not.
 */
export function isLoopback(host: string): boolean {
  const address = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (address === 'localhost') return true;
  if (isIPv4(address)) return address.startsWith('127.');
  if (!isIPv6(address)) return false;
  // The URL parser writes IPv6 in its shortest form: ::1, or ::ffff:7f00:1 for 127.0.0.1.
  const canonical = new URL(`http://[${address}]/`).hostname;
  const mapped = /^\[::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}\]$/.exec(canonical);
  return canonical === '[::1]' || (mapped !== null && Number.parseInt(mapped[1]!, 16) >> 8 === 127);
}

/** Refuses a non-loopback address unless asked for explicitly: the lab has no authentication. */
export function checkBindAddress(host: string, allowNonLoopback: boolean): void {
  if (!isLoopback(host) && !allowNonLoopback) {
    throw new Error(`refusing to bind ${host}: the lab has no authentication; pass --allow-non-loopback to expose it anyway`);
  }
}

export async function startLab(options: LabOptions): Promise<Lab> {
  const host = options.host ?? DEFAULT_HOST;
  checkBindAddress(host, options.allowNonLoopback === true);
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const dataDir = resolve(options.dataDir);
  if (options.fresh) rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(join(dataDir, 's3'), { recursive: true });
  mkdirSync(join(dataDir, 'dynamodb'), { recursive: true });

  // DynamoDB: dynalite on disk (LevelDB).
  const dynamo = dynalite({ path: join(dataDir, 'dynamodb'), createTableMs: 0 });
  // Only the lab's own handlers talk to it: any free port, on loopback whatever --host says.
  await new Promise<void>((ok, fail) => dynamo.listen(0, DEFAULT_HOST, (error?: Error) => (error ? fail(error) : ok())));
  const dynamoPort = (dynamo.address() as AddressInfo).port;
  const dynamodbEndpoint = `http://${DEFAULT_HOST}:${dynamoPort}`;

  // S3: s3rver on disk, the drop bucket configured.
  const s3rver = new S3rver({ port: options.s3Port ?? DEFAULT_PORTS.s3, address: host, directory: join(dataDir, 's3'), silent: true, configureBuckets: [{ name: LAB_BUCKET, configs: [] }] });
  const s3Address = (await s3rver.run()) as AddressInfo;
  const s3Endpoint = `http://${host}:${s3Address.port}`;

  const clients: ClientOptions = { region: 'us-east-1', s3Endpoint, dynamodbEndpoint, credentials: LAB_CREDENTIALS };
  const s3 = createS3Client(clients);
  const db = createDocumentClient(clients);
  await createTable(dynamodbEndpoint);
  const upgraded = await indexIostatRunsByLabel({ db, tableName: LAB_TABLE });
  if (upgraded > 0) log(`indexed ${upgraded} iostat run(s) stored by an earlier version under their upload's label`);
  const maxUploadBytes = options.maxUploadBytes ?? LAB_DEFAULTS.maxUploadMB * MB;
  setIngestDeps({ s3, db, tableName: LAB_TABLE, maxUploadBytes });

  const context = (): Context => localContext();
  const deadLetterFile = join(dataDir, 'dead-letters.jsonl');
  const queue = new LocalQueue({
    handler: ingestHandler as never,
    context,
    onDeadLetter: (letter: DeadLetter) => {
      writeFileSync(deadLetterFile, `${JSON.stringify(letter)}\n`, { flag: 'a' });
      log(`dead letter: message ${letter.messageId} failed ${letter.receives} times (kept in ${deadLetterFile})`);
    },
    onError: (error) => log(`ingest error: ${(error as Error).message}`),
  });

  // s3rver emits inside the request: hand events over on the next tick, never throw there.
  const nextSequencer = sequencerGenerator();
  s3rver.on('event', (event: { Records: { eventName: string; s3: { bucket: { name: string }; object: { key: string; size?: number; eTag?: string } } }[] }) => {
    setImmediate(() => {
      void (async () => {
        for (const raw of event.Records) {
          const eventName = localEventName(raw.eventName);
          const { bucket, object } = { bucket: raw.s3.bucket.name, object: raw.s3.object };
          let { size, eTag } = object;
          if (eventName.startsWith('ObjectCreated') && (size === undefined || eTag === undefined)) {
            // s3rver's copy events carry no eTag: ask for it, as S3 would have sent it.
            const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: object.key }));
            size = head.ContentLength ?? 0;
            eTag = head.ETag ?? '';
          }
          // The event can outrun s3rver's own write (see s3rver-writes.ts): hand it on once the
          // object is whole, or after a while anyway (a later PUT may have replaced it).
          if (eventName.startsWith('ObjectCreated') && size !== undefined) await untilStored(s3, bucket, object.key, size, 30_000);
          const record = s3EventRecord({ eventName, bucket, key: object.key, ...(size !== undefined ? { size } : {}), ...(eTag !== undefined ? { eTag } : {}), sequencer: nextSequencer() });
          queue.send(s3Notification(record));
        }
      })().catch((error: unknown) => log(`could not turn an S3 event into a message: ${(error as Error).message}`));
    });
  });

  setApiDeps({ s3, db, tableName: LAB_TABLE, bucket: LAB_BUCKET, maxUploadBytes });
  const http = await startHttpServer({ host, port: options.apiPort ?? DEFAULT_PORTS.api, handler: apiHandler as ApiHandler, context, routeKeys: Object.values(ROUTES), serve: serveReport });
  const apiUrl = `http://${host}:${(http.address() as AddressInfo).port}`;

  const endpoints: LabEndpoints = { s3Endpoint, bucket: LAB_BUCKET, table: LAB_TABLE, dynamodbEndpoint, apiUrl, reportUrl: `${apiUrl}/`, region: 'us-east-1', dataDir };
  writeFileSync(join(dataDir, 'lab.json'), `${JSON.stringify(endpoints, null, 2)}\n`);

  if (options.samples !== false) {
    for (const upload of demoUploads()) {
      if (await exists(s3, upload.key)) continue;
      await s3.send(new PutObjectCommand({ Bucket: LAB_BUCKET, Key: upload.key, Body: readFileSync(join(DEMO_DIR, upload.file)), Metadata: upload.metadata }));
    }
  }

  // Messages a previous run could not finish before it stopped go first.
  const pendingFile = join(dataDir, 'pending-messages.jsonl');
  if (existsSync(pendingFile)) {
    const bodies = readFileSync(pendingFile, 'utf8').split('\n').filter(Boolean);
    for (const body of bodies) queue.sendBody(body);
    rmSync(pendingFile);
    log(`resuming ${bodies.length} message(s) left from the last run`);
  }

  let stopping: Promise<void> | undefined;
  return {
    endpoints,
    queue,
    idle: async () => {
      // Events reach the queue a tick after the request that caused them.
      await new Promise((r) => setImmediate(r));
      await queue.idle();
    },
    stop: () =>
      (stopping ??= (async () => {
        // Nothing lost: no new API calls; let the queue finish what it holds (S3 stays up
        // for the ingest to read), and keep what it cannot finish in time for the next start.
        await closeServer(http);
        await new Promise((r) => setImmediate(r));
        await Promise.race([queue.idle(), new Promise((r) => setTimeout(r, DRAIN_MS).unref())]);
        await queue.stop();
        await s3rver.close();
        // After S3 is closed no event can arrive: what the queue holds now is all there is.
        await new Promise((r) => setImmediate(r));
        const pending = queue.pendingBodies();
        if (pending.length > 0) {
          writeFileSync(pendingFile, pending.map((b) => `${b}\n`).join(''));
          log(`${pending.length} message(s) not yet ingested are kept in ${pendingFile} for the next start`);
        }
        await new Promise<void>((r) => dynamo.close(() => r()));
      })()),
  };
}

/** GET / is the report page (the API has no route there). */
async function serveReport(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const path = new URL(req.url ?? '/', 'http://local').pathname;
  if (req.method !== 'GET' || (path !== '/' && path !== '/index.html')) return false;
  const html = await reportHtml();
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(html);
  return true;
}

async function exists(s3: ReturnType<typeof createS3Client>, key: string): Promise<boolean> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: LAB_BUCKET, Key: key }));
    return true;
  } catch {
    return false;
  }
}

async function createTable(endpoint: string): Promise<void> {
  const client = new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: LAB_CREDENTIALS });
  try {
    await client.send(new CreateTableCommand(createTableInput(LAB_TABLE)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException) && (error as { name?: string }).name !== 'ResourceInUseException') throw error;
  } finally {
    client.destroy();
  }
}

/** s3rver names a completed multipart upload ObjectCreated:Post; S3 says CompleteMultipartUpload. */
function localEventName(name: string): S3EventName {
  if (name === 'ObjectCreated:Post') return 'ObjectCreated:CompleteMultipartUpload';
  return name as S3EventName;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
}

let invocation = 0;
function localContext(): Context {
  const id = `local-${++invocation}`;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'benchdrop-local',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:benchdrop-local',
    memoryLimitInMB: '1024',
    awsRequestId: id,
    logGroupName: '/local/benchdrop',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 300_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

