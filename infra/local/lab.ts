/**
 * The local lab: the whole pipeline in one process on this machine. s3rver and
 * dynalite (data under one folder) stand in for S3 and DynamoDB; s3rver's object
 * events become real-shaped S3 event records, journaled (crash-safe) and
 * delivered in SQS-shaped batches by LocalQueue (retries, a dead-letter list,
 * several batches at once) to the very same ingest handler; an HTTP server turns
 * requests into API Gateway v2 events for the very same API handler. s3rver
 * holds the drop bucket and the results bucket (samples objects; its events are
 * never delivered). The table comes from the definition the CDK stack uses. Everything binds
 * 127.0.0.1 unless asked otherwise.
 */
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import dynalite from 'dynalite';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { isIPv4, isIPv6, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { handler as apiHandler, setApiDeps } from '../../functions/api/handler.ts';
import { packageFile } from '../../shared/module-paths.ts';
import { renderFrozenReport, reportHtml } from '../../report/build.ts';
import { ROUTES } from '../../shared/api.ts';
import { createDocumentClient, createS3Client } from '../../shared/aws.ts';
import { DEFAULT_REGION, INGEST_LIMITS, LAB_CREDENTIALS, LAB_DEFAULTS, MB } from '../../shared/config.ts';
import { indexIostatRunsByLabel, settleUploadStates } from '../../shared/store/migrations.ts';
// Before dynalite serves a request: its LevelDB iterators must close (see the file).
import './dynalite-iterators.ts';
import { DEFAULT_ACCOUNT, s3Notification } from './events.ts';
import { startHttpServer, type ApiHandler } from './http.ts';
import { ingestEnvironments } from './ingest-environments.ts';
import { adoptPendingFile, Journal } from './journal.ts';
import { DEFAULT_HOST, DEFAULT_PORTS } from './options.ts';
import { LocalQueue, type DeadLetter } from './queue.ts';
import { prepareNotification, startLabS3 } from './s3.ts';
import { settleDeadLetter, startSweeper } from './settle.ts';
import { createLocalTable } from './table.ts';

export const LAB_BUCKET = 'benchdrop-drop';
/** Where ingest writes samples objects (shared/store/samples-schema.ts), as the stack's results bucket. */
export const LAB_RESULTS_BUCKET = 'benchdrop-results';
export const LAB_TABLE = 'benchdrop';
/** The region the lab's clients name (the emulators ignore it), as in the events it builds. */
const LAB_REGION = DEFAULT_REGION;
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
  /** The results bucket: runs' samples objects. */
  resultsBucket: string;
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

/**
 * The demo logs and the keys (and metadata) they are uploaded under: the iostat log under its
 * host's folder, each fio sweep (`<label>.fio-sweep-N.json`) under its device's.
 */
export function demoUploads(): { file: string; key: string; metadata: Record<string, string> }[] {
  return readdirSync(DEMO_DIR)
    .filter((f) => f.endsWith('.txt') || f.endsWith('.json'))
    .sort()
    .map((file) => {
      const fio = /^(.+?)\.(fio-.+\.json)$/.exec(file);
      if (fio) return { file, key: `${fio[1]}/${fio[2]}`, metadata: { tags: 'medium=ssd' } };
      const metadata: Record<string, string> = file.includes('iostat')
        ? { tags: 'interface=SAS;rpm=10000;medium=hdd' }
        : {};
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
    throw new Error(
      `refusing to bind ${host}: the lab has no authentication; pass --allow-non-loopback to expose it anyway`,
    );
  }
}

export async function startLab(options: LabOptions): Promise<Lab> {
  const host = options.host ?? DEFAULT_HOST;
  checkBindAddress(host, options.allowNonLoopback === true);
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const dataDir = prepareDataDir(options);
  const dynamo = await startDynalite(dataDir);

  // The queue, kept on disk; held until its handlers are set up (start() below).
  const journal = new Journal(join(dataDir, 'queue'), join(dataDir, 'dead-letters.jsonl'));
  const wiring: QueueWiring = {};
  const queue = labQueue(journal, wiring, log);

  // S3: s3rver on disk, the drop bucket configured; each event journaled before its request is answered.
  const labS3 = await startLabS3({
    host,
    port: options.s3Port ?? DEFAULT_PORTS.s3,
    directory: join(dataDir, 's3'),
    bucket: LAB_BUCKET,
    resultsBucket: LAB_RESULTS_BUCKET,
    onEvent: (record) => queue.send(s3Notification(record), { unprepared: true }),
  });
  const s3Endpoint = `http://${host}:${labS3.address.port}`;
  const clients = { region: LAB_REGION, s3Endpoint, dynamodbEndpoint: dynamo.endpoint, credentials: LAB_CREDENTIALS };
  const s3 = createS3Client(clients);
  const db = createDocumentClient(clients);
  wiring.s3 = s3;
  const settleWiring = { db, tableName: LAB_TABLE, s3, resultsBucket: LAB_RESULTS_BUCKET, log };
  wiring.settle = settleDeadLetter(settleWiring);
  await createLocalTable(LAB_TABLE, {
    region: LAB_REGION,
    endpoint: dynamo.endpoint,
    credentials: LAB_CREDENTIALS,
    keepExisting: true,
  });
  await upgradeTable(db, log);

  const limits = {
    maxUploadBytes: options.maxUploadBytes ?? LAB_DEFAULTS.maxUploadMB * MB,
    maxSeriesPerFile: options.maxSeriesPerFile ?? LAB_DEFAULTS.maxSeriesPerFile,
  };
  // A step that cannot finish in time sends its continuation through the same (journaled) queue.
  const requeue = async (body: string) => queue.sendBody(body);
  const ingestDeps = { s3, db, tableName: LAB_TABLE, resultsBucket: LAB_RESULTS_BUCKET, ...limits, requeue };
  wiring.environments = await ingestEnvironments(LAB_QUEUE.workers, ingestDeps);
  resumeQueue(queue, journal, dataDir, log);

  setApiDeps({
    s3,
    db,
    tableName: LAB_TABLE,
    bucket: LAB_BUCKET,
    resultsBucket: LAB_RESULTS_BUCKET,
    maxUploadBytes: limits.maxUploadBytes,
    renderReport: renderFrozenReport,
  });
  const http = await startApi(host, options.apiPort ?? DEFAULT_PORTS.api);
  const apiUrl = `http://${host}:${(http.address() as AddressInfo).port}`;
  const endpoints = labEndpoints({ s3Endpoint, dynamodbEndpoint: dynamo.endpoint, apiUrl, dataDir });
  writeFileSync(join(dataDir, 'lab.json'), `${JSON.stringify(endpoints, null, 2)}\n`);
  if (options.samples !== false) await uploadDemo(s3);

  // Once what the journal kept is ingested, whatever is still `processing` has no delivery left.
  const sweeper = startSweeper(settleWiring, queue.idle());
  const stop = async () => {
    // No new API calls; the batches in flight get a while to finish (S3 stays up for
    // them to read); everything not done stays in the journal for the next start.
    await closeServer(http);
    await Promise.race([queue.stop(), new Promise((r) => setTimeout(r, DRAIN_MS).unref())]);
    await sweeper.stop();
    await labS3.s3rver.close();
    await new Promise<void>((r) => dynamo.server.close(() => r()));
  };
  let stopping: Promise<void> | undefined;
  return { endpoints, queue, idle: () => queue.idle(), stop: () => (stopping ??= stop()) };
}

/** The HTTP server in front of the API handler, with the report page at `/`. */
function startApi(host: string, port: number): Promise<Server> {
  return startHttpServer({
    host,
    port,
    handler: apiHandler as ApiHandler,
    context: () => localContext(),
    routeKeys: Object.values(ROUTES),
    serve: serveReport,
  });
}

/** What lab.json says: where everything is, and the process to stop. */
function labEndpoints(
  where: Pick<LabEndpoints, 's3Endpoint' | 'dynamodbEndpoint' | 'apiUrl' | 'dataDir'>,
): LabEndpoints {
  const { s3Endpoint, dynamodbEndpoint, apiUrl, dataDir } = where;
  const reportUrl = `${apiUrl}/`;
  return {
    s3Endpoint,
    bucket: LAB_BUCKET,
    resultsBucket: LAB_RESULTS_BUCKET,
    table: LAB_TABLE,
    dynamodbEndpoint,
    apiUrl,
    reportUrl,
    region: LAB_REGION,
    dataDir,
    pid: process.pid,
  };
}

/** The data folder, emptied first with `fresh`, with the emulators' folders in it. */
function prepareDataDir(options: LabOptions): string {
  const dataDir = resolve(options.dataDir);
  if (options.fresh) rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(join(dataDir, 's3'), { recursive: true });
  mkdirSync(join(dataDir, 'dynamodb'), { recursive: true });
  return dataDir;
}

/**
 * DynamoDB: dynalite on disk (LevelDB). Only the lab's own handlers talk to it: any free port, on
 * loopback whatever --host says.
 */
async function startDynalite(dataDir: string): Promise<{ server: ReturnType<typeof dynalite>; endpoint: string }> {
  const server = dynalite({ path: join(dataDir, 'dynamodb'), createTableMs: 0 });
  await new Promise<void>((ok, fail) =>
    server.listen(0, DEFAULT_HOST, (error?: Error) => (error ? fail(error) : ok())),
  );
  return { server, endpoint: `http://${DEFAULT_HOST}:${(server.address() as AddressInfo).port}` };
}

/** What the queue's callbacks need and the lab sets up after the queue exists (it is held until then). */
interface QueueWiring {
  environments?: Awaited<ReturnType<typeof ingestEnvironments>>;
  s3?: ReturnType<typeof createS3Client>;
  settle?: (letter: DeadLetter) => Promise<void>;
}

/** Set up before start(): a callback finding its wiring unset is a bug in startLab. */
function wired<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the lab's queue ran before its ${what} was set up`);
  return value;
}

function labQueue(journal: Journal, wiring: QueueWiring, log: (line: string) => void): LocalQueue {
  return new LocalQueue({
    ...LAB_QUEUE,
    journal,
    held: true,
    handler: (event, context, worker) => wired(wiring.environments, 'ingest handler')[worker]!.handler(event, context),
    context: () => localContext(),
    prepare: (body) => prepareNotification(wired(wiring.s3, 'S3 client'), body),
    onDeadLetter: async (letter) => {
      log(
        `dead letter: message ${letter.messageId} failed ${letter.receives} times (kept in ${journal.deadLetterFile})`,
      );
      await wired(wiring.settle, 'dead-letter handling')(letter);
    },
    onError: (error) => log(`ingest error: ${(error as Error).message}`),
  });
}

/** Upgrades what an earlier version of the lab stored to what this one reads. */
async function upgradeTable(db: ReturnType<typeof createDocumentClient>, log: (line: string) => void): Promise<void> {
  const upgraded = await indexIostatRunsByLabel({ db, tableName: LAB_TABLE });
  if (upgraded > 0) log(`indexed ${upgraded} iostat run(s) stored by an earlier version under their upload's label`);
  const settled = await settleUploadStates({ db, tableName: LAB_TABLE }, new Date().toISOString());
  if (settled > 0)
    log(
      `checked the upload records of ${settled} key(s) stored by an earlier version: ` +
        'replaced and deleted versions now say so',
    );
}

/** Starts delivering: what the journal kept first, then what an earlier version left in its pending file. */
function resumeQueue(queue: LocalQueue, journal: Journal, dataDir: string, log: (line: string) => void): void {
  const resumed = queue.start();
  if (resumed.resumed > 0)
    log(
      `resuming ${resumed.resumed} message(s) left from the last run` +
        `${resumed.exhausted > 0 ? ` (${resumed.exhausted} of them received too often: dead-lettered)` : ''}`,
    );
  if (resumed.unreadable.length > 0)
    log(`${resumed.unreadable.length} unreadable queue file(s) in ${journal.dir}: ${resumed.unreadable.join(', ')}`);
  // Left by an earlier version, which kept its queue there on a clean stop.
  const adopted = adoptPendingFile(join(dataDir, 'pending-messages.jsonl'), (body) => queue.sendBody(body));
  if (adopted > 0) log(`resuming ${adopted} message(s) an earlier version kept in pending-messages.jsonl`);
}

/** The demo logs, each uploaded unless already there. */
async function uploadDemo(s3: ReturnType<typeof createS3Client>): Promise<void> {
  for (const upload of demoUploads()) {
    if (await exists(s3, upload.key)) continue;
    await s3.send(
      new PutObjectCommand({
        Bucket: LAB_BUCKET,
        Key: upload.key,
        Body: readFileSync(join(DEMO_DIR, upload.file)),
        Metadata: upload.metadata,
      }),
    );
  }
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
    invokedFunctionArn: `arn:aws:lambda:${LAB_REGION}:${DEFAULT_ACCOUNT}:function:benchdrop-local`,
    memoryLimitInMB: String(INGEST_LIMITS.memoryMB),
    awsRequestId: id,
    logGroupName: '/local/benchdrop',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}
