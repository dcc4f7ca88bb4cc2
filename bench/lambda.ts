/**
 * `npm run bench:lambda`: how big each Lambda bundle is, how long its module takes
 * to load and how long its first requests take (issue 6, item 5).
 *
 *   1. bundle functions/ingest/handler.ts and functions/api/handler.ts with
 *      esbuild's JS API twice each, into bench/out/lambda/:
 *        <name>/index.mjs               as deployed: the settings of
 *                                       infra/bundling.ts, which the stack hands
 *                                       to NodejsFunction (the AWS SDK bundled);
 *        <name>-sdk-external/index.mjs  the same with `@aws-sdk/*` external: the
 *                                       size the issue defines, and how the
 *                                       functions were bundled before, measured
 *                                       as a reference;
 *   2. start dynalite and s3rver in this process (harness/emulators.ts);
 *   3. per round (default 10), for each function and bundle, spawn a fresh `node`
 *      with the function's environment (the emulators' endpoints, and static
 *      credentials in the environment as Lambda provides them; no NODE_OPTIONS)
 *      that times `await import(bundle)` (init), then two invocations of the
 *      handler with real-shaped events: the ingest function gets an SQS batch
 *      with the S3 notification of a diskperf log just uploaded, the API function
 *      `GET /devices`. The first invocation is the rest of a cold start (clients
 *      created, credentials read, first connections), the second a warm one.
 *      The deployed bundle runs from a directory without node_modules (so it
 *      must be self-contained); the SDK-external one next to a symlink to the
 *      repository's node_modules, as the runtime would provide the SDK.
 *   4. check each invocation's answer (ingest: no batch failure and both uploads
 *      `ready` in the table; API: 200 with the devices ingested so far).
 *
 * Targets: bundle with the SDK external < 250 KB; init of the deployed bundle
 * < 150 ms (median). 1 KB = 1000 bytes. The exit code is 0 whatever the targets;
 * 1 when a build, a child or a check fails.
 *
 *   npm run bench:lambda -- [--runs 10]
 */
import { SDK_NODE_NOTICE_OFF } from '../shared/node-support-notice.ts';
import '../harness/quiet.ts';
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyStructuredResultV2, SQSBatchResponse } from 'aws-lambda';
import { build, version as esbuildVersion } from 'esbuild';
import { lambdaEsbuildOptions } from '../infra/bundling.ts';
import { bundleEncoderWorker } from '../infra/encoder-worker.ts';
import { s3EventRecord, sequencerGenerator, sqsEvent } from '../infra/local/events.ts';
import { apiEvent } from '../infra/local/http.ts';
import { ROUTES } from '../shared/api.ts';
import { ENV } from '../shared/config.ts';
import { objectRefOf } from '../shared/ingest.ts';
import { REGION, S3RVER_CREDENTIALS, startEmulators, type Emulators } from '../harness/emulators.ts';
import { getUpload } from '../harness/table.ts';
import { numberArg } from './args.ts';
import { loadAverage, median, percentile, table } from './stats.ts';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, '..');
const OUT = join(BENCH_DIR, 'out', 'lambda');

const SIZE_TARGET_KB = 250;
const INIT_TARGET_MS = 150;
const KB = 1000;
const DISKPERF = join(ROOT, 'test/fixtures/irix/irix-6.5-indy-300G-10K.diskperf.txt');

type FunctionName = 'ingest' | 'api';
type Variant = 'deployed' | 'sdk-external';

const FUNCTIONS: readonly { name: FunctionName; entry: string; service: string }[] = [
  { name: 'ingest', entry: join(ROOT, 'functions/ingest/handler.ts'), service: 'benchdrop-ingest' },
  { name: 'api', entry: join(ROOT, 'functions/api/handler.ts'), service: 'benchdrop-api' },
];
const VARIANTS: readonly Variant[] = ['deployed', 'sdk-external'];

