/**
 * `npm run bench:listings`: selectors and listings over a quarter of a million
 * device labels (issue 13, "every listing pages"), over HTTP against emulators.
 *
 *   1. start dynalite in a child process (its work is not the API's) and
 *      s3rver, with harness/emulators.ts, and the API handler
 *      (functions/api/handler.ts) served on 127.0.0.1:0 by harness/api-server.ts
 *      (infra/local/http.ts's startHttpServer, as the local lab serves it);
 *   2. load 250,000 DEVICES items directly with BatchWrite (BatchWriter), labels
 *      `lab-000000` ... in label order as a lab of many hosts would hold them,
 *      and six target labels `target-a-1..3`, `target-b-1..3` with two diskperf
 *      runs each (the IRIX Indy fixtures, stored as ingest stores them:
 *      diskperfRunItem);
 *   3. per scenario: one request alone (its time and answer checked), then
 *      REQUESTS requests at concurrency 4 (the concurrency the issue measured
 *      at), each request's latency taken;
 *   4. scenarios: a prefix-wildcard compare (`target-a-*` vs `target-b-*`: one
 *      DEVICES query under the prefix, the matching labels' runs), a
 *      leading-wildcard compare (`*-a-1`: refused with a 400 saying to start the
 *      pattern with literal text, after reading at most 1,001 labels), GET
 *      /devices pages of 1,000 (the first, and every page in turn: 251 requests,
 *      every label once, each answer's size), and the first page of GET /runs
 *      without a device (the filler labels have no runs: a page that reads as
 *      many labels as one page may, LIST_INDEX_QUERIES, finds none, and goes on).
 *
 * Targets: each scenario's p99 at concurrency 4 under 1 s (the ratio printed is
 * p99 / 1 s; met when under 1), every page of GET /devices under 1 MB and every
 * label listed once. Exit 1 when a check fails (an answer that is not what the
 * scenario expects); a missed target is only reported.
 *
 *   npm run bench:listings -- [--labels 250000] [--requests 40]
 */
import '../shared/node-support-notice.ts';
import '../harness/quiet.ts';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setApiDeps } from '../functions/api/handler.ts';
import { MAX_PAGE } from '../shared/api.ts';
import type { DiskperfRun } from '../shared/model.ts';
import { parseText } from '../shared/parsers/index.ts';
import { BatchWriter } from '../shared/store/batch.ts';
import { runId } from '../shared/store/keys.ts';
import { deviceItem } from '../shared/store/items.ts';
import { diskperfRunItem } from '../shared/store/run-items.ts';
import { startEmulators, type Emulators } from '../harness/emulators.ts';
import { serveApi, type ServedApi } from '../harness/api-server.ts';
import { numberArg } from './args.ts';
import { loadAverage, percentile, table } from './stats.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = ['irix-6.5-indy-scsi2sd-redux', 'irix-6.5-indy-scsi2sd-10M-sync'].map((name) =>
  join(ROOT, 'test/fixtures/irix', `${name}.diskperf.txt`),
);

const LABELS = numberArg('--labels', 250_000);
const REQUESTS = numberArg('--requests', 40);
const CONCURRENCY = 4;
/** What the issue asks of a wildcard over 250,000 labels, and of every request here. */
const TARGET_MS = 1000;
const UNDER_ONE_MB = 1_000_000;
const TARGETS = { a: ['target-a-1', 'target-a-2', 'target-a-3'], b: ['target-b-1', 'target-b-2', 'target-b-3'] };
const RUNS_PER_TARGET = 2;
const BUCKET = 'benchdrop-bench-listings';
const LAST_SEEN = '2031-01-01T00:00:00.000Z';

const filler = (i: number) => `lab-${String(i).padStart(6, '0')}`;

// ---------------------------------------------------------------- loading

async function load(env: Emulators): Promise<number> {
  const started = performance.now();
  const writer = new BatchWriter(env.db, env.tableName);
  const templates: DiskperfRun[] = [];
  for (const path of FIXTURES)
    templates.push((await parseText(readFileSync(path, 'utf8'), path)).runs[0] as DiskperfRun);
  for (const [side, labels] of Object.entries(TARGETS)) {
    for (const label of labels) {
      for (let r = 0; r < RUNS_PER_TARGET; r++) {
        const key = `bench/${label}/${r}.diskperf.txt`;
        const source = { bucket: BUCKET, key, version: 'v1' };
        const run = templates[side === 'a' ? 0 : 1]!;
        writer.put(
          diskperfRunItem(run, {
            runId: runId(BUCKET, key, 'v1', 0),
            label,
            tags: {},
            source,
            ingestedAt: new Date(Date.UTC(2031, 0, 1, 0, r)).toISOString(),
          }),
        );
      }
      writer.put(deviceItem(label, 'diskperf', LAST_SEEN, 'v1'));
    }
  }
  for (let i = 0; i < LABELS; i++) {
    writer.put(deviceItem(filler(i), 'diskperf', LAST_SEEN, 'v1'));
    if (writer.pending >= 2000) await writer.flush();
  }
  await writer.flush();
  return (performance.now() - started) / 1000;
}

