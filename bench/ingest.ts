/**
 * `npm run bench:ingest`: ingestion through the local lab (issue 6, item 2).
 *
 *   1. generate (or reuse) the mixed upload set in bench/out/ingest-mix/
 *      (bench/ingest-mix.ts: 500 files of 1 KB-5 MB, diskperf and every iostat
 *      flavour, each with the runs and samples its ingestion must yield) and the
 *      200 MB Solaris `iostat -xn` log of bench:parse (bench/generate.ts);
 *   2. start the lab as `npm start` runs it, in a child process of its own
 *      (harness/processes.ts: --fresh --no-samples, free ports, data in a
 *      temporary folder): dynalite, s3rver, the LocalQueue and the very same
 *      ingest handler in one Node process;
 *   3. upload the 500 files with the SDK (@aws-sdk/lib-storage, 16 at a time),
 *      each under its own folder (its device label); poll GET /uploads until
 *      every one is `ready` or `failed`; read every run back with GET /runs/{id}
 *      and count its samples (iostat: the series' sampleCount; diskperf: result
 *      rows). Time from PUT to ready is the upload record's updatedAt (the lab's
 *      clock, the same machine's) minus the moment the PUT was sent; files/s,
 *      samples/s and MB/s run from the first PUT sent to the last upload ready;
 *   4. upload the 200 MB log (a multipart upload) and time it to `ready` the same
 *      way. For both phases the lab process's CPU time and peak RSS (VmHWM; reset
 *      through /proc/PID/clear_refs before this upload) come from /proc, and its
 *      anonymous and file-backed RSS are sampled every 250 ms: dynalite maps its
 *      LevelDB table files, and the pages it reads count in RSS as file-backed
 *      page cache beside the process's own anonymous memory;
 *   5. the ingest path alone: bench/ingest-runner.ts, bundled with esbuild
 *      as the stack bundles the functions (infra/bundling.ts: the SDK inside,
 *      minified; target this machine's Node 20) and run as a
 *      plain `node` process, invokes functions/ingest/handler.ts once, as Lambda
 *      would, with a real-shaped SQS-wrapped S3 event for the same object; it
 *      reads from the lab's S3 and writes to a table of its own in the lab's
 *      DynamoDB (so the lab's copy is not replaced), and reports its VmHWM;
 *   6. once the lab is stopped, the time to `ready` of the same 200 MB log with
 *      the samples written as Parquet objects (the shipped ingest) and as the
 *      CHUNK items ingest used to write (the baseline, bench/baseline-chunks.ts),
 *      one after the other on the same emulators (bench/ingest-paths.ts).
 *
 * Targets: the ingest path's peak RSS for the 200 MB log at most 256 MB (it
 * streams); the new path at least TARGET_SPEEDUP (2) times as fast to `ready`
 * as the baseline. Exit 1 when a check fails: an upload that does not end `ready`, or
 * runs or samples that differ from what was uploaded; a missed target is only
 * reported. 1 MB = 10^6 bytes.
 *
 *   npm run bench:ingest -- [--files 500] [--concurrency 16] [--size-mb 200]
 */
import '../shared/node-support-notice.ts';
import { execFileSync } from 'node:child_process';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { sequencerGenerator, type S3EventRecordInput } from '../infra/local/events.ts';
import { LAB_CREDENTIALS } from '../shared/config.ts';
import { type LabEndpoints } from '../infra/local/lab.ts';
import type { RunDetail, UploadListing } from '../shared/api.ts';
import { createDocumentClient, createS3Client } from '../shared/aws.ts';
import { getRun, listUploads } from '../shared/listings.ts';
import { mapLimit, type ReadStore } from '../shared/store/store.ts';
import { clientEnv, LabProcess } from '../harness/processes.ts';
import { ensureLog, MB, type GeneratedLog } from './generate.ts';
import { ensureMix, MAX_BYTES, MIN_BYTES, type MixFile } from './ingest-mix.ts';
import { compareIngestPaths, printPathTimes, TARGET_SPEEDUP } from './ingest-paths.ts';
import { bundleIngestRunner, createRunnerTable, runIngestRunner, type RunnerRun } from './runner-process.ts';
import { numberArg } from './args.ts';
import { loadAverage, median, percentile, table } from './stats.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RSS_TARGET_MB = 256;
const RUNNER_TABLE = 'benchdrop-bench-ingest-runner';
const POLL_MS = 2000;
/** Give up on an upload that is not ready this long after the last PUT. */
const SETTLE_LIMIT_MS = 600_000;