/** Marks the probe's result line among the handler's own JSON logs. */
const RESULT_MARK = 'BENCH_LAMBDA_RESULT ';
/** The probe's code for its result, printed after RESULT_MARK. */
const RESULT_JSON = 'JSON.stringify({ initMs, initCpuMs: (cpu.user + cpu.system) / 1000, invokeMs, results })';

/**
 * Runs in the child with plain node: the import is timed, then each event of the
 * events file is handed to the handler in turn. Nothing is loaded before the
 * bundle but what node itself has loaded at start-up.
 */
const PROBE = `import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [bundle, eventsFile, functionName] = process.argv.slice(2);
const cpuBefore = process.cpuUsage();
const started = performance.now();
const module = await import(pathToFileURL(bundle).href);
const initMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
if (typeof module.handler !== 'function') throw new Error('the bundle exports no handler');
const events = JSON.parse(readFileSync(eventsFile, 'utf8'));
const invokeMs = [];
const results = [];
for (const [i, event] of events.entries()) {
  const deadline = Date.now() + 10000;
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:' + functionName,
    memoryLimitInMB: '1024',
    awsRequestId: 'bench-' + process.pid + '-' + i,
    logGroupName: '/aws/lambda/' + functionName,
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  const t = performance.now();
  results.push(await module.handler(event, context));
  invokeMs.push(performance.now() - t);
}
process.stdout.write('\\n${RESULT_MARK}' + ${RESULT_JSON} + '\\n');
process.exit(0);
`;

// ---------------------------------------------------------------- arguments

const rounds = numberArg('--runs', 10, (n) => Number.isInteger(n) && n >= 1, 'a positive integer');

// ---------------------------------------------------------------- a child process per cold start

interface ProbeResult {
  initMs: number;
  initCpuMs: number;
  invokeMs: number[];
  results: unknown[];
  wallMs: number;
}

/** The environment Lambda gives the function, pointed at the emulators (no tsx loader, nothing inherited). */
function functionEnv(env: Emulators, service: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    AWS_LAMBDA_FUNCTION_NAME: service,
    [ENV.tableName]: env.tableName,
    [ENV.bucketName]: env.bucket,
    [ENV.resultsBucket]: env.resultsBucket,
    [ENV.maxUploadBytes]: String(10_000_000),
    [ENV.lab]: 'bench',
    [ENV.s3Endpoint]: env.s3Endpoint,
    [ENV.dynamodbEndpoint]: env.dynamodbEndpoint,
    POWERTOOLS_SERVICE_NAME: service,
    POWERTOOLS_METRICS_NAMESPACE: 'Benchdrop',
    POWERTOOLS_LOG_LEVEL: 'INFO',
    // Not Lambda's, but Lambda's Node 24 prints no such notice; this machine's Node may.
    ...SDK_NODE_NOTICE_OFF,
  };
}

function probe(
  probePath: string,
  bundlePath: string,
  eventsPath: string,
  service: string,
  env: NodeJS.ProcessEnv,
): Promise<ProbeResult> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [probePath, bundlePath, eventsPath, service], {
      cwd: dirname(bundlePath),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const wallMs = performance.now() - started;
      if (code !== 0)
        return reject(
          new Error(
            `node ${relative(ROOT, bundlePath)} exited with ${code ?? signal}:\n` +
              `${(stderr || stdout).trim().slice(0, 4000)}`,
          ),
        );
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_MARK));
      if (line === undefined)
        return reject(new Error(`no result line from ${relative(ROOT, bundlePath)}: ${stdout.slice(-500)}`));
      resolvePromise({ ...(JSON.parse(line.slice(RESULT_MARK.length)) as Omit<ProbeResult, 'wallMs'>), wallMs });
    });
  });
}

// ---------------------------------------------------------------- events

const sequencer = sequencerGenerator(0x2000000000000n);

