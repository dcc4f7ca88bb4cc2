/**
 * `npm run bench:api`: the comparison API under load (issue 6, item 3), over HTTP
 * against emulators, at 1,000 and at 10,000 stored runs.
 *
 *   1. start dynalite in a child process (DynamoDB is a remote service: its work
 *      must not run on the API's thread) and s3rver, with harness/emulators.ts,
 *      and the API handler (functions/api/handler.ts, setApiDeps with the emulator
 *      clients) served on 127.0.0.1:0 by harness/api-server.ts (infra/local/http.ts's
 *      startHttpServer, as the local lab serves it);
 *   2. seed the table directly (no ingest): the three IRIX Indy diskperf fixtures
 *      are parsed once, and run META items are built from them with
 *      diskperfRunItem (and their TAG items with runTagItems), values perturbed by
 *      a seeded PRNG (+-5 %), spread over 250 device labels (the issue asks for
 *      over 200): `bench-a` and `bench-b` with 20 runs each (tags
 *      interface=SAS and interface=SCSI), the rest round-robin over dev-000..dev-247 (interface SATA, NVMe or FC); one
 *      DEVICES item per label; and two iostat upload labels, `bench-io-a` and
 *      `bench-io-b`, of 20 runs each, each run one sysstat 12 `iostat -x` session
 *      of three disks (sda, sdb, sdc; harness/ground-truth.ts iostatSession,
 *      A 1.05 times better, 3 % noise between runs) parsed as ingest parses it
 *      (summaries only) and stored as ingest stores it: the run META
 *      (iostatRunItem, holding its series), its TAG items and one
 *      DEVICES item for the upload label and one per series label (`bench-io-a/sda` ...), no sample chunks
 *      (comparisons do not read them); the iostat runs count toward the totals;
 *      written with BatchWriter;
 *   3. per table size (1,000 runs, then 9,000 more for 10,000), per scenario:
 *      one request with the document client's reads metered (Query, GetItem and
 *      BatchGet get ReturnConsumedCapacity 'TOTAL'; dynalite answers with
 *      ConsumedCapacity, the CapacityUnits are summed), checked (200, the expected
 *      number of runs per side); then autocannon 9 as a child process (its own
 *      event loop, not the server's) on loopback, concurrency 16, for a fixed
 *      duration, with the CPU time of the API process and of dynalite over it;
 *   4. print p50/p99 latency, requests/s, CPU per request, non-2xx, errors and
 *      timeouts per scenario and size, the read units per request at both sizes,
 *      the targets and whether they are met.
 *
 * Scenarios: GET /compare?a=bench-a&b=bench-b (device selectors) and
 * ?a=tag.interface=SAS&b=tag.interface=SCSI (tag selectors, through the tag
 * index), each with the API's answer cache off (every answer computed: the
 * uncached figure) and on (the API as deployed: for two device or upload labels
 * the answer kept under their change stamps, only the stamps read; for tag
 * selectors the runs read and the statistics reused when the data is the same); ?a=bench-io-a&b=bench-io-b
 * (iostat: 3 disks x 20 runs a side, paired disk with disk), also off and on;
 * ?a=run=ID&b=run=ID; GET /devices?limit=1000 (one page holds every label here;
 * bench/listings.ts pages through 250,000).
 *
 * Targets: device compare p99 (answer cache on) under 100 ms; read units that do
 * not grow with the table; the iostat compare with every answer computed at most
 * 15 ms of API CPU per request at 10,000 runs. For each compare the p99 with
 * every answer computed is printed beside the p99 with the answers kept.
 *
 * Exit 0 whatever the targets say; 1 when a check request fails or the load
 * gets a non-2xx answer or a connection error (timeouts are reported only).
 *
 *   npm run bench:api -- [--duration 10]
 */
import '../shared/node-support-notice.ts';
import '../harness/quiet.ts';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { handler as apiHandler, setApiDeps, type ApiDeps } from '../functions/api/handler.ts';
import type { ApiHandler } from '../infra/local/http.ts';
import { ANSWER_HEADER, MAX_PAGE } from '../shared/api.ts';
import type { DiskperfRun, IostatRun } from '../shared/model.ts';
import { parseStream, parseText } from '../shared/parsers/index.ts';
import { prng } from '../shared/comparison/statistics.ts';
import { BatchWriter } from '../shared/store/batch.ts';
import { runId } from '../shared/store/keys.ts';
import { deviceItem, runTagItems } from '../shared/store/items.ts';
import { diskperfRunItem, iostatRunItem } from '../shared/store/run-items.ts';
import { startEmulators, type Emulators } from '../harness/emulators.ts';
import { iostatSession, THREE_DISKS } from '../harness/ground-truth.ts';
import { serveApi, type ServedApi } from '../harness/api-server.ts';
import { numberArg } from './args.ts';
import { loadAverage, percentile, table } from './stats.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const AUTOCANNON = join(ROOT, 'node_modules/autocannon/autocannon.js');
const FIXTURES = ['irix-6.5-indy-scsi2sd-redux', 'irix-6.5-indy-300G-10K', 'irix-6.5-indy-scsi2sd-10M-sync'].map(
  (name) => join(ROOT, 'test/fixtures/irix', `${name}.diskperf.txt`),
);