const FILES = Math.round(numberArg('--files', 500));
const CONCURRENCY = Math.round(numberArg('--concurrency', 16));
const BIG_BYTES = Math.round(numberArg('--size-mb', 200) * MB);

const rel = (path: string): string => relative(ROOT, path) || '.';
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const megabytes = (bytes: number): string => `${(bytes / MB).toFixed(1)} MB`;
const count = (n: number): string => n.toLocaleString('en-US');

class CheckFailed extends Error {}

// ---------------------------------------------------------------- the lab process, from /proc

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Memory of a process from /proc/PID/status, in KiB: VmHWM is the peak of VmRSS = RssAnon + RssFile + RssShmem. */
function memoryOf(pid: number): { rssKiB: number; peakKiB: number; anonKiB: number; fileKiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKiB: field('VmRSS'), peakKiB: field('VmHWM'), anonKiB: field('RssAnon'), fileKiB: field('RssFile') };
}

/**
 * The largest anonymous and file-backed RSS of a process, sampled: the lab's
 * dynalite keeps its tables in LevelDB files that it maps into memory, and the
 * pages it has read count in RSS (file-backed, page cache the kernel may drop)
 * beside the process's own (anonymous) memory. VmHWM cannot tell them apart.
 */
class MemorySampler {
  anonKiB = 0;
  fileKiB = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    // Unref'd: a phase that throws before stop() must not keep the bench alive.
    this.timer = setInterval(() => this.sample(), 250).unref();
    this.sample();
  }

  private sample(): void {
    try {
      const m = memoryOf(this.pid);
      this.anonKiB = Math.max(this.anonKiB, m.anonKiB);
      this.fileKiB = Math.max(this.fileKiB, m.fileKiB);
    } catch {
      // The process is gone: its last samples stand.
    }
  }

  stop(): this {
    clearInterval(this.timer);
    this.sample();
    return this;
  }
}

/** User + system CPU seconds a process has used. */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat(5); the slice starts at field 3.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Start a new high-water mark (writing 5 to clear_refs resets VmHWM to the current RSS). */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

const kibToMB = (kib: number): number => (kib * 1024) / MB;

// ---------------------------------------------------------------- the lab's API

