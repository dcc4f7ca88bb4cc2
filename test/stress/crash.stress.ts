/**
 * Stress section "crash" (issue 13, nothing stuck): the real lab as `npm start`
 * runs it (a child process, its data in a temporary folder, free ports), killed
 * with SIGKILL at a random moment 20 times while it takes a mix of uploads, and
 * started again on the same folder each time. The mix, spread over the cycles:
 * the demo logs under keys of their own (besides the ones the lab uploads
 * itself), a 30 MB generated Solaris iostat log (bench/generate.ts), garbage,
 * one key overwritten again and again, one key uploaded and deleted in turn.
 * Then a last start, left to finish, and a Scan of its table:
 *
 * - no upload record is still `processing`: each is `ready`, `failed`,
 *   `replaced` or `deleted`, and only a key's current version is `ready` (an
 *   overwritten one is `replaced`, one deleted before it was read `deleted`);
 * - every PUT the lab acknowledged has its upload record (none was lost);
 * - no orphaned items: every RUN# partition belongs to a run of a key's current
 *   version that is `ready`, and each such run is whole (its META item is there);
 * - a key whose every operation was acknowledged ends as its last one left it.
 *
 * The random moments come from a seed, printed in the summary; set
 * BENCHDROP_CRASH_SEED to replay a run.
 */
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeIostatLog } from '../../bench/generate.ts';
import { LAB_CREDENTIALS } from '../../shared/config.ts';
import { demoUploads } from '../../infra/local/lab.ts';
import { createDocumentClient, createS3Client } from '../../shared/aws.ts';
import { runIdsOf } from '../../shared/store/keys.ts';
import { clientEnv, LabProcess, REPO_ROOT } from '../../harness/processes.ts';
import { recordStressSummary } from '../support/stress-summary.ts';

const CYCLES = 20;
/** How long after its endpoints are up a cycle's lab is killed: a random moment in this range. */
const KILL_WITHIN_MS = 5_000;
const BIG_BYTES = 30_000_000;
const BIG_DEVICES = 32;
const OVERWRITTEN = 'crash/overwritten.txt';
const DELETED = 'crash/deleted.txt';
const SEED = Number(process.env['BENCHDROP_CRASH_SEED'] ?? Math.floor(Math.random() * 2 ** 31));

/** One request the test sent, and whether the lab answered it. */
interface Operation {
  cycle: number;
  kind: 'put' | 'delete';
  key: string;
  what: string;
  /** Without quotes, when the PUT was acknowledged. */
  eTag?: string;
  acknowledged: boolean;
}

interface Item {
  pk: string;
  sk: string;
  [attribute: string]: unknown;
}

let scratch: string;
let dataDir: string;
let lab: LabProcess | undefined;
const operations: Operation[] = [];
const kills: { cycle: number; afterMs: number; journaled: number }[] = [];
let resumed = 0;
let settleMs = 0;
let items: Item[] = [];

/** mulberry32: a small seeded generator, so that a failing run can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** What each cycle uploads (or deletes), every request at once. */
function cycleOperations(
  cycle: number,
  files: Files,
): { kind: 'put' | 'delete'; key: string; what: string; body?: Buffer }[] {
  const demo = files.demo[cycle % files.demo.length]!;
  const planned: { kind: 'put' | 'delete'; key: string; what: string; body?: Buffer }[] = [
    { kind: 'put', key: `crash/demo/${cycle}-${demo.name}`, what: 'demo log', body: demo.body },
    { kind: 'put', key: OVERWRITTEN, what: 'overwrite', body: files.demo[cycle % 2]!.body },
    cycle % 2 === 0
      ? { kind: 'put', key: DELETED, what: 'put, to be deleted', body: files.demo[2]!.body }
      : { kind: 'delete', key: DELETED, what: 'delete' },
  ];
  if (cycle % 5 === 0)
    planned.push({ kind: 'put', key: `crash/big-${cycle}.iostat.txt`, what: 'big log', body: files.big });
  if (cycle % 4 === 1) planned.push({ kind: 'put', key: `crash/bad-${cycle}.bin`, what: 'bad file', body: files.bad });
  return planned;
}

interface Files {
  demo: { name: string; body: Buffer }[];
  big: Buffer;
  bad: Buffer;
}