const SIZES = [1_000, 10_000];
const LABELS = 250;
const TARGETS = { a: 'bench-a', b: 'bench-b' } as const;
const TARGET_RUNS = 20;
const OTHER_LABELS = Array.from({ length: LABELS - 2 }, (_, i) => `dev-${String(i).padStart(3, '0')}`);
const OTHER_INTERFACES = ['SATA', 'NVMe', 'FC'];
/** The iostat upload labels: 20 runs each, one session of three disks per run (series labels `bench-io-a/sda` ...). */
const IOSTAT_TARGETS = { a: 'bench-io-a', b: 'bench-io-b' } as const;
const IOSTAT_DISKS = THREE_DISKS;
/**
 * How many times better A is than B on every disk (throughput and IOPS x k, latencies / k), and
 * each run's log noise.
 */
const IOSTAT_K = 1.05;
const IOSTAT_NOISE = 0.03;
/** DEVICES items: every diskperf label, and each iostat upload's label and its series labels. */
const DEVICE_LABELS = LABELS + 2 * (1 + IOSTAT_DISKS.length);
/** API CPU per request for the iostat compare with every answer computed, at the larger table. */
const IOSTAT_CPU_TARGET_MS = 15;
const CONCURRENCY = 16;
const TIMEOUT_S = 30;
const P99_TARGET_MS = 100;
const BUCKET = 'benchdrop-bench-api';
const SEED = 0x6a09e667;
/**
 * A scenario whose lone request takes longer than this is loaded with one request per connection
 * (-a 16), not for a duration.
 */
const AMOUNT_MODE_MS = 250;
/** ... and longer than this, not loaded at all: 16 at once would outlast the bench's time budget. */
const NO_LOAD_MS = 3000;
const DRAIN_LIMIT_MS = 120_000;
/** Untimed requests per scenario after seeding. */
const WARM_UP = 5;

const DURATION_S = numberArg('--duration', 10);

// ---------------------------------------------------------------- seeding

async function templates(): Promise<DiskperfRun[]> {
  const out: DiskperfRun[] = [];
  for (const path of FIXTURES) {
    const parsed = await parseText(readFileSync(path, 'utf8'), path);
    const run = parsed.runs[0];
    if (!run || run.format !== 'diskperf') throw new Error(`${path}: expected a diskperf run`);
    out.push(run);
  }
  return out;
}

/**
 * Each iostat label's runs: one `iostat -x 10 4` session of three disks each, as
 * sysstat 12 prints it, parsed as ingest parses an upload (summaries only, no
 * samples kept: a run's time is then when it was ingested).
 */
async function iostatTemplates(random: () => number): Promise<Map<string, IostatRun[]>> {
  const out = new Map<string, IostatRun[]>();
  for (const [side, label] of Object.entries(IOSTAT_TARGETS)) {
    const runs: IostatRun[] = [];
    for (let i = 0; i < TARGET_RUNS; i++) {
      const source = `bench/${label}/${i}.iostat.txt`;
      const text = iostatSession({
        disks: IOSTAT_DISKS,
        k: side === 'a' ? IOSTAT_K : 1,
        noise: IOSTAT_NOISE,
        host: `bench-${side}`,
        random,
      });
      const parsed: IostatRun[] = [];
      await parseStream([Buffer.from(text, 'utf8')], {
        source,
        keepSamples: false,
        onRun: (run) => parsed.push(run as IostatRun),
      });
      const run = parsed[0];
      if (parsed.length !== 1 || !run || run.format !== 'iostat' || run.series.length !== IOSTAT_DISKS.length)
        throw new Error(`${source}: expected one iostat run of ${IOSTAT_DISKS.length} series`);
      runs.push(run);
    }
    out.set(label, runs);
  }
  return out;
}

interface Seeder {
  /** Runs written so far (the next run's number). */
  count: number;
  ids: Map<string, string[]>;
}

const T0 = Date.UTC(2024, 0, 1);

