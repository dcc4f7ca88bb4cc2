/**
 * The local lab: the whole pipeline in one process on this machine. s3rver and
 * dynalite (data under one folder) stand in for S3 and DynamoDB; s3rver's object
 * events become real-shaped S3 event records, journaled (crash-safe) and
 * delivered in SQS-shaped batches by LocalQueue (retries, a dead-letter list,
 * several batches at once) to the very same ingest handler; an HTTP server turns
 * requests into API Gateway v2 events for the very same API handler. The bucket
 * and table come from the definitions the CDK stack uses. Everything binds
 * 127.0.0.1 unless asked otherwise.
 */
import { CreateTableCommand, DynamoDBClient, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import dynalite from 'dynalite';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { isIPv4, isIPv6, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { handler as apiHandler, setApiDeps } from '../../functions/api/handler.ts';
import { packageFile } from '../../shared/module-paths.ts';
import { reportHtml } from '../../report/build.ts';
import { ROUTES } from '../../shared/api.ts';
import { createDocumentClient, createS3Client, type ClientOptions } from '../../shared/aws.ts';
import { INGEST_LIMITS, LAB_DEFAULTS, MB } from '../../shared/config.ts';
import { indexIostatRunsByLabel, settleUploadStates } from '../../shared/store/migrations.ts';
import { createTableInput } from '../../shared/table.ts';
// Before dynalite serves a request: its LevelDB iterators must close (see the file).
import './dynalite-iterators.ts';
import { s3Notification } from './events.ts';
import { startHttpServer, type ApiHandler } from './http.ts';
import { ingestEnvironments } from './ingest-environments.ts';
import { adoptPendingFile, Journal } from './journal.ts';
import { DEFAULT_HOST, DEFAULT_PORTS } from './options.ts';
import { LocalQueue } from './queue.ts';
import { prepareNotification, startLabS3 } from './s3.ts';
import { settleDeadLetter, startSweeper } from './settle.ts';

export const LAB_BUCKET = 'benchdrop-drop';
export const LAB_TABLE = 'benchdrop';
/** s3rver accepts only its own credentials; dynalite accepts any. */
export const LAB_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
/** How long stopping waits for the batches in flight; what is not done stays journaled for the next start. */
const DRAIN_MS = 30_000;
/**
 * Ingest batches in flight at once, one message each: one slow file (a huge log,
 * a gzip bomb being refused) holds one worker, not the queue.
 */
export const LAB_QUEUE = { workers: 4, batchSize: 1, batchWindowMs: 0 };

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
  maxSeriesPerFile?: number;
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
  /** The process serving the lab, to stop it by (SIGTERM): under `npm start`, npm's child, not npm itself. */
  pid: number;
}

export interface Lab {
  endpoints: LabEndpoints;
  queue: LocalQueue;
  /** Resolves when every event so far is ingested (or dead-lettered). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const DEMO_DIR = packageFile(import.meta.url, 'demo');

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

  // The queue, kept on disk; held until its handlers are set up (start() below).
  const journal = new Journal(join(dataDir, 'queue'), join(dataDir, 'dead-letters.jsonl'));
  const queue = new LocalQueue({
    ...LAB_QUEUE,
    journal,
    held: true,
    handler: (event, context, worker) => environments[worker]!.handler(event, context),
    context: () => localContext(),
    prepare: (body) => prepareNotification(s3, body),
    onDeadLetter: async (letter) => {
      log(`dead letter: message ${letter.messageId} failed ${letter.receives} times (kept in ${journal.deadLetterFile})`);
      await settle(letter);
    },
    onError: (error) => log(`ingest error: ${(error as Error).message}`),
  });

  // S3: s3rver on disk, the drop bucket configured; each event journaled before its request is answered.
  const labS3 = await startLabS3({ host, port: options.s3Port ?? DEFAULT_PORTS.s3, directory: join(dataDir, 's3'), bucket: LAB_BUCKET, onEvent: (record) => queue.send(s3Notification(record), { unprepared: true }) });
  const s3Endpoint = `http://${host}:${labS3.address.port}`;

  const clients: ClientOptions = { region: 'us-east-1', s3Endpoint, dynamodbEndpoint, credentials: LAB_CREDENTIALS };
  const s3 = createS3Client(clients);
  const db = createDocumentClient(clients);
  const settle = settleDeadLetter({ db, tableName: LAB_TABLE, log });
  await createTable(dynamodbEndpoint);
  const upgraded = await indexIostatRunsByLabel({ db, tableName: LAB_TABLE });
  if (upgraded > 0) log(`indexed ${upgraded} iostat run(s) stored by an earlier version under their upload's label`);
  const settled = await settleUploadStates({ db, tableName: LAB_TABLE }, new Date().toISOString());
  if (settled > 0) log(`checked the upload records of ${settled} key(s) stored by an earlier version: replaced and deleted versions now say so`);
  const maxUploadBytes = options.maxUploadBytes ?? LAB_DEFAULTS.maxUploadMB * MB;
  const maxSeriesPerFile = options.maxSeriesPerFile ?? LAB_DEFAULTS.maxSeriesPerFile;
  // A step that cannot finish in time sends its continuation through the same (journaled) queue.
  const environments = await ingestEnvironments(LAB_QUEUE.workers, { s3, db, tableName: LAB_TABLE, maxUploadBytes, maxSeriesPerFile, requeue: async (body: string) => queue.sendBody(body) });

  const resumed = queue.start();
  if (resumed.resumed > 0) log(`resuming ${resumed.resumed} message(s) left from the last run${resumed.exhausted > 0 ? ` (${resumed.exhausted} of them received too often: dead-lettered)` : ''}`);
  if (resumed.unreadable.length > 0) log(`${resumed.unreadable.length} unreadable queue file(s) in ${journal.dir}: ${resumed.unreadable.join(', ')}`);
  // Left by an earlier version, which kept its queue there on a clean stop.
  const adopted = adoptPendingFile(join(dataDir, 'pending-messages.jsonl'), (body) => queue.sendBody(body));
  if (adopted > 0) log(`resuming ${adopted} message(s) an earlier version kept in pending-messages.jsonl`);

  setApiDeps({ s3, db, tableName: LAB_TABLE, bucket: LAB_BUCKET, maxUploadBytes });
  const http = await startHttpServer({ host, port: options.apiPort ?? DEFAULT_PORTS.api, handler: apiHandler as ApiHandler, context: () => localContext(), routeKeys: Object.values(ROUTES), serve: serveReport });
  const apiUrl = `http://${host}:${(http.address() as AddressInfo).port}`;

  const endpoints: LabEndpoints = { s3Endpoint, bucket: LAB_BUCKET, table: LAB_TABLE, dynamodbEndpoint, apiUrl, reportUrl: `${apiUrl}/`, region: 'us-east-1', dataDir, pid: process.pid };
  writeFileSync(join(dataDir, 'lab.json'), `${JSON.stringify(endpoints, null, 2)}\n`);

  if (options.samples !== false) {
    for (const upload of demoUploads()) {
      if (await exists(s3, upload.key)) continue;
      await s3.send(new PutObjectCommand({ Bucket: LAB_BUCKET, Key: upload.key, Body: readFileSync(join(DEMO_DIR, upload.file)), Metadata: upload.metadata }));
    }
  }

  // Once what the journal kept is ingested, whatever is still `processing` has no delivery left.
  const sweeper = startSweeper({ db, tableName: LAB_TABLE, log }, queue.idle());

  let stopping: Promise<void> | undefined;
  return {
    endpoints,
    queue,
    idle: () => queue.idle(),
    stop: () =>
      (stopping ??= (async () => {
        // No new API calls; the batches in flight get a while to finish (S3 stays up for
        // them to read); everything not done stays in the journal for the next start.
        await closeServer(http);
        await Promise.race([queue.stop(), new Promise((r) => setTimeout(r, DRAIN_MS).unref())]);
        await sweeper.stop();
        await labS3.s3rver.close();
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

function closeServer(server: Server): Promise<void> {
  return new Promise((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
}

let invocation = 0;
/**
 * A Lambda context whose remaining time counts down from the ingest function's
 * timeout, as Lambda's does: ingestion sends a continuation when it runs short.
 */
function localContext(timeoutMs = INGEST_LIMITS.timeoutSeconds * 1000): Context {
  const id = `local-${++invocation}`;
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'benchdrop-local',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:benchdrop-local',
    memoryLimitInMB: '1024',
    awsRequestId: id,
    logGroupName: '/local/benchdrop',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