async function getJson<T>(endpoints: LabEndpoints, path: string): Promise<T> {
  const response = await fetch(`${endpoints.apiUrl}${path}`);
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** The finished (ready or failed) upload records, newest first, at most 500 of each. */
async function finishedUploads(endpoints: LabEndpoints): Promise<UploadListing[]> {
  const [ready, failed] = await Promise.all(
    ['ready', 'failed'].map((status) =>
      getJson<{ uploads: UploadListing[] }>(endpoints, `/uploads?status=${status}&limit=500`),
    ),
  );
  return [...ready!.uploads, ...failed!.uploads];
}

/** Polls until every key has a finished record; a key without one after `limitMs` fails the check. */
async function settle(
  endpoints: LabEndpoints,
  keys: ReadonlySet<string>,
  limitMs: number,
  progress: (done: number) => void,
): Promise<Map<string, UploadListing>> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const found = new Map<string, UploadListing>();
    for (const u of await finishedUploads(endpoints)) if (keys.has(u.key)) found.set(u.key, u);
    progress(found.size);
    if (found.size === keys.size) return found;
    if (Date.now() > deadline) {
      const missing = [...keys].filter((k) => !found.has(k));
      throw new CheckFailed(
        `${missing.length} upload(s) not ready or failed ${seconds(limitMs)} after the last PUT: ` +
          `${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Samples of a stored run: iostat series' sample counts, or diskperf result rows. */
function samplesOf(detail: RunDetail): number {
  if (detail.run.format === 'diskperf') return detail.run.rows.length;
  return detail.series.reduce((n, s) => n + s.sampleCount, 0);
}

// ---------------------------------------------------------------- phases

interface Sent {
  file: MixFile;
  key: string;
  sentAt: number;
  putMs: number;
}

interface LabMemory {
  /** VmHWM over the phase, MB. */
  peakMB: number;
  /** Largest sampled RssAnon and RssFile, MB. */
  anonMB: number;
  fileMB: number;
}

function labMemory(pid: number, sampler: MemorySampler): LabMemory {
  sampler.stop();
  return { peakMB: kibToMB(memoryOf(pid).peakKiB), anonMB: kibToMB(sampler.anonKiB), fileMB: kibToMB(sampler.fileKiB) };
}

interface MixResult {
  files: number;
  bytes: number;
  samples: number;
  runs: number;
  windowMs: number;
  latenciesMs: number[];
  lab: LabMemory;
  labCpuS: number;
}

/** PUTs every file, `CONCURRENCY` at a time, each under a folder of its own. */
async function putAll(s3: S3Client, endpoints: LabEndpoints, files: readonly MixFile[], dir: string): Promise<Sent[]> {
  const sent: Sent[] = [];
  await mapLimit(files, CONCURRENCY, async (file) => {
    // One folder per file: the folder is the device label of its runs.
    const key = `bench-${file.name.replace(/\.[^.]+$/, '')}/${file.name}`;
    const body = await readFile(join(dir, file.name));
    const sentAt = Date.now();
    await new Upload({ client: s3, params: { Bucket: endpoints.bucket, Key: key, Body: body } }).done();
    sent.push({ file, key, sentAt, putMs: Date.now() - sentAt });
  });
  return sent;
}

interface Stored {
  samples: number;
  runs: number;
  readyAt: number;
}

/** Every upload ready, with the runs and samples its file holds; throws CheckFailed otherwise. */
async function checkStored(
  endpoints: LabEndpoints,
  sent: Sent[],
  records: Map<string, UploadListing>,
): Promise<Stored[]> {
  const problems: string[] = [];
  const perFile = await mapLimit(sent, 8, async (s) => {
    const record = records.get(s.key)!;
    if (record.status !== 'ready') {
      problems.push(`${s.key}: ${record.status}${record.message ? `: ${record.message}` : ''}`);
      return { samples: 0, runs: 0, readyAt: Date.parse(record.updatedAt) };
    }
    let samples = 0;
    for (const id of record.runIds)
      samples += samplesOf(await getJson<RunDetail>(endpoints, `/runs/${encodeURIComponent(id)}`));
    if (record.runCount !== s.file.expectedRuns || record.runIds.length !== record.runCount)
      problems.push(
        `${s.key}: ${record.runCount} run(s) (${record.runIds.length} listed), expected ${s.file.expectedRuns}`,
      );
    if (samples !== s.file.expectedSamples)
      problems.push(`${s.key}: ${samples} samples stored, expected ${s.file.expectedSamples}`);
    return { samples, runs: record.runCount, readyAt: Date.parse(record.updatedAt) };
  });
  if (problems.length > 0)
    throw new CheckFailed(`${problems.length} upload(s) wrong:\n    ${problems.slice(0, 10).join('\n    ')}`);
  return perFile;
}

async function uploadMix(
  s3: S3Client,
  endpoints: LabEndpoints,
  files: readonly MixFile[],
  dir: string,
  labPid: number,
): Promise<MixResult> {
  const cpuBefore = cpuSecondsOf(labPid);
  const sampler = new MemorySampler(labPid);
  const started = Date.now();
  const sent = await putAll(s3, endpoints, files, dir);
  const putsDone = Date.now();
  console.log(
    `  ${files.length} PUTs done in ${seconds(putsDone - started)} ` +
      `(median PUT ${median(sent.map((s) => s.putMs)).toFixed(0)} ms); waiting for ready...`,
  );
  let shown = 0;
  const records = await settle(endpoints, new Set(sent.map((s) => s.key)), SETTLE_LIMIT_MS, (done) => {
    if (Math.floor(done / 100) > Math.floor(shown / 100) || (done === files.length && shown !== done))
      console.log(`  ${done}/${files.length} finished after ${seconds(Date.now() - started)}`);
    shown = done;
  });
  const labCpuS = cpuSecondsOf(labPid) - cpuBefore;
  const lab = labMemory(labPid, sampler);
  const perFile = await checkStored(endpoints, sent, records);
  const lastReady = Math.max(...perFile.map((f) => f.readyAt));
  return {
    files: sent.length,
    bytes: sent.reduce((n, s) => n + s.file.bytes, 0),
    samples: perFile.reduce((n, f) => n + f.samples, 0),
    runs: perFile.reduce((n, f) => n + f.runs, 0),
    windowMs: lastReady - started,
    latenciesMs: sent.map((s, i) => perFile[i]!.readyAt - s.sentAt),
    lab,
    labCpuS,
  };
}

interface BigResult {
  key: string;
  eTag: string;
  putMs: number;
  readyMs: number;
  lab: LabMemory;
  peakWasReset: boolean;
  labCpuS: number;
}

async function uploadBig(
  s3: S3Client,
  endpoints: LabEndpoints,
  path: string,
  bytes: number,
  expectedSamples: number,
  labPid: number,
): Promise<BigResult> {
  const key = 'bench-big/solaris-10-iostat-xn.log';
  const peakWasReset = resetPeak(labPid);
  const cpuBefore = cpuSecondsOf(labPid);
  const sampler = new MemorySampler(labPid);
  const sentAt = Date.now();
  const put = await new Upload({
    client: s3,
    params: { Bucket: endpoints.bucket, Key: key, Body: createReadStream(path), ContentLength: bytes },
    partSize: 16 * 1024 * 1024,
    queueSize: 4,
  }).done();
  const putMs = Date.now() - sentAt;
  console.log(`  PUT (multipart) done in ${seconds(putMs)}; waiting for ready...`);
  const record = (await settle(endpoints, new Set([key]), SETTLE_LIMIT_MS, () => {})).get(key)!;
  const labCpuS = cpuSecondsOf(labPid) - cpuBefore;
  const lab = labMemory(labPid, sampler);
  if (record.status !== 'ready') throw new CheckFailed(`${key}: ${record.status}: ${record.message ?? ''}`);
  if (record.runCount !== 1) throw new CheckFailed(`${key}: ${record.runCount} runs, expected 1`);
  const samples = samplesOf(await getJson<RunDetail>(endpoints, `/runs/${encodeURIComponent(record.runIds[0]!)}`));
  if (samples !== expectedSamples)
    throw new CheckFailed(`${key}: ${samples} samples stored, expected ${expectedSamples}`);
  return {
    key,
    eTag: put.ETag ?? '',
    putMs,
    readyMs: Date.parse(record.updatedAt) - sentAt,
    lab,
    peakWasReset,
    labCpuS,
  };
}

async function runIngestPath(
  scratch: string,
  endpoints: LabEndpoints,
  big: BigResult,
  bytes: number,
  expectedSamples: number,
): Promise<RunnerRun> {
  const started = performance.now();
  const bundle = await bundleIngestRunner();
  console.log(`  bundled ${rel(bundle)} (${(performance.now() - started).toFixed(0)} ms)`);
  await createRunnerTable(endpoints, RUNNER_TABLE);
  const record: S3EventRecordInput = {
    eventName: 'ObjectCreated:CompleteMultipartUpload',
    bucket: endpoints.bucket,
    key: big.key,
    size: bytes,
    eTag: big.eTag,
    sequencer: sequencerGenerator()(),
  };
  let run: RunnerRun;
  try {
    run = await runIngestRunner(bundle, scratch, endpoints, RUNNER_TABLE, record);
  } catch (error) {
    throw new CheckFailed((error as Error).message);
  }
  const { result, processMs } = run;
  const credentials = LAB_CREDENTIALS;

  // What it wrote: the upload ready, one run with every sample.
  const store: ReadStore = {
    db: createDocumentClient({ region: endpoints.region, dynamodbEndpoint: endpoints.dynamodbEndpoint, credentials }),
    tableName: RUNNER_TABLE,
  };
  try {
    const [upload] = await listUploads(store, { limit: 10 });
    if (upload?.status !== 'ready' || upload.runCount !== 1)
      throw new CheckFailed(`the ingest runner's upload record: ${JSON.stringify(upload)}`);
    const detail = await getRun(store, upload.runIds[0]!);
    const samples = detail ? samplesOf(detail) : 0;
    if (samples !== expectedSamples)
      throw new CheckFailed(`the ingest runner stored ${samples} samples, expected ${expectedSamples}`);
  } finally {
    store.db.destroy();
  }
  return { result, processMs };
}

// ---------------------------------------------------------------- main

/** The mixed upload set and the big log, generated or reused. */
async function prepareInputs(): Promise<{ mix: Awaited<ReturnType<typeof ensureMix>>; big: GeneratedLog }> {
  let started = performance.now();
  const mix = await ensureMix(FILES);
  const mixBytes = mix.files.reduce((n, f) => n + f.bytes, 0);
  const kinds = new Map<string, number>();
  for (const f of mix.files) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);
  const samples = count(mix.files.reduce((n, f) => n + f.expectedSamples, 0));
  const byKind = [...kinds].map(([k, n]) => `${k} ${n}`).join(', ');
  console.log(
    `mixed set: ${mix.reused ? 'reusing' : 'generated'} ${rel(mix.dir)} ` +
      `(${mix.files.length} files, ${megabytes(mixBytes)}, ${samples} samples; ${byKind}` +
      `${mix.reused ? '' : `; ${seconds(performance.now() - started)}`})`,
  );
  started = performance.now();
  const big = ensureLog('solaris', BIG_BYTES);
  console.log(
    `big log: ${big.reused ? 'reusing' : 'generated'} ${rel(big.path)} ` +
      `(${megabytes(big.bytes)}, ${big.reports} reports x ${big.devices} devices` +
      `${big.reused ? '' : `, ${seconds(performance.now() - started)}`})`,
  );
  return { mix, big };
}