function prepareFiles(): Files {
  const demo = demoUploads().map((u) => ({ name: u.file, body: readFileSync(join(REPO_ROOT, 'demo', u.file)) }));
  const bigPath = join(scratch, 'big.iostat.txt');
  writeIostatLog('solaris', bigPath, BIG_BYTES, { devices: BIG_DEVICES });
  // Binary garbage: not gzip's magic nor a byte-order mark.
  const bad = Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 7919 + 13) % 251));
  bad[0] = 0x42;
  return { demo, big: readFileSync(bigPath), bad };
}

/** One attempt per request: whether the lab answered it is the point, a retry would hide it. */
function s3Of(endpoint: string): S3Client {
  return createS3Client({ region: 'us-east-1', s3Endpoint: endpoint, credentials: LAB_CREDENTIALS, maxAttempts: 1 });
}

async function send(s3: S3Client, cycle: number, planned: ReturnType<typeof cycleOperations>[number]): Promise<void> {
  const operation: Operation = { cycle, kind: planned.kind, key: planned.key, what: planned.what, acknowledged: false };
  operations.push(operation);
  try {
    if (planned.kind === 'put') {
      const put = await s3.send(
        new PutObjectCommand({ Bucket: 'benchdrop-drop', Key: planned.key, Body: planned.body }),
      );
      operation.eTag = put.ETag?.replace(/"/g, '');
    } else {
      await s3.send(new DeleteObjectCommand({ Bucket: 'benchdrop-drop', Key: planned.key }));
    }
    operation.acknowledged = true;
  } catch {
    // Cut off by the kill: the lab never answered.
  }
}

const labEnv = () => clientEnv(scratch);

/** One cycle: start on the folder, send the cycle's requests, kill at the chosen moment, wait for the requests to end. */
async function crashCycle(cycle: number, files: Files, killAfterMs: number): Promise<void> {
  lab = await LabProcess.start({ dataDir, fresh: cycle === 0, env: labEnv(), waitFor: 'endpoints', timeoutMs: 60_000 });
  const s3 = s3Of(lab.endpoints.s3Endpoint);
  try {
    const requests = Promise.all(cycleOperations(cycle, files).map((planned) => send(s3, cycle, planned)));
    await new Promise((r) => setTimeout(r, killAfterMs));
    await lab.kill();
    resumed += countResumed(lab);
    kills.push({ cycle, afterMs: killAfterMs, journaled: journalFiles().length });
    await requests;
  } finally {
    s3.destroy();
  }
}

function countResumed(of: LabProcess): number {
  return of
    .printedLines(/^resuming \d+ message/)
    .reduce((sum, line) => sum + Number(/^resuming (\d+)/.exec(line)![1]), 0);
}

function journalFiles(): string[] {
  const dir = join(dataDir, 'queue');
  return existsSync(dir) ? readdirSync(dir) : [];
}

async function scanTable(db: DynamoDBDocumentClient, tableName: string): Promise<Item[]> {
  const all: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    all.push(...((page.Items ?? []) as Item[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return all;
}

// ---------------------------------------------------------------- what the table says

interface Upload {
  key: string;
  version: string;
  status: string;
  runCount: number;
  startedRuns: number;
  message?: string;
}

/** Upload records: pk UPLOAD#<bucket>/<key>, sk VERSION#<version> (shared/store/keys.ts). */
function uploadsOf(all: readonly Item[]): Upload[] {
  return all
    .filter((i) => i.pk.startsWith('UPLOAD#') && i.sk.startsWith('VERSION#'))
    .map((i) => ({
      key: i.pk.slice('UPLOAD#benchdrop-drop/'.length),
      version: i.sk.slice('VERSION#'.length),
      status: String(i['status']),
      runCount: Number(i['runCount'] ?? 0),
      startedRuns: Number(i['startedRuns'] ?? 0),
      ...(typeof i['message'] === 'string' ? { message: i['message'] } : {}),
    }));
}

interface Current {
  key: string;
  version: string;
  runCount: number;
  deleted: boolean;
}

function currentsOf(all: readonly Item[]): Map<string, Current> {
  const currents = new Map<string, Current>();
  for (const i of all.filter((x) => x.pk.startsWith('OBJECT#') && x.sk === 'CURRENT')) {
    const key = i.pk.slice('OBJECT#benchdrop-drop/'.length);
    currents.set(key, {
      key,
      version: String(i['version']),
      runCount: Number(i['runCount'] ?? 0),
      deleted: i['deleted'] === true,
    });
  }
  return currents;
}

/** RUN# partitions, each with the sort keys it holds. */
function runPartitions(all: readonly Item[]): Map<string, string[]> {
  const runs = new Map<string, string[]>();
  for (const i of all.filter((x) => x.pk.startsWith('RUN#')))
    runs.set(i.pk.slice('RUN#'.length), [...(runs.get(i.pk.slice('RUN#'.length)) ?? []), i.sk]);
  return runs;
}

/** The runs that may exist: those of each key's current version, when that version is ready. */
function liveRuns(uploads: readonly Upload[], currents: Map<string, Current>): Map<string, string> {
  const live = new Map<string, string>();
  for (const current of currents.values()) {
    if (current.deleted) continue;
    const upload = uploads.find((u) => u.key === current.key && u.version === current.version);
    if (upload?.status !== 'ready') continue;
    for (const id of runIdsOf('benchdrop-drop', current.key, current.version, current.runCount))
      live.set(id, `${current.key} ${current.version}`);
  }
  return live;
}

/** Whose an orphaned run is: the upload version whose run ids include it, as far as its records tell. */
function ownerOf(runId: string, uploads: readonly Upload[]): string {
  for (const u of uploads) {
    const count = Math.max(u.runCount, u.startedRuns, 16);
    if (runIdsOf('benchdrop-drop', u.key, u.version, count).includes(runId))
      return `${u.key} version ${u.version} (${u.status}${u.message ? `: ${u.message.slice(0, 80)}` : ''})`;
  }
  return 'no upload record names it';
}

/** Acknowledged PUTs with no upload record: per key and content, fewer records than acknowledgements. */
function lostPuts(uploads: readonly Upload[]): string[] {
  const acknowledged = new Map<string, number>();
  for (const op of operations.filter((o) => o.kind === 'put' && o.acknowledged))
    acknowledged.set(`${op.key} ${op.eTag}`, (acknowledged.get(`${op.key} ${op.eTag}`) ?? 0) + 1);
  const lost: string[] = [];
  for (const [keyAndETag, count] of acknowledged) {
    const [key, eTag] = keyAndETag.split(' ') as [string, string];
    const records = uploads.filter((u) => u.key === key && u.version.startsWith(`${eTag}.`)).length;
    if (records < count) lost.push(`${key}: ${count} acknowledged PUT(s) of eTag ${eTag}, ${records} upload record(s)`);
  }
  return lost;
}

/**
 * Keys whose every operation was acknowledged must end as the last one left them:
 * deleted, or (when the last PUT's version is `ready`) that version current.
 */
function wrongEndings(uploads: readonly Upload[], currents: Map<string, Current>): string[] {
  const wrong: string[] = [];
  for (const key of new Set(operations.map((o) => o.key))) {
    const ops = operations.filter((o) => o.key === key);
    if (!ops.every((o) => o.acknowledged)) continue;
    const last = ops.at(-1)!;
    const current = currents.get(key);
    if (last.kind === 'delete') {
      if (current && !current.deleted) wrong.push(`${key}: deleted last, but current is ${current.version}`);
      continue;
    }
    // Versions are <eTag>.<sequencer>, sequencers of one length: the greatest is the newest PUT of that content.
    const newest = uploads
      .filter((u) => u.key === key && u.version.startsWith(`${last.eTag}.`))
      .map((u) => u.version)
      .sort()
      .at(-1);
    const upload = uploads.find((u) => u.key === key && u.version === newest);
    if (upload?.status === 'ready' && (current?.version !== upload.version || current.deleted))
      wrong.push(
        `${key}: last PUT is ${upload.version} (ready), current is ${current ? `${current.version}${current.deleted ? ' (deleted)' : ''}` : 'missing'}`,
      );
  }
  return wrong;
}

/** Failed uploads other than the bad files (which must fail): what made them fail. */
function unexpectedFailures(uploads: readonly Upload[]): string[] {
  return uploads
    .filter((u) => u.status === 'failed' && !u.key.startsWith('crash/bad-'))
    .map((u) => `${u.key}: ${(u.message ?? '').slice(0, 120)}`);
}

// ---------------------------------------------------------------- the run

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'benchdrop-crash-stress-'));
  dataDir = join(scratch, 'lab');
  const files = prepareFiles();
  const next = random(SEED);
  for (let cycle = 0; cycle < CYCLES; cycle++) await crashCycle(cycle, files, Math.floor(next() * KILL_WITHIN_MS));

  // The last start is left to finish: "ready" means it has ingested what the journal kept.
  const started = Date.now();
  lab = await LabProcess.start({ dataDir, fresh: false, env: labEnv(), timeoutMs: 300_000 });
  settleMs = Date.now() - started;
  resumed += countResumed(lab);
  const db = createDocumentClient({
    region: 'us-east-1',
    dynamodbEndpoint: lab.endpoints.dynamodbEndpoint,
    credentials: LAB_CREDENTIALS,
  });
  try {
    items = await scanTable(db, lab.endpoints.table);
  } finally {
    db.destroy();
  }
}, 900_000);