/** Run number n on `label`: a fixture's rows, every value times (1 +- 5 %), its own time and id. */
function runItem(n: number, label: string, template: DiskperfRun, random: () => number) {
  const key = `bench/${label}/${String(n).padStart(5, '0')}.diskperf.txt`;
  const version = 'v1';
  const id = runId(BUCKET, key, version, 0);
  const bias = label === TARGETS.a ? 1.05 : 1;
  const run: DiskperfRun = {
    ...template,
    meta: { ...template.meta, startedAt: new Date(T0 + n * 60_000).toISOString().slice(0, 19) },
    rows: template.rows.map((row) => ({
      ...row,
      values: Object.fromEntries(
        Object.entries(row.values).map(([metric, v]) => [
          metric,
          Math.round((v as number) * bias * (0.95 + 0.1 * random()) * 1000) / 1000,
        ]),
      ),
    })),
  };
  return diskperfRunItem(run, {
    runId: id,
    label,
    tags: tagsOf(label),
    source: { bucket: BUCKET, key, version },
    ingestedAt: new Date(T0 + n * 60_000 + 5_000).toISOString(),
  });
}

/**
 * The targets' interfaces are theirs alone; every other label carries one of three others
 * (unrelated entries in the tag index).
 */
function tagsOf(label: string): Record<string, string> {
  if (label === TARGETS.a) return { interface: 'SAS' };
  if (label === TARGETS.b) return { interface: 'SCSI' };
  return { interface: OTHER_INTERFACES[Number(label.slice(4)) % OTHER_INTERFACES.length]! };
}

/** The iostat runs' upload tags (the tag index holds them; no scenario selects by them). */
const iostatTagsOf = (label: string): Record<string, string> => ({ rig: label === IOSTAT_TARGETS.a ? 'io-a' : 'io-b' });

/** Writes seeded runs through one BatchWriter, remembering each label's run ids. */
interface SeedBatch {
  writer: BatchWriter;
  seeder: Seeder;
  fixtures: DiskperfRun[];
  random: () => number;
}

function remember(seeder: Seeder, label: string, id: string): void {
  const list = seeder.ids.get(label) ?? [];
  list.push(id);
  seeder.ids.set(label, list);
}

function addRun(batch: SeedBatch, label: string): void {
  const n = batch.seeder.count++;
  const item = runItem(n, label, batch.fixtures[n % batch.fixtures.length]!, batch.random);
  remember(batch.seeder, label, item.runId);
  // As ingestion writes a run: its TAG items, then its META.
  for (const tag of runTagItems(item)) batch.writer.put(tag);
  batch.writer.put(item);
}

/**
 * An iostat upload of one run, as ingest writes it: the SERIES index items and TAG items, then the
 * META (no chunks: comparisons do not read them).
 */
function addIostat(batch: SeedBatch, label: string, run: IostatRun): void {
  const n = batch.seeder.count++;
  const key = `bench/${label}/${String(n).padStart(5, '0')}.iostat.txt`;
  const version = 'v1';
  const ctx = {
    runId: runId(BUCKET, key, version, run.index),
    label,
    tags: iostatTagsOf(label),
    source: { bucket: BUCKET, key, version },
    ingestedAt: new Date(T0 + n * 60_000 + 5_000).toISOString(),
  };
  const items = iostatRunItem(run, ctx);
  remember(batch.seeder, label, ctx.runId);
  for (const series of items.series) batch.writer.put(series);
  for (const tag of runTagItems(items.run)) batch.writer.put(tag);
  batch.writer.put(items.run);
}

/** The target labels' runs (diskperf and iostat) and every DEVICES item. */
function addTargets(batch: SeedBatch, iostat: Map<string, IostatRun[]>, total: number): void {
  for (let i = 0; i < TARGET_RUNS; i++) {
    addRun(batch, TARGETS.a);
    addRun(batch, TARGETS.b);
    addIostat(batch, IOSTAT_TARGETS.a, iostat.get(IOSTAT_TARGETS.a)![i]!);
    addIostat(batch, IOSTAT_TARGETS.b, iostat.get(IOSTAT_TARGETS.b)![i]!);
  }
  const lastSeen = new Date(T0 + total * 60_000).toISOString();
  for (const label of [TARGETS.a, TARGETS.b, ...OTHER_LABELS])
    batch.writer.put(deviceItem(label, 'diskperf', lastSeen, 'v1'));
  // As ingest lists an iostat upload's labels, after the METAs: its own and one per series (`bench-io-a/sda`).
  for (const label of Object.values(IOSTAT_TARGETS))
    for (const name of [label, ...IOSTAT_DISKS.map((disk) => `${label}/${disk.name}`)])
      batch.writer.put(deviceItem(name, 'iostat', lastSeen, 'v1'));
}

/**
 * Write runs until the table holds `total`; the first call also writes the target labels' runs
 * (diskperf and iostat) and every DEVICES item.
 */