async function startLab(scratch: string): Promise<LabProcess> {
  const started = performance.now();
  const lab = await LabProcess.start({
    dataDir: join(scratch, 'lab'),
    fresh: true,
    args: ['--no-samples'],
    env: clientEnv(scratch),
    timeoutMs: 120_000,
  });
  const endpoints = lab.endpoints;
  console.log(
    `lab: pid ${lab.pid}, ready in ${seconds(performance.now() - started)}; ` +
      `S3 ${endpoints.s3Endpoint}, API ${endpoints.apiUrl}`,
  );
  return lab;
}

/** Each phase's figures, for the summary. */
interface Phases {
  mix: MixResult;
  big: BigResult;
  runner: RunnerRun;
}

async function runPhases(
  scratch: string,
  lab: LabProcess,
  inputs: Awaited<ReturnType<typeof prepareInputs>>,
): Promise<Phases> {
  const { mix, big } = inputs;
  const endpoints = lab.endpoints;
  const bigSamples = big.reports * big.devices;
  const s3 = createS3Client({
    region: endpoints.region,
    s3Endpoint: endpoints.s3Endpoint,
    credentials: LAB_CREDENTIALS,
  });
  console.log(`\n1. ${mix.files.length} files at concurrency ${CONCURRENCY}`);
  const m = await uploadMix(s3, endpoints, mix.files, mix.dir, lab.pid);
  console.log(
    `  all ready: ${m.runs} runs, ${count(m.samples)} samples (as uploaded); ` +
      `lab CPU ${m.labCpuS.toFixed(1)} s over ${seconds(m.windowMs)}`,
  );
  console.log(`\n2. the ${megabytes(big.bytes)} log through the lab`);
  const b = await uploadBig(s3, endpoints, big.path, big.bytes, bigSamples, lab.pid);
  console.log(
    `  ready after ${seconds(b.readyMs)}, ${count(bigSamples)} samples (as uploaded); ` +
      `lab CPU ${b.labCpuS.toFixed(1)} s, lab peak RSS ${b.lab.peakMB.toFixed(0)} MB` +
      `${b.peakWasReset ? '' : ' (since the lab started: clear_refs not writable)'}`,
  );
  s3.destroy();
  console.log(`\n3. the ingest path alone on the same object (ingest handler in a plain node process)`);
  const r = await runIngestPath(scratch, endpoints, b, big.bytes, bigSamples);
  const sampled = r.result.rssSamplesKiB;
  console.log(
    `  handler ${seconds(r.result.ms)} (CPU ${seconds(r.result.cpuMs)}; ` +
      `process ${seconds(r.processMs)} spawn to exit), ` +
      `peak RSS ${kibToMB(r.result.rss.peakKiB).toFixed(1)} MB ${r.result.rss.source}; RSS sampled while ingesting: ` +
      `median ${kibToMB(median(sampled)).toFixed(0)} MB, max ${kibToMB(Math.max(...sampled)).toFixed(0)} MB`,
  );
  return { mix: m, big: b, runner: r };
}