/** Upload a diskperf log under a fresh key; its SQS-wrapped S3 notification, and how to check it was ingested. */
async function ingestEvent(
  env: Emulators,
  key: string,
): Promise<{ event: unknown; check: () => Promise<string | undefined> }> {
  const put = await env.put(key, readFileSync(DISKPERF), { metadata: { device: 'indy-300G-10K' } });
  const record = s3EventRecord({
    eventName: 'ObjectCreated:Put',
    bucket: env.bucket,
    key,
    size: put.size,
    eTag: put.eTag,
    sequencer: sequencer(),
  });
  const version = objectRefOf(record).version;
  return {
    event: sqsEvent([record]),
    check: async () => {
      const upload = await getUpload(env, env.bucket, key, version);
      return upload?.['status'] === 'ready'
        ? undefined
        : `${key}: upload ${String(upload?.['status'] ?? 'missing')} ${String(upload?.['message'] ?? '')}`;
    },
  };
}

/** GET /devices as API Gateway (HTTP API, payload 2.0) delivers it. */
function devicesEvent(): unknown {
  const request = {
    url: '/devices',
    method: 'GET',
    headers: { host: 'bench.execute-api.us-east-1.amazonaws.com', 'user-agent': 'bench' },
    httpVersion: '1.1',
    socket: { remoteAddress: '127.0.0.1' },
  };
  return apiEvent(request as unknown as IncomingMessage, Buffer.alloc(0), Object.values(ROUTES));
}

// ---------------------------------------------------------------- main

interface Sample {
  initMs: number;
  initCpuMs: number;
  firstMs: number;
  secondMs: number;
  wallMs: number;
}

interface Built {
  name: FunctionName;
  variant: Variant;
  service: string;
  bundle: string;
  bytes: number;
  mapBytes: number;
  samples: Sample[];
}

/** Each function bundled as deployed and with the SDK external. */
async function buildBundles(): Promise<Built[]> {
  const builds: Built[] = [];
  for (const fn of FUNCTIONS) {
    for (const variant of VARIANTS) {
      const outfile = join(OUT, variant === 'deployed' ? fn.name : `${fn.name}-sdk-external`, 'index.mjs');
      mkdirSync(dirname(outfile), { recursive: true });
      const started = performance.now();
      await build({
        ...lambdaEsbuildOptions(variant === 'deployed' ? undefined : ['@aws-sdk/*']),
        logLevel: 'warning',
        entryPoints: [fn.entry],
        outfile,
        absWorkingDir: ROOT,
      });
      // The ingest function's package holds the samples encoder's thread too (infra/encoder-worker.ts).
      if (fn.name === 'ingest')
        await bundleEncoderWorker(
          dirname(outfile),
          lambdaEsbuildOptions(variant === 'deployed' ? undefined : ['@aws-sdk/*']),
        );
      const bytes = statSync(outfile).size;
      const mapBytes = statSync(`${outfile}.map`).size;
      console.log(
        `built ${relative(ROOT, outfile)} (${variant}): ${bytes} bytes (${(bytes / KB).toFixed(1)} KB), ` +
          `source map ${(mapBytes / KB).toFixed(1)} KB, in ${(performance.now() - started).toFixed(0)} ms`,
      );
      builds.push({ name: fn.name, variant, service: fn.service, bundle: outfile, bytes, mapBytes, samples: [] });
    }
  }
  return builds;
}

/** Where the cold starts run: the emulators, a scratch directory with the probe and a copy of each bundle. */
interface Stage {
  env: Emulators;
  work: string;
  probePath: string;
  copies: Map<Built, string>;
  problems: string[];
  uploads: number;
}

function stageBundles(env: Emulators, work: string, builds: Built[]): Stage {
  const probePath = join(work, 'probe.mjs');
  writeFileSync(probePath, PROBE);
  const copies = new Map<Built, string>();
  for (const b of builds) {
    const dir = join(work, `${b.name}-${b.variant}`);
    mkdirSync(dir);
    // The whole package: the bundle, its map, and any file packaged beside it.
    for (const file of readdirSync(dirname(b.bundle))) copyFileSync(join(dirname(b.bundle), file), join(dir, file));
    // The deployed bundle gets no node_modules: it must not need one.
    if (b.variant === 'sdk-external') symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    copies.set(b, join(dir, 'index.mjs'));
  }
  return { env, work, probePath, copies, problems: [], uploads: 0 };
}