async function seed(
  env: Emulators,
  seeder: Seeder,
  total: number,
  fixtures: DiskperfRun[],
  iostat: Map<string, IostatRun[]>,
  random: () => number,
): Promise<number> {
  const started = performance.now();
  const batch: SeedBatch = { writer: new BatchWriter(env.db, env.tableName), seeder, fixtures, random };
  if (seeder.count === 0) addTargets(batch, iostat, total);
  while (seeder.count < total) {
    addRun(batch, OTHER_LABELS[seeder.count % OTHER_LABELS.length]!);
    if (batch.writer.pending >= 1000) await batch.writer.flush();
  }
  await batch.writer.flush();
  return (performance.now() - started) / 1000;
}

// ---------------------------------------------------------------- metered reads

interface ReadMeter {
  on: boolean;
  units: number;
  requests: number;
  unmetered: number;
}

function meterReads(env: Emulators): ReadMeter {
  const meter: ReadMeter = { on: false, units: 0, requests: 0, unmetered: 0 };
  const original = env.db.send.bind(env.db) as (...a: unknown[]) => Promise<unknown>;
  const send = async (command: unknown, ...rest: unknown[]): Promise<unknown> => {
    // Only while metering: the API does not ask for capacity, and under load the emulator should
    // not do the sums either.
    const isRead =
      meter.on &&
      (command instanceof QueryCommand || command instanceof GetCommand || command instanceof BatchGetCommand);
    if (isRead) (command as { input: Record<string, unknown> }).input['ReturnConsumedCapacity'] = 'TOTAL';
    const output = await original(command, ...rest);
    if (isRead) {
      meter.requests++;
      const c = (output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] })
        .ConsumedCapacity;
      if (c === undefined) meter.unmetered++;
      else meter.units += (Array.isArray(c) ? c : [c]).reduce((sum, x) => sum + (x.CapacityUnits ?? 0), 0);
    }
    return output;
  };
  (env.db as unknown as { send: unknown }).send = send;
  return meter;
}

// ---------------------------------------------------------------- scenarios

interface Scenario {
  name: string;
  path: string;
  /** The API's answer cache (ApiDeps.cacheAnswers) during this scenario. */
  cacheAnswers: boolean;
  /** What a correct answer holds; a message when it does not. */
  check: (body: unknown) => string | undefined;
}

interface CompareBody {
  a?: { runs?: number };
  b?: { runs?: number };
}

const compareCheck = (runs: number) => (body: unknown) => {
  const c = body as CompareBody;
  return c.a?.runs === runs && c.b?.runs === runs
    ? undefined
    : `expected ${runs} run(s) per side, got a ${String(c.a?.runs)}, b ${String(c.b?.runs)}`;
};

interface IostatCompareBody {
  a?: { runs?: number; observations?: number };
  b?: { runs?: number; observations?: number };
  ratio?: number | null;
  ci?: { over?: string } | null;
  ciNote?: string;
}

/** The iostat compare: 3 series x 20 runs = 60 observations a side, an interval over runs, and a ratio. */
const iostatCheck = (body: unknown): string | undefined => {
  const c = body as IostatCompareBody;
  const observations = TARGET_RUNS * IOSTAT_DISKS.length;
  const problems: string[] = [];
  for (const side of ['a', 'b'] as const) {
    const s = c[side];
    if (s?.runs !== TARGET_RUNS || s.observations !== observations)
      problems.push(
        `${side}: expected ${TARGET_RUNS} runs and ${observations} observations, ` +
          `got ${String(s?.runs)} and ${String(s?.observations)}`,
      );
  }
  if (c.ci?.over !== 'runs') {
    const got =
      c.ci === null || c.ci === undefined ? `none${c.ciNote ? ` (${c.ciNote})` : ''}` : `over ${String(c.ci.over)}`;
    problems.push(`expected an interval over runs, got ${got}`);
  }
  if (typeof c.ratio !== 'number' || !Number.isFinite(c.ratio))
    problems.push(`expected a ratio, got ${String(c.ratio)}`);
  return problems.length > 0 ? problems.join('; ') : undefined;
};

const DEVICE = 'device: bench-a vs bench-b';
const TAG = 'tag: interface=SAS vs SCSI';
const IOSTAT = 'iostat: bench-io-a vs bench-io-b';
const RUN = 'run: run=ID vs run=ID';
const UNCACHED = ' (cache off)';
/** The comparisons loaded both with every answer computed and with the answers kept. */
const COMPARES = [DEVICE, TAG, IOSTAT];