const heading = (text: string): string[] => [text, '', '', ''];
const figure = (text: string, value: string): string[] => [text, value, '', ''];

function mixRows(m: MixResult): string[][] {
  const perSecond = m.windowMs / 1000;
  return [
    heading(
      `${m.files} files, ${megabytes(m.bytes)} ` +
        `(${(MIN_BYTES / 1000).toFixed(0)} KB-${(MAX_BYTES / MB).toFixed(0)} MB), concurrency ${CONCURRENCY}`,
    ),
    figure('  files/s (first PUT sent to last ready)', (m.files / perSecond).toFixed(1)),
    figure('  samples/s', count(Math.round(m.samples / perSecond))),
    figure('  MB/s', (m.bytes / MB / perSecond).toFixed(2)),
    figure('  PUT to ready, p50', seconds(percentile(m.latenciesMs, 50))),
    figure('  PUT to ready, p99', seconds(percentile(m.latenciesMs, 99))),
    figure('  lab process CPU time meanwhile', seconds(m.labCpuS * 1000)),
    figure('  lab process peak RSS (dynalite + s3rver + handler)', `${m.lab.peakMB.toFixed(0)} MB`),
    figure(
      '    largest anonymous / file-backed part (sampled)',
      `${m.lab.anonMB.toFixed(0)} / ${m.lab.fileMB.toFixed(0)} MB`,
    ),
  ];
}