// ---------------------------------------------------------------- requests

interface Answer {
  status: number;
  ms: number;
  bytes: number;
  body: Record<string, unknown>;
}

async function request(base: string, path: string): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(base + path);
  const text = await response.text();
  return {
    status: response.status,
    ms: performance.now() - started,
    bytes: Buffer.byteLength(text),
    body: JSON.parse(text) as Record<string, unknown>,
  };
}

/** `count` requests, `concurrency` at a time; each one's latency. */
async function loadOf(base: string, paths: () => string, count: number, concurrency: number): Promise<Answer[]> {
  const out: Answer[] = [];
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started++;
      out.push(await request(base, paths()));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}

interface Scenario {
  name: string;
  path: string;
  /** What a correct answer holds; a message when it does not. */
  check: (answer: Answer) => string | undefined;
}

const compare = (a: string, b: string) => `/compare?${new URLSearchParams({ a, b, metric: 'fwd_wt' })}`;

const SCENARIOS: Scenario[] = [
  {
    name: 'prefix-wildcard compare (target-a-* vs target-b-*)',
    path: compare('target-a-*', 'target-b-*'),
    check: ({ status, body }) => {
      const runs = [
        (body['a'] as { runs?: number } | undefined)?.runs,
        (body['b'] as { runs?: number } | undefined)?.runs,
      ];
      const want = TARGETS.a.length * RUNS_PER_TARGET;
      return status === 200 && runs[0] === want && runs[1] === want
        ? undefined
        : `expected 200 with ${want} runs a side, got ${status} ${JSON.stringify(body).slice(0, 200)}`;
    },
  },
  {
    name: 'leading-wildcard compare (*-a-1 vs target-b-*)',
    path: compare('*-a-1', 'target-b-*'),
    check: ({ status, body }) => {
      const message = (body['error'] as { message?: string } | undefined)?.message ?? '';
      return status === 400 &&
        /starts its device pattern with a wildcard.*start the pattern with literal text/.test(message)
        ? undefined
        : `expected a 400 saying to start with literal text, got ${status} ${message.slice(0, 200)}`;
    },
  },
  {
    name: `GET /devices?limit=${MAX_PAGE} (first page)`,
    path: `/devices?limit=${MAX_PAGE}`,
    check: ({ status, body, bytes }) => {
      const n = (body['devices'] as unknown[] | undefined)?.length;
      return status === 200 && n === MAX_PAGE && typeof body['next'] === 'string' && bytes < UNDER_ONE_MB
        ? undefined
        : `expected ${MAX_PAGE} devices and a next under 1 MB, got ${status}, ${String(n)} devices, ${bytes} bytes`;
    },
  },
  {
    name: 'GET /runs (no device, first page)',
    path: '/runs',
    check: ({ status, body }) =>
      status === 200 && Array.isArray(body['runs']) && typeof body['next'] === 'string'
        ? undefined
        : `expected a page and a next, got ${status} ${JSON.stringify(body).slice(0, 200)}`,
  },
];

/**
 * Every page of GET /devices at the largest limit, one request after the other: each page's time
 * and size, and every label once.
 */
async function pageThrough(base: string): Promise<{ pages: Answer[]; labels: number; problem?: string }> {
  const pages: Answer[] = [];
  const seen = new Set<string>();
  let next: string | undefined;
  let previous = '';
  let ordered = true;
  do {
    const answer = await request(
      base,
      `/devices?${new URLSearchParams({ limit: String(MAX_PAGE), ...(next ? { next } : {}) })}`,
    );
    if (answer.status !== 200)
      return { pages, labels: seen.size, problem: `page ${pages.length + 1}: HTTP ${answer.status}` };
    pages.push(answer);
    for (const { label } of answer.body['devices'] as { label: string }[]) {
      if (label <= previous) ordered = false;
      seen.add(label);
      previous = label;
    }
    next = answer.body['next'] as string | undefined;
  } while (next !== undefined);
  const expected = LABELS + TARGETS.a.length + TARGETS.b.length;
  const problem =
    seen.size !== expected
      ? `listed ${seen.size} labels, expected ${expected}`
      : !ordered
        ? 'labels out of order'
        : undefined;
  return { pages, labels: seen.size, ...(problem ? { problem } : {}) };
}

// ---------------------------------------------------------------- main

const f = (n: number, digits = 0) => n.toFixed(digits);

/** The summary table's rows and the targets missed, filled scenario by scenario. */
interface Report {
  rows: string[][];
  missed: string[];
  failed: boolean;
}

function emptyReport(): Report {
  const header = [
    'scenario',
    'single ms',
    `p50 ms (c=${CONCURRENCY})`,
    'p99 ms',
    'max ms',
    'requests',
    'bytes (max)',
    `p99 / ${TARGET_MS} ms`,
    'target',
  ];
  return { rows: [header], missed: [], failed: false };
}