afterAll(async () => {
  try {
    await lab?.stop();
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}, 60_000);

describe('crash: SIGKILL at random moments', () => {
  it('leaves nothing processing, loses no acknowledged upload and orphans no item', (context) => {
    const uploads = uploadsOf(items);
    const currents = currentsOf(items);
    const partitions = runPartitions(items);
    const live = liveRuns(uploads, currents);

    // `replaced` and `deleted` are final too: a version of a key overwritten or deleted since (shared/upload-status.ts).
    const processing = uploads
      .filter((u) => !['ready', 'failed', 'replaced', 'deleted'].includes(u.status))
      .map((u) => `${u.key} ${u.version}: ${u.status}`);
    const staleReady = uploads
      .filter((u) => u.status === 'ready' && currents.get(u.key)?.version !== u.version)
      .map((u) => `${u.key} ${u.version}: ready, but not the key's current version`);
    const orphans = [...partitions]
      .filter(([id]) => !live.has(id))
      .map(
        ([id, sks]) =>
          `RUN#${id} (${sks.length} items: ${[...new Set(sks.map((sk) => sk.split('#')[0]))].join(', ')}) of ${ownerOf(id, uploads)}`,
      );
    const incomplete = [...live]
      .filter(([id]) => !partitions.get(id)?.includes('META'))
      .map(([id, owner]) => `RUN#${id} of ${owner}: no META item`);
    const lost = lostPuts(uploads);
    const wrong = wrongEndings(uploads, currents);
    const failedOthers = unexpectedFailures(uploads);
    const deadLetterFile = join(dataDir, 'dead-letters.jsonl');
    const deadLetters = existsSync(deadLetterFile)
      ? readFileSync(deadLetterFile, 'utf8').split('\n').filter(Boolean).length
      : 0;
    const acknowledged = operations.filter((o) => o.acknowledged).length;
    const journaled = kills.map((k) => k.journaled);

    recordStressSummary(context, {
      section: 'crash',
      cases: operations.length,
      failures: processing.length + staleReady.length + orphans.length + incomplete.length + wrong.length,
      lost: lost.length,
      detail:
        `${CYCLES} SIGKILLs (seed ${SEED}) 0-${KILL_WITHIN_MS / 1000} s after start, ${Math.min(...journaled)}-${Math.max(...journaled)} messages journaled at a kill; ` +
        `${acknowledged} of ${operations.length} requests acknowledged; ${uploads.length} upload records (${uploads.filter((u) => u.status === 'failed').length} failed), ` +
        `${resumed} messages resumed across starts, ${deadLetters} dead-lettered; ${partitions.size} runs in the table; last start ready after ${(settleMs / 1000).toFixed(1)} s` +
        (failedOthers.length > 0 ? `; failed besides the bad files: ${failedOthers.join('; ')}` : ''),
    });

    const report = { processing, staleReady, orphans, incomplete, lost, wrong };
    expect(report, JSON.stringify({ ...report, seed: SEED, kills }, null, 1)).toEqual({
      processing: [],
      staleReady: [],
      orphans: [],
      incomplete: [],
      lost: [],
      wrong: [],
    });
    expect(journalFiles()).toEqual([]);
    // The demo logs, the big logs and the overwritten key all made it in: the check above is not vacuous.
    expect(uploads.filter((u) => u.status === 'ready').length).toBeGreaterThan(CYCLES);
  });
});