function bigRows(log: GeneratedLog, b: BigResult, r: RunnerRun, rssMet: boolean): string[][] {
  return [
    heading(
      `${megabytes(log.bytes)} Solaris iostat -xn log ` +
        `(${log.devices} devices, ${count(log.reports * log.devices)} samples)`,
    ),
    figure('  PUT to ready, through the lab', seconds(b.readyMs)),
    figure('  lab process CPU time meanwhile', seconds(b.labCpuS * 1000)),
    figure('  lab process peak RSS meanwhile', `${b.lab.peakMB.toFixed(0)} MB`),
    figure(
      '    largest anonymous / file-backed part (sampled)',
      `${b.lab.anonMB.toFixed(0)} / ${b.lab.fileMB.toFixed(0)} MB`,
    ),
    figure('  ingest path alone: handler wall time / CPU time', `${seconds(r.result.ms)} / ${seconds(r.result.cpuMs)}`),
    [
      '  ingest path alone: peak RSS (VmHWM)',
      `${kibToMB(r.result.rss.peakKiB).toFixed(1)} MB`,
      `<= ${RSS_TARGET_MB} MB`,
      rssMet ? 'met' : 'NOT met',
    ],
  ];
}

/** The figures, and the targets they miss (none: all met). */
function printSummary(log: GeneratedLog, phases: Phases): string[] {
  const runnerPeakMB = kibToMB(phases.runner.result.rss.peakKiB);
  const rssMet = runnerPeakMB <= RSS_TARGET_MB;
  const rows = [
    ['figure', 'value', 'target', ''],
    ...mixRows(phases.mix),
    ...bigRows(log, phases.big, phases.runner, rssMet),
  ];
  console.log('\nwall clock on this machine (CPU times show how much of it the processes got); 1 MB = 10^6 bytes:\n');
  console.log(table(rows, (c) => c === 1 || c === 2));
  return rssMet ? [] : [`ingest path peak RSS ${runnerPeakMB.toFixed(0)} MB > ${RSS_TARGET_MB} MB`];
}