function scenarios(seeder: Seeder): Scenario[] {
  const q = (a: string, b: string) => `/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`;
  const device = q(TARGETS.a, TARGETS.b);
  const tag = q('tag.interface=SAS', 'tag.interface=SCSI');
  // The upload labels, as a user types them: each stands for its series `bench-io-a/sda` ...
  const iostat = q(IOSTAT_TARGETS.a, IOSTAT_TARGETS.b);
  return [
    { name: DEVICE + UNCACHED, path: device, cacheAnswers: false, check: compareCheck(TARGET_RUNS) },
    { name: DEVICE, path: device, cacheAnswers: true, check: compareCheck(TARGET_RUNS) },
    { name: TAG + UNCACHED, path: tag, cacheAnswers: false, check: compareCheck(TARGET_RUNS) },
    { name: TAG, path: tag, cacheAnswers: true, check: compareCheck(TARGET_RUNS) },
    { name: IOSTAT + UNCACHED, path: iostat, cacheAnswers: false, check: iostatCheck },
    { name: IOSTAT, path: iostat, cacheAnswers: true, check: iostatCheck },
    {
      name: RUN,
      path: q(`run=${seeder.ids.get(TARGETS.a)![0]}`, `run=${seeder.ids.get(TARGETS.b)![0]}`),
      cacheAnswers: true,
      check: compareCheck(1),
    },
    {
      name: 'GET /devices',
      path: `/devices?limit=${MAX_PAGE}`,
      cacheAnswers: true,
      check: (body) => {
        const page = body as { devices?: unknown[]; next?: string };
        const n = page.devices?.length;
        return n === DEVICE_LABELS && page.next === undefined
          ? undefined
          : `expected ${DEVICE_LABELS} devices on one page, ` +
              `got ${String(n)}${page.next !== undefined ? ' and a next' : ''}`;
      },
    },
  ];
}

interface Probe {
  status: number;
  ms: number;
  units: number;
  reads: number;
  unmetered: number;
  problem?: string;
}

/** One request, alone, with its reads metered. */
async function probe(base: string, scenario: Scenario, meter: ReadMeter): Promise<Probe> {
  Object.assign(meter, { on: true, units: 0, requests: 0, unmetered: 0 });
  const started = performance.now();
  let status = 0;
  let problem: string | undefined;
  try {
    const response = await fetch(base + scenario.path);
    status = response.status;
    const text = await response.text();
    problem = status === 200 ? scenario.check(JSON.parse(text)) : `HTTP ${status}: ${text.slice(0, 300)}`;
  } catch (error) {
    problem = `request failed: ${(error as Error).message}`;
  } finally {
    meter.on = false;
  }
  return {
    status,
    ms: performance.now() - started,
    units: meter.units,
    reads: meter.requests,
    unmetered: meter.unmetered,
    ...(problem ? { problem } : {}),
  };
}

interface Load {
  p50: number;
  p99: number;
  /** CPU time per request (user + system) of the API process and of dynalite, over the load. */
  apiCpuMs: number;
  dynamoCpuMs: number;
  /**
   * p50 and p99 of the time in the handler (the rest of a request's latency is HTTP, queueing and
   * the load generator).
   */
  handlerP50: number;
  handlerP99: number;
  rps: number;
  total: number;
  /** Compare answers the API computed and reused over the load (its header says which). */
  computed: number;
  cached: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

const children = new Set<ReturnType<typeof spawn>>();

/** autocannon in its own process, so the load generator does not share the server's event loop. */
function load(url: string, mode: string[]): Promise<Load> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      [AUTOCANNON, '-c', String(CONCURRENCY), ...mode, '-t', String(TIMEOUT_S), '-j', '-n', url],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      children.delete(child);
      if (code !== 0) return reject(new Error(`autocannon exited ${code}: ${err.slice(0, 500)}`));
      try {
        const r = JSON.parse(out.trim().split('\n').pop()!) as {
          latency: { p50: number; p99: number };
          requests: { average: number; total: number };
          non2xx: number;
          errors: number;
          timeouts: number;
        };
        resolvePromise({
          p50: r.latency.p50,
          p99: r.latency.p99,
          apiCpuMs: 0,
          dynamoCpuMs: 0,
          handlerP50: 0,
          handlerP99: 0,
          rps: r.requests.average,
          total: r.requests.total,
          computed: 0,
          cached: 0,
          non2xx: r.non2xx,
          errors: r.errors,
          timeouts: r.timeouts,
        });
      } catch (error) {
        reject(new Error(`autocannon output not understood: ${(error as Error).message}: ${out.slice(0, 300)}`));
      }
    });
  });
}

// ---------------------------------------------------------------- in flight

/**
 * Requests the API is working on (autocannon leaves some behind when its duration ends) and has
 * answered, and how compare answers were made.
 */
const inFlight = { count: 0, handled: 0 };
const answers = { computed: 0, cached: 0 };

/**
 * How long the handler took for each request of the current load (from the event to the answer,
 * waits for DynamoDB included).
 */
const handlerMs: number[] = [];

const counted: ApiHandler = async (event, context) => {
  inFlight.count++;
  const started = performance.now();
  try {
    const result = await (apiHandler as ApiHandler)(event, context);
    const made = (result as { headers?: Record<string, unknown> } | undefined)?.headers?.[ANSWER_HEADER];
    if (made === 'computed' || made === 'cached') answers[made]++;
    return result;
  } finally {
    handlerMs.push(performance.now() - started);
    inFlight.count--;
    inFlight.handled++;
  }
};