/** The two events of a cold start: two fresh uploads for ingest, GET /devices twice for the API. */
async function eventsFor(
  stage: Stage,
  b: Built,
): Promise<{ events: unknown[]; checks: (() => Promise<string | undefined>)[] }> {
  if (b.name !== 'ingest') return { events: [devicesEvent(), devicesEvent()], checks: [] };
  const both = [
    await ingestEvent(stage.env, `bench-lambda/${++stage.uploads}.diskperf.txt`),
    await ingestEvent(stage.env, `bench-lambda/${++stage.uploads}.diskperf.txt`),
  ];
  return { events: both.map((e) => e.event), checks: both.map((e) => e.check) };
}

/** What went wrong in the handler's answers: batch failures, or not 200 with devices. */
function answerProblems(b: Built, results: unknown[]): string[] {
  const problems: string[] = [];
  for (const [i, result] of results.entries()) {
    if (b.name === 'ingest') {
      const failures = (result as SQSBatchResponse).batchItemFailures ?? [];
      if (failures.length > 0)
        problems.push(`${b.name} (${b.variant}) invocation ${i + 1}: ${failures.length} batch item failure(s)`);
    } else {
      const r = result as APIGatewayProxyStructuredResultV2;
      const devices = r.statusCode === 200 ? (JSON.parse(String(r.body)) as { devices: unknown[] }).devices : [];
      if (r.statusCode !== 200 || devices.length === 0)
        problems.push(
          `${b.name} (${b.variant}) invocation ${i + 1}: ${r.statusCode} ${String(r.body).slice(0, 300)} ` +
            '(expected 200 with the devices ingested so far)',
        );
    }
  }
  return problems;
}

async function coldStart(stage: Stage, b: Built): Promise<Sample> {
  const eventsPath = join(stage.work, 'events.json');
  const { events, checks } = await eventsFor(stage, b);
  writeFileSync(eventsPath, JSON.stringify(events));
  const p = await probe(
    stage.probePath,
    stage.copies.get(b)!,
    eventsPath,
    b.service,
    functionEnv(stage.env, b.service),
  );
  stage.problems.push(...answerProblems(b, p.results));
  for (const check of checks) {
    const problem = await check();
    if (problem !== undefined) stage.problems.push(`${b.name} (${b.variant}): ${problem}`);
  }
  return {
    initMs: p.initMs,
    initCpuMs: p.initCpuMs,
    firstMs: p.invokeMs[0]!,
    secondMs: p.invokeMs[1]!,
    wallMs: p.wallMs,
  };
}

/** Every round's cold starts; returns the problems the answers showed. */
async function runRounds(builds: Built[]): Promise<string[]> {
  const env = await startEmulators({ tableName: 'benchdrop-lambda', bucket: 'benchdrop-lambda-drop' });
  const work = mkdtempSync(join(tmpdir(), 'benchdrop-lambda-'));
  try {
    const stage = stageBundles(env, work, builds);
    // One untimed cold start each, so the first timed round does not pay for a cold page cache.
    for (const b of builds) await coldStart(stage, b);
    // Ingest before API within a round, so GET /devices always has devices to list.
    for (let round = 1; round <= rounds; round++) {
      const parts: string[] = [];
      for (const b of builds) {
        const s = await coldStart(stage, b);
        b.samples.push(s);
        const variant = b.variant === 'deployed' ? '' : ' (sdk-external)';
        parts.push(`${b.name}${variant} ${s.initMs.toFixed(0)}+${s.firstMs.toFixed(0)}`);
      }
      console.log(`  round ${round} (init + first invocation, ms): ${parts.join(', ')}`);
    }
    return stage.problems;
  } finally {
    rmSync(work, { recursive: true, force: true });
    await env.stop();
  }
}