async function main(): Promise<number> {
  const benchStarted = performance.now();
  console.log('benchdrop ingest benchmark (npm run bench:ingest)');
  console.log(
    `machine: ${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}), ` +
      `${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM; node ${process.version}`,
  );
  console.log(`load average at start: ${loadAverage()} (other processes on this machine share its CPUs)`);
  const inputs = await prepareInputs();
  const scratch = await mkdtemp(join(tmpdir(), 'benchdrop-bench-ingest-'));
  let lab: LabProcess | undefined;
  let failed = false;
  const missed: string[] = [];
  try {
    lab = await startLab(scratch);
    missed.push(...printSummary(inputs.big, await runPhases(scratch, lab, inputs)));
  } catch (error) {
    failed = true;
    if (error instanceof CheckFailed) console.log(`\nCHECK FAILED: ${error.message}`);
    else console.log(`\nFAILED: ${(error as Error).stack ?? String(error)}${lab ? `\n${lab.output(3000)}` : ''}`);
  } finally {
    if (lab) {
      const stopped = await lab.stop();
      if (stopped.killed) console.log('note: the lab did not stop on SIGTERM and was killed');
    }
    await rm(scratch, { recursive: true, force: true });
  }
  if (!failed) {
    // After the lab: nothing else of this bench runs beside the two paths.
    try {
      const times = await compareIngestPaths(inputs.big);
      if (!printPathTimes(times))
        missed.push(`time to ready ${(times.oldSeconds / times.newSeconds).toFixed(2)}x < ${TARGET_SPEEDUP}x`);
      // One line for both targets, as bench/all.ts collects it.
      console.log(`\ntargets: ${missed.length === 0 ? 'all met' : `NOT met: ${missed.join('; ')}`}`);
    } catch (error) {
      failed = true;
      console.log(`\nFAILED (time to ready, new and old path): ${(error as Error).stack ?? String(error)}`);
    }
  }
  console.log(`load average at end: ${loadAverage()}; bench:ingest took ${seconds(performance.now() - benchStarted)}`);
  if (failed) console.log('\nbench FAILED: see above');
  return failed ? 1 : 0;
}

process.exitCode = await main();