/** One scenario: a lone request checked, then REQUESTS of it, CONCURRENCY at a time. */
async function measureScenario(base: string, scenario: Scenario, report: Report): Promise<void> {
  // Untimed: the first requests compile the code paths and bring dynalite's pages into memory.
  for (let i = 0; i < 3; i++) await request(base, scenario.path);
  const single = await request(base, scenario.path);
  const problem = scenario.check(single);
  if (problem) {
    report.failed = true;
    console.log(`  ${scenario.name}: check FAILED: ${problem}`);
    return;
  }
  const answers = await loadOf(base, () => scenario.path, REQUESTS, CONCURRENCY);
  const wrong = answers.map(scenario.check).find((p) => p !== undefined);
  if (wrong) {
    report.failed = true;
    console.log(`  ${scenario.name}: under load, check FAILED: ${wrong}`);
  }
  const ms = answers.map((a) => a.ms);
  const p99 = percentile(ms, 99);
  const met = p99 < TARGET_MS && wrong === undefined;
  if (!met) report.missed.push(`${scenario.name} p99 ${f(p99)} ms`);
  report.rows.push([
    scenario.name,
    f(single.ms),
    f(percentile(ms, 50)),
    f(p99),
    f(Math.max(...ms)),
    String(answers.length),
    String(Math.max(...answers.map((a) => a.bytes))),
    (p99 / TARGET_MS).toFixed(2),
    met ? 'met' : 'NOT MET',
  ]);
  console.log(
    `  ${scenario.name}: single ${f(single.ms)} ms; at concurrency ${CONCURRENCY}: ` +
      `p50 ${f(percentile(ms, 50))} ms, p99 ${f(p99)} ms`,
  );
}

/** Every page of GET /devices in turn, against the same targets. */
async function measurePaging(base: string, report: Report): Promise<void> {
  const started = performance.now();
  const through = await pageThrough(base);
  const wall = (performance.now() - started) / 1000;
  if (through.problem) {
    report.failed = true;
    console.log(`  GET /devices, every page: check FAILED: ${through.problem}`);
  }
  const pageMs = through.pages.map((p) => p.ms);
  const maxBytes = Math.max(...through.pages.map((p) => p.bytes));
  const p99 = percentile(pageMs, 99);
  const met = through.problem === undefined && p99 < TARGET_MS && maxBytes < UNDER_ONE_MB;
  if (!met) report.missed.push(`GET /devices paging p99 ${f(p99)} ms, largest page ${maxBytes} bytes`);
  report.rows.push([
    'GET /devices, every page in turn ' +
      `(${through.pages.length} pages, ${through.labels.toLocaleString('en')} labels, ${f(wall, 1)} s)`,
    '-',
    f(percentile(pageMs, 50)),
    f(p99),
    f(Math.max(...pageMs)),
    String(through.pages.length),
    String(maxBytes),
    (p99 / TARGET_MS).toFixed(2),
    met ? 'met' : 'NOT MET',
  ]);
}

async function measure(env: Emulators, report: Report, served: { api?: ServedApi }): Promise<void> {
  setApiDeps({
    s3: env.s3,
    db: env.db,
    tableName: env.tableName,
    bucket: env.bucket,
    resultsBucket: env.resultsBucket,
    maxUploadBytes: 10_000_000,
  });
  served.api = await serveApi();
  const base = served.api.url;
  const seconds = await load(env);
  console.log(
    `API at ${base}, dynalite in a child process (pid ${env.dynalitePid}); ` +
      `loaded ${LABELS.toLocaleString('en')} labels and ${TARGETS.a.length + TARGETS.b.length} target labels ` +
      `of ${RUNS_PER_TARGET} runs in ${f(seconds, 1)} s`,
  );
  for (const scenario of SCENARIOS) await measureScenario(base, scenario, report);
  await measurePaging(base, report);
}

async function main(): Promise<number> {
  const env = await startEmulators({
    tableName: 'benchdrop-listings-bench',
    bucket: 'benchdrop-listings-bench-drop',
    dynaliteProcess: true,
  });
  const served: { api?: ServedApi } = {};
  const report = emptyReport();
  console.log(`load average at start: ${loadAverage()} (other processes on this machine share its CPUs)`);
  try {
    await measure(env, report, served);
  } catch (error) {
    report.failed = true;
    console.error(error);
  } finally {
    setApiDeps(undefined);
    await served.api?.close();
    await env.stop().catch((error: unknown) => console.error('stopping the emulators:', error));
  }
  const { rows, missed, failed } = report;
  console.log(`load average at end: ${loadAverage()}`);
  console.log(`\n${table(rows, (c) => c > 0 && c < 8)}`);
  console.log(
    `\ntarget: every p99 under ${TARGET_MS} ms over ${LABELS.toLocaleString('en')} labels (ratio under 1.00), ` +
      'every GET /devices page under 1 MB with each label once',
  );
  const notMet = [...missed, ...(failed ? ['a check failed'] : [])];
  console.log(`targets: ${missed.length === 0 && !failed ? 'all met' : `NOT met: ${notMet.join('; ')}`}`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