function sizeRows(builds: Built[], unmet: string[]): string[][] {
  const rows: string[][] = [
    [
      'function',
      `SDK external KB (< ${SIZE_TARGET_KB})`,
      'deployed KB (SDK bundled)',
      'deployed map KB',
      'size target',
    ],
  ];
  for (const fn of FUNCTIONS) {
    const external = builds.find((b) => b.name === fn.name && b.variant === 'sdk-external')!;
    const deployed = builds.find((b) => b.name === fn.name && b.variant === 'deployed')!;
    const kb = external.bytes / KB;
    const met = kb < SIZE_TARGET_KB;
    if (!met) unmet.push(`${fn.name} bundle ${kb.toFixed(1)} KB >= ${SIZE_TARGET_KB}`);
    rows.push([
      fn.name,
      kb.toFixed(1),
      (deployed.bytes / KB).toFixed(1),
      (deployed.mapBytes / KB).toFixed(1),
      met ? 'met' : 'NOT MET',
    ]);
  }
  return rows;
}

function timeRows(builds: Built[], unmet: string[]): string[][] {
  const rows: string[][] = [
    [
      'function',
      'bundle',
      `init ms (< ${INIT_TARGET_MS})`,
      'init p90',
      'init CPU ms',
      '1st invocation ms',
      '2nd invocation ms',
      'cold start ms',
      'process ms',
      'init target',
    ],
  ];
  for (const b of builds) {
    const of = (pick: (s: Sample) => number) => median(b.samples.map(pick));
    const init = of((s) => s.initMs);
    let verdict = 'reference';
    if (b.variant === 'deployed') {
      verdict = init < INIT_TARGET_MS ? 'met' : 'NOT MET';
      if (init >= INIT_TARGET_MS) unmet.push(`${b.name} init ${init.toFixed(1)} ms >= ${INIT_TARGET_MS}`);
    }
    rows.push([
      b.name,
      b.variant,
      init.toFixed(1),
      percentile(
        b.samples.map((s) => s.initMs),
        90,
      ).toFixed(1),
      of((s) => s.initCpuMs).toFixed(1),
      of((s) => s.firstMs).toFixed(1),
      of((s) => s.secondMs).toFixed(1),
      of((s) => s.initMs + s.firstMs).toFixed(1),
      of((s) => s.wallMs).toFixed(0),
      verdict,
    ]);
  }
  return rows;
}

function printReport(builds: Built[], problems: string[]): void {
  const unmet: string[] = [];
  const sizes = sizeRows(builds, unmet);
  const times = timeRows(builds, unmet);
  console.log(
    '\nbundles (minified; the size target is for the bundle with @aws-sdk/* external, as the issue defines it):\n',
  );
  console.log(table(sizes, (c) => c > 0 && c < 4));
  console.log(
    `\ninit = await import(bundle) in a fresh node with the function's environment; ` +
      `then two invocations against dynalite and s3rver; cold start = init + 1st invocation. Medians of ${rounds} ` +
      `rounds; "deployed" is what the stack ships, "sdk-external" the same code resolving the SDK from node_modules:\n`,
  );
  console.log(table(times, (c) => c > 1 && c < 9));
  if (problems.length > 0) {
    console.log(`\nbench FAILED: ${problems.length} invocation(s) went wrong:`);
    for (const p of problems.slice(0, 12)) console.log(`  ${p}`);
  }
  console.log(`\nload average at end: ${loadAverage()}`);
  console.log(`targets: ${unmet.length === 0 ? 'all met' : `NOT met: ${unmet.join('; ')}`}`);
}

async function main(): Promise<number> {
  console.log(
    `bench:lambda: ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? '?'}), node ${process.version}, ` +
      `esbuild ${esbuildVersion}, load average ${loadAverage()}`,
  );
  const builds = await buildBundles();
  const problems = await runRounds(builds);
  printReport(builds, problems);
  return problems.length > 0 ? 1 : 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(`bench:lambda FAILED: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
}