/** CPU time (user + system, ms) a process has used so far: this one, or a child by pid. */
function cpuMs(pid?: number): number {
  if (pid === undefined) {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  }
  // /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock ticks (100 a second on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Wait until the API has answered everything (at most DRAIN_LIMIT_MS); the time waited. */
async function drain(): Promise<number> {
  const started = performance.now();
  while (inFlight.count > 0 && performance.now() - started < DRAIN_LIMIT_MS)
    await new Promise((r) => setTimeout(r, 50));
  return performance.now() - started;
}

// ---------------------------------------------------------------- main

interface Result {
  size: number;
  scenario: Scenario;
  probe: Probe;
  /** How the load ran: `-d 10`, `-a 16`, or `none` (a lone request took over NO_LOAD_MS). */
  mode: string;
  load?: Load;
}

const f = (n: number, digits = 1) => n.toFixed(digits);

/** The API over HTTP, its reads metered. */
interface Bench {
  env: Emulators;
  api: ServedApi;
  base: string;
  deps: ApiDeps;
  meter: ReadMeter;
}

async function startApi(env: Emulators): Promise<Bench> {
  const meter = meterReads(env);
  const deps: ApiDeps = {
    s3: env.s3,
    db: env.db,
    tableName: env.tableName,
    bucket: env.bucket,
    resultsBucket: env.resultsBucket,
    maxUploadBytes: 10_000_000,
  };
  const api = await serveApi(counted);
  return { env, api, base: api.url, deps, meter };
}

/** The load on one scenario, with the CPU per request and the handler's own times over it. */
async function measuredLoad(bench: Bench, scenario: Scenario, mode: string[]): Promise<Load> {
  const { env } = bench;
  Object.assign(answers, { computed: 0, cached: 0 });
  handlerMs.length = 0;
  const cpu = { api: cpuMs(), dynamo: cpuMs(env.dynalitePid), handled: inFlight.handled };
  const l = await load(bench.base + scenario.path, mode);
  // CPU per request answered, those autocannon left behind at the end of its duration included.
  await drain();
  const served = Math.max(1, inFlight.handled - cpu.handled);
  l.apiCpuMs = (cpuMs() - cpu.api) / served;
  l.dynamoCpuMs = (cpuMs(env.dynalitePid) - cpu.dynamo) / served;
  l.handlerP50 = handlerMs.length > 0 ? percentile(handlerMs, 50) : NaN;
  l.handlerP99 = handlerMs.length > 0 ? percentile(handlerMs, 99) : NaN;
  Object.assign(l, answers);
  return l;
}

/** One scenario at one table size: a lone metered request, checked, then the load. */
async function measureScenario(
  bench: Bench,
  size: number,
  scenario: Scenario,
): Promise<{ result?: Result; failed: boolean }> {
  const waited = await drain();
  if (waited > 100) {
    const still =
      inFlight.count === 0 ? 'the previous load to finish' : 'the previous load; still in flight: ' + inFlight.count;
    console.log(`  (waited ${f(waited / 1000)} s for ${still})`);
  }
  setApiDeps({ ...bench.deps, cacheAnswers: scenario.cacheAnswers });
  // With the cache on, the lone request is measured as the load will find it: answered before.
  if (scenario.cacheAnswers) await fetch(bench.base + scenario.path).then((r) => r.text());
  const p = await probe(bench.base, scenario, bench.meter);
  if (p.problem) {
    console.log(`  ${scenario.name}: check FAILED: ${p.problem}`);
    return { failed: true };
  }
  const single =
    `single request ${f(p.ms)} ms, ${p.reads} reads, ${p.units} RCU` +
    `${p.unmetered ? ` (${p.unmetered} reads unmetered)` : ''}`;
  if (p.ms > NO_LOAD_MS) {
    console.log(`  ${scenario.name}: ${single}; not loaded (a lone request takes over ${NO_LOAD_MS} ms)`);
    return { result: { size, scenario, probe: p, mode: 'none' }, failed: false };
  }
  const mode = p.ms > AMOUNT_MODE_MS ? ['-a', String(CONCURRENCY)] : ['-d', String(DURATION_S)];
  const l = await measuredLoad(bench, scenario, mode);
  const made = scenario.path.startsWith('/compare') ? `, answers computed ${l.computed}, cached ${l.cached}` : '';
  console.log(
    `  ${scenario.name}: ${single}; load (${mode.join(' ')}) p50 ${l.p50} ms, p99 ${l.p99} ms ` +
      `(in the handler ${f(l.handlerP50, 0)} / ${f(l.handlerP99, 0)} ms), ${f(l.rps)} req/s, ${l.total} requests, ` +
      `CPU per request: API ${f(l.apiCpuMs)} ms, dynalite ${f(l.dynamoCpuMs)} ms${made}; ` +
      `non-2xx ${l.non2xx}, errors ${l.errors}, timeouts ${l.timeouts}`,
  );
  return {
    result: { size, scenario, probe: p, mode: mode.join(' '), load: l },
    failed: l.non2xx > 0 || l.errors - l.timeouts > 0,
  };
}

/** Seeds each table size in turn and measures every scenario on it; true when a check or a load failed. */
async function measureSizes(bench: Bench, results: Result[]): Promise<boolean> {
  const fixtures = await templates();
  const random = prng(SEED);
  const iostat = await iostatTemplates(prng(SEED + 1));
  const seeder: Seeder = { count: 0, ids: new Map() };
  console.log(
    `API at ${bench.base}, dynalite in a child process (pid ${bench.env.dynalitePid}); ` +
      `${LABELS} diskperf labels, ${TARGET_RUNS} runs each on ${TARGETS.a} and ${TARGETS.b}; ` +
      `${TARGET_RUNS} iostat runs of ${IOSTAT_DISKS.length} disks ` +
      `each on ${IOSTAT_TARGETS.a} and ${IOSTAT_TARGETS.b}; autocannon -c ${CONCURRENCY} -d ${DURATION_S} per scenario`,
  );
  let failed = false;
  for (const size of SIZES) {
    const seconds = await seed(bench.env, seeder, size, fixtures, iostat, random);
    console.log(`\nseeded to ${seeder.count} runs (${f(seconds)} s)`);
    // Untimed: the first requests of a fresh process compile the code paths (JIT), and dynalite's
    // pages come into memory.
    setApiDeps({ ...bench.deps, cacheAnswers: false });
    for (const scenario of scenarios(seeder))
      for (let i = 0; i < WARM_UP; i++) await fetch(bench.base + scenario.path).then((r) => r.text());
    for (const scenario of scenarios(seeder)) {
      const measured = await measureScenario(bench, size, scenario);
      if (measured.failed) failed = true;
      if (measured.result) results.push(measured.result);
    }
  }
  return failed;
}

function printResultTable(results: Result[]): void {
  const rows = [
    [
      'runs',
      'scenario',
      'load',
      'single ms',
      'p50 ms',
      'p99 ms',
      'handler p50/p99 ms',
      'req/s',
      'requests',
      'API CPU ms/req',
      'dynalite CPU ms/req',
      'non-2xx',
      'errors',
      'timeouts',
      'RCU / request',
      'reads / request',
    ],
  ];
  for (const r of results) {
    const l = r.load;
    const has = l !== undefined && l.total > 0;
    rows.push([
      String(r.size),
      r.scenario.name,
      r.mode,
      f(r.probe.ms, 0),
      has ? String(l.p50) : '-',
      has ? String(l.p99) : '-',
      has ? `${f(l.handlerP50, 0)}/${f(l.handlerP99, 0)}` : '-',
      l ? f(l.rps) : '-',
      l ? String(l.total) : '-',
      has ? f(l.apiCpuMs) : '-',
      has ? f(l.dynamoCpuMs) : '-',
      l ? String(l.non2xx) : '-',
      l ? String(l.errors) : '-',
      l ? String(l.timeouts) : '-',
      f(r.probe.units),
      String(r.probe.reads),
    ]);
  }
  console.log(`\n${table(rows, (c) => c !== 1 && c !== 2)}`);
}

const bySize = (results: Result[], name: string, size: number) =>
  results.find((r) => r.scenario.name === name && r.size === size);

function printReadUnits(results: Result[]): void {
  console.log('\nread units per request, 1,000 -> 10,000 runs:');
  const names = [...new Set(results.map((r) => r.scenario.name))];
  for (const name of names) {
    const small = bySize(results, name, SIZES[0]!);
    const large = bySize(results, name, SIZES[1]!);
    if (!small || !large) continue;
    console.log(
      `  ${name}: ${f(small.probe.units)} -> ${f(large.probe.units)} RCU ` +
        `(${large.probe.units > small.probe.units ? 'grew' : 'did not grow'})`,
    );
  }
}

/** A scenario's p99 at one size, as printed, and whether it meets the p99 target. */
function p99Of(results: Result[], name: string, size: number): { figure: string; met: boolean } {
  const r = bySize(results, name, size);
  const l = r?.load;
  const figure =
    l && l.total > 0 ? `${l.p99} ms` : r ? `not loaded (one request ${f(r.probe.ms, 0)} ms)` : 'not measured';
  const met = l !== undefined && l.total > 0 && l.p99 < P99_TARGET_MS && l.non2xx === 0 && l.timeouts === 0;
  return { figure, met };
}

/** The targets' table rows, and what each missed target says. */
interface Targets {
  rows: string[][];
  missed: string[];
}

function checkP99(results: Result[], targets: Targets): void {
  for (const size of SIZES) {
    const { figure, met } = p99Of(results, DEVICE, size);
    targets.rows.push([`device compare p99 < ${P99_TARGET_MS} ms at ${size} runs`, figure, met ? 'met' : 'NOT MET']);
    if (!met) targets.missed.push(`device compare p99 ${figure} at ${size} runs`);
  }
}

function checkReadUnitsFlat(results: Result[], targets: Targets): void {
  for (const name of [DEVICE, TAG, IOSTAT, RUN]) {
    const small = bySize(results, name, SIZES[0]!);
    const large = bySize(results, name, SIZES[1]!);
    const flat =
      small !== undefined &&
      large !== undefined &&
      large.probe.units <= small.probe.units &&
      large.probe.unmetered === 0;
    const what = name.split(':')[0]!;
    targets.rows.push([
      `${what} compare RCU does not grow ${SIZES[0]} -> ${SIZES[1]} runs`,
      small && large ? `${f(small.probe.units)} -> ${f(large.probe.units)}` : 'not measured',
      flat ? 'met' : 'NOT MET',
    ]);
    if (!flat) targets.missed.push(`${what} compare read units grew with table size (or were not measured)`);
  }
}

function checkIostatCpu(results: Result[], targets: Targets): void {
  const size = SIZES[SIZES.length - 1]!;
  const r = bySize(results, IOSTAT + UNCACHED, size);
  const l = r?.load;
  const has = l !== undefined && l.total > 0;
  const figure = has
    ? `${f(l.apiCpuMs)} ms (dynalite ${f(l.dynamoCpuMs)} ms; answers computed ${l.computed}, reused ${l.cached})`
    : r
      ? `not loaded (one request ${f(r.probe.ms, 0)} ms)`
      : 'not measured';
  // Every answer of the load computed (none reused), as the target asks.
  const met = has && l.cached === 0 && l.computed > 0 && l.apiCpuMs <= IOSTAT_CPU_TARGET_MS && l.non2xx === 0;
  targets.rows.push([
    `iostat compare, 2 labels x ${IOSTAT_DISKS.length} disks x ${TARGET_RUNS} runs, computed: ` +
      `<= ${IOSTAT_CPU_TARGET_MS} ms API CPU per request at ${size} runs`,
    figure,
    met ? 'met' : 'NOT MET',
  ]);
  if (!met) targets.missed.push(`iostat compare API CPU ${figure} per computed request at ${size} runs`);
}

function printTargets(results: Result[]): void {
  const targets: Targets = { rows: [['target', 'figure', 'result']], missed: [] };
  checkP99(results, targets);
  checkReadUnitsFlat(results, targets);
  checkIostatCpu(results, targets);
  console.log(`\n${table(targets.rows, () => false)}`);
  // The p99 target is the API as deployed (answers kept); beside it, every answer read and
  // computed, for the reader to weigh the cache's share.
  const p99Rows = [['compare', 'runs', 'p99 computed (cache off)', 'p99 kept (cache on, as deployed)']];
  for (const name of COMPARES)
    for (const size of SIZES)
      p99Rows.push([
        name.split(':')[0]!,
        String(size),
        p99Of(results, name + UNCACHED, size).figure,
        p99Of(results, name, size).figure,
      ]);
  console.log(
    `\np99 with every answer read and computed, ` +
      `beside p99 with the API's answer cache:\n${table(p99Rows, (c) => c === 1)}`,
  );
  console.log(`\ntargets: ${targets.missed.length === 0 ? 'all met' : `NOT met: ${targets.missed.join('; ')}`}`);
}

async function main(): Promise<number> {
  const env = await startEmulators({
    tableName: 'benchdrop-api-bench',
    bucket: 'benchdrop-api-bench-drop',
    dynaliteProcess: true,
  });
  let api: ServedApi | undefined;
  let failed: boolean;
  const results: Result[] = [];
  console.log(`load average at start: ${loadAverage()} (other processes on this machine share its CPUs)`);
  try {
    const bench = await startApi(env);
    api = bench.api;
    failed = await measureSizes(bench, results);
  } catch (error) {
    failed = true;
    console.error(error);
  } finally {
    for (const child of children) child.kill();
    setApiDeps(undefined);
    await api?.close();
    await env.stop().catch((error: unknown) => console.error('stopping the emulators:', error));
  }
  console.log(`load average at end: ${loadAverage()}`);
  if (results.length === 0) return 1;
  printResultTable(results);
  printReadUnits(results);
  printTargets(results);
  return failed ? 1 : 0;
}

process.exitCode = await main();
