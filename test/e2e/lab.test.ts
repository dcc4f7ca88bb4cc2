/**
 * The local lab end to end, driven by real clients: `npm start`'s command line in
 * a child process (fresh data folder, free ports), uploads with the real AWS CLI
 * (a key with spaces, a .gz, a ~50 MB log that goes up as a multipart upload,
 * garbage, and a key that would leave the data folder, refused), the API over
 * plain HTTP, the benchdrop CLI as a child process, the ready-to-paste lines the
 * lab prints run through sh as printed, and a restart on the same data folder.
 * Nothing of the lab is imported or mocked here (only two constants: the longest
 * upload message and the formats a parse error lists).
 *
 * The tests run in order and build on each other. The big log takes the lab
 * ~20 s to ingest (dynalite's writes dominate), so the checks that do not need
 * it finished (the CLI's compare, the printed curl lines) run while it is ingested.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunDetail, UploadListing } from '../../shared/api.ts';
import type { Comparison } from '../../shared/compare.ts';
import { MAX_MESSAGE_LENGTH } from '../../shared/ingest/deps.ts';
import { SUPPORTED_FORMATS } from '../../shared/parsers/errors.ts';
import { solarisIostatLog, writeIops } from '../../harness/logs.ts';
import { clientEnv, explain, LabProcess, REPO_ROOT, run, type LabJson, type Ran } from '../../harness/processes.ts';
import {
  DEMO_FIO_DEPTHS,
  DEMO_FIO_DEVICES,
  DEMO_FIO_RWS,
  DEMO_FIO_SIZES,
  demoFioIops,
} from '../../harness/demo-fio.ts';

const FIXTURES = join(REPO_ROOT, 'test/fixtures');
const SPACES_FIXTURE = join(FIXTURES, 'linux/linux-sysstat-12.7.5-x.txt');
const GZ_FIXTURE = join(FIXTURES, 'linux/linux-sysstat-11.7.3-x.txt');
const CLI_FIXTURE = join(FIXTURES, 'solaris/solaris-10-xn.iostat.txt');
const PRINTED_LINE_FIXTURE = join(FIXTURES, 'freebsd/freebsd-14-x.iostat.txt');
const DEMO_KEYS = [
  'irix-indy-300G-10K.diskperf.txt',
  'irix-indy-scsi2sd-10M-sync.diskperf.txt',
  'irix-indy-scsi2sd-redux.diskperf.txt',
  ...[1, 2, 3].flatMap((n) => [`nvme-ssd/fio-sweep-${n}.json`, `sata-ssd/fio-sweep-${n}.json`]),
  'x4100/solaris-x4100-sas-maxcontig.iostat.txt',
];

/** One device, one report every 5 s: ~197 bytes a sample, 250,000 reports ~ 49 MB. */
const BIG_REPORTS = 250_000;
const BIG_DEVICE = 'c1t0d0';

const KEYS = {
  spaces: 'my disk/run 1.txt',
  gz: `sysstat-gz/${basename(GZ_FIXTURE)}.gz`,
  big: 'big-solaris/solaris-10-xn-50MB.iostat.txt',
  garbage: 'garbage/random.bin',
  cli: `cli-disk/${basename(CLI_FIXTURE)}`,
  printed: `mydisk/${basename(PRINTED_LINE_FIXTURE)}`,
};

let scratch: string;
let dataDir: string;
let lab: LabProcess | undefined;
let endpoints: LabJson;
let bigFile: string;
let bigSize: number;
/** What GET /uploads said once everything was ingested, for the restart. */
let settled: UploadListing[] = [];

const expectedRuns = async (fixture: string) =>
  (JSON.parse(await readFile(fixture.replace(/\.txt$/, '.expected.json'), 'utf8')) as { runs: unknown[] }).runs.length;

async function getJson<T>(path: string, api = endpoints.apiUrl): Promise<T> {
  const response = await fetch(`${api}${path}`);
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

const compareUrl = (a: string, b: string, metric = 'all') => `/compare?${new URLSearchParams({ a, b, metric })}`;

async function uploads(api = endpoints.apiUrl): Promise<UploadListing[]> {
  return (await getJson<{ uploads: UploadListing[] }>('/uploads?limit=500', api)).uploads;
}

/** The newest record of each key. */
function newest(list: readonly UploadListing[]): Map<string, UploadListing> {
  const byKey = new Map<string, UploadListing>();
  for (const u of list) {
    const seen = byKey.get(u.key);
    if (!seen || Date.parse(u.updatedAt) > Date.parse(seen.updatedAt)) byKey.set(u.key, u);
  }
  return byKey;
}

/** Polls GET /uploads until every key has a ready or failed record. */
async function settle(keys: readonly string[], timeoutMs: number): Promise<Map<string, UploadListing>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const byKey = newest(await uploads());
    const pending = keys.filter((k) => !['ready', 'failed'].includes(byKey.get(k)?.status ?? ''));
    if (pending.length === 0) return byKey;
    if (Date.now() > deadline) {
      const states = pending.map((k) => `${k}: ${byKey.get(k)?.status ?? 'no record'}`).join(', ');
      throw new Error(`not ingested within ${timeoutMs / 1000} s: ${states}\n${lab?.output()}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

function expectSuccess(ran: Ran): void {
  expect(ran.code, explain(ran)).toBe(0);
}

/** The AWS CLI as a user runs it against the lab. */
function aws(args: readonly string[], timeoutMs = 60_000): Promise<Ran> {
  return run('aws', ['--endpoint-url', endpoints.s3Endpoint, '--region', 'us-east-1', ...args], {
    env: clientEnv(scratch, { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' }),
    timeoutMs,
  });
}

function benchdrop(args: readonly string[]): Promise<Ran> {
  return run(process.execPath, ['bin/benchdrop.js', ...args], { env: clientEnv(scratch), timeoutMs: 60_000 });
}

/** The lab's environment: its ingest handler logs each event it gets (Powertools), nothing else changes. */
const labEnv = () =>
  clientEnv(scratch, {
    POWERTOOLS_LOG_LEVEL: 'INFO',
    POWERTOOLS_LOGGER_LOG_EVENT: 'true',
    POWERTOOLS_METRICS_DISABLED: 'true',
  });

describe('the local lab, driven by real clients', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'benchdrop-e2e-'));
    dataDir = join(scratch, 'lab');
    const version = await run('aws', ['--version'], { env: clientEnv(scratch), timeoutMs: 30_000 }).catch(
      (error: NodeJS.ErrnoException) => {
        throw new Error(
          error.code === 'ENOENT'
            ? "the AWS CLI (`aws`) is not on PATH: these tests upload with it. .ci/run installs Debian's awscli package; locally, `apt-get install awscli`."
            : `aws --version: ${error.message}`,
        );
      },
    );
    expectSuccess(version);

    const starting = LabProcess.start({ dataDir, fresh: true, env: labEnv(), timeoutMs: 60_000 });
    // Meanwhile (the lab is another process): the files to upload.
    try {
      await mkdir(join(scratch, 'upload'), { recursive: true });
      bigFile = join(scratch, 'upload', basename(KEYS.big));
      const big = solarisIostatLog({ reports: BIG_REPORTS, devices: [BIG_DEVICE], host: 'bighost' });
      bigSize = Buffer.byteLength(big);
      await writeFile(bigFile, big);
      await writeFile(join(scratch, 'upload', 'run 1.txt'), await readFile(SPACES_FIXTURE));
      await writeFile(join(scratch, 'upload', basename(KEYS.gz)), gzipSync(await readFile(GZ_FIXTURE)));
      const garbage = randomBytes(256 * 1024);
      // Not gzip's magic nor a UTF-16/UTF-8 byte-order mark: plain garbage.
      garbage[0] = 0x42;
      await writeFile(join(scratch, 'upload', 'random.bin'), garbage);
    } finally {
      lab = await starting;
    }
    endpoints = lab.endpoints;
  }, 120_000);

  afterAll(async () => {
    try {
      await lab?.stop();
    } finally {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    }
  }, 30_000);

  it('prints its endpoints, writes them to lab.json and has ingested the demo logs', async () => {
    expect(endpoints).toMatchObject({
      bucket: 'benchdrop-drop',
      resultsBucket: 'benchdrop-results',
      region: 'us-east-1',
      dataDir,
    });
    expect(endpoints.s3Endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(endpoints.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(endpoints.reportUrl).toBe(`${endpoints.apiUrl}/`);
    expect(lab!.printedLines(/^S3 endpoint /)).toEqual([
      expect.stringContaining(`${endpoints.s3Endpoint}  bucket benchdrop-drop`),
    ]);
    expect(lab!.printedLines(/^API /)).toEqual([`API          ${endpoints.apiUrl}`]);
    // The lab waits for the demo logs before it says ready.
    const demo = newest(await uploads());
    for (const key of DEMO_KEYS) expect(demo.get(key)?.status, `${key}\n${lab!.output()}`).toBe('ready');
  });

  it('takes uploads from the AWS CLI: a key with spaces, a .gz, a 50 MB multipart upload and garbage', async () => {
    const dir = join(scratch, 'upload');
    const results = await Promise.all([
      aws([
        's3',
        'cp',
        join(dir, 'run 1.txt'),
        `s3://${endpoints.bucket}/${KEYS.spaces}`,
        '--metadata',
        'device=mydisk',
        '--only-show-errors',
      ]),
      aws(['s3', 'cp', join(dir, basename(KEYS.gz)), `s3://${endpoints.bucket}/${KEYS.gz}`, '--only-show-errors']),
      // Above the CLI's 8 MB multipart threshold: CreateMultipartUpload, UploadPart x7, CompleteMultipartUpload.
      aws(['s3', 'cp', bigFile, `s3://${endpoints.bucket}/${KEYS.big}`, '--only-show-errors']),
      aws(['s3', 'cp', join(dir, 'random.bin'), `s3://${endpoints.bucket}/${KEYS.garbage}`, '--only-show-errors']),
    ]);
    for (const result of results) expectSuccess(result);
    expect(bigSize).toBeGreaterThan(45e6);
    // Stored byte for byte (no aws-chunked framing): what the CLI reads back is the file.
    const back = await aws(['s3', 'cp', `s3://${endpoints.bucket}/${KEYS.spaces}`, '-']);
    expectSuccess(back);
    expect(back.stdout).toBe(await readFile(SPACES_FIXTURE, 'utf8'));
  }, 60_000);

  it('refuses, over the AWS CLI, a key that would leave the data folder', async () => {
    const escape = '../../../x/escape.txt';
    const ran = await aws([
      's3api',
      'put-object',
      '--bucket',
      endpoints.bucket,
      '--key',
      escape,
      '--body',
      join(scratch, 'upload', 'run 1.txt'),
    ]);
    expect(ran.code, explain(ran)).not.toBe(0);
    expect(ran.stderr).toMatch(/InvalidArgument.*refused by the local lab \(no \. or \.\. path segments\)/s);
    // <data>/s3/<bucket>/../../../x is <scratch>/x: nothing there, nothing named escape.txt anywhere.
    expect(existsSync(join(scratch, 'x'))).toBe(false);
    const found = await run('find', [scratch, '-name', '*escape.txt*'], { env: clientEnv(scratch) });
    expect(found.stdout).toBe('');
  });

  it('answers `benchdrop compare` (the CLI as a child process) while it ingests', async () => {
    const ran = await benchdrop(['compare', 'scsi2sd_redux', 'scsi2sd_10M_Sync', '--api', endpoints.apiUrl]);
    expectSuccess(ran);
    expect(ran.stdout).toMatch(/scsi2sd_redux is 1\.90x scsi2sd_10M_Sync/);
  }, 60_000);

  it('prints curl lines that work as printed', async () => {
    const curls = lab!.printedLines(/^curl '/);
    const compareLine = curls.find((l) => l.includes('/compare?'));
    const uploadsLine = curls.find((l) => l.endsWith("/uploads'"));
    expect(compareLine, lab!.output()).toBeDefined();
    expect(uploadsLine, lab!.output()).toBeDefined();

    const compared = await run('sh', ['-c', `${compareLine!} --silent --show-error`], {
      env: clientEnv(scratch),
      timeoutMs: 30_000,
    });
    expectSuccess(compared);
    const comparison = JSON.parse(compared.stdout) as Comparison;
    expect(comparison.ratio?.toFixed(2)).toBe('1.90');

    const listed = await run('sh', ['-c', `${uploadsLine!} --silent --show-error`], {
      env: clientEnv(scratch),
      timeoutMs: 30_000,
    });
    expectSuccess(listed);
    const keys = (JSON.parse(listed.stdout) as { uploads: UploadListing[] }).uploads.map((u) => u.key);
    expect(keys).toEqual(expect.arrayContaining(DEMO_KEYS));
  }, 30_000);

  it('ingests what the AWS CLI uploaded: ready with its runs, or failed with a reason and a line', async () => {
    const byKey = await settle([KEYS.spaces, KEYS.gz, KEYS.big, KEYS.garbage], 45_000);

    const spaces = byKey.get(KEYS.spaces)!;
    expect(spaces, JSON.stringify(spaces)).toMatchObject({
      status: 'ready',
      device: 'mydisk',
      format: 'iostat',
      runCount: await expectedRuns(SPACES_FIXTURE),
    });

    const gz = byKey.get(KEYS.gz)!;
    expect(gz, JSON.stringify(gz)).toMatchObject({
      status: 'ready',
      device: 'sysstat-gz',
      format: 'iostat',
      runCount: await expectedRuns(GZ_FIXTURE),
    });

    const garbage = byKey.get(KEYS.garbage)!;
    expect(garbage.status, JSON.stringify(garbage)).toBe('failed');
    // The record's message is short and about the line, never the key (GET /uploads says the key itself);
    // `details` keeps the parser's whole text: the key, the line and the formats benchdrop reads.
    expect(garbage.line).toBeGreaterThanOrEqual(1);
    expect(garbage.message).toBe(
      `line ${garbage.line}: binary content (a NUL byte); expected a text log (plain or gzip-compressed)`,
    );
    expect(garbage.message).not.toContain(KEYS.garbage);
    expect(Array.from(garbage.message!).length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
    expect(garbage.details).toBe(
      `${KEYS.garbage}:${garbage.line}: binary content (a NUL byte); expected a text log (plain or gzip-compressed). benchdrop reads: ${SUPPORTED_FORMATS.join('; ')}.`,
    );
    expect(garbage.runCount).toBe(0);

    const big = byKey.get(KEYS.big)!;
    expect(big, JSON.stringify(big)).toMatchObject({
      status: 'ready',
      device: 'big-solaris',
      format: 'iostat',
      runCount: 1,
    });
    // The lab turned s3rver's completion of the multipart upload into the event S3 sends.
    const delivered = lab!.deliveredEvents();
    expect(
      delivered.filter((e) => e.key === KEYS.big),
      JSON.stringify(delivered),
    ).toEqual([expect.objectContaining({ eventName: 'ObjectCreated:CompleteMultipartUpload', size: bigSize })]);
    expect(delivered.find((e) => e.key === KEYS.spaces)?.eventName).toBe('ObjectCreated:Put');

    // Every report of the 50 MB made it, and the summary leaves out the since-boot one.
    const detail = await getJson<RunDetail>(`/runs/${encodeURIComponent(big.runIds[0]!)}`);
    expect(detail.run).toMatchObject({
      format: 'iostat',
      reports: BIG_REPORTS,
      context: [expect.stringContaining(`iostat -xn 5 ${BIG_REPORTS}`)],
    });
    expect(detail.series.map((s) => [s.device, s.sampleCount])).toEqual([[`big-solaris/${BIG_DEVICE}`, BIG_REPORTS]]);
    let sum = 0;
    for (let r = 1; r < BIG_REPORTS; r++) sum += writeIops(r, 0);
    const summary = detail.series[0]!.summary.write_iops!;
    expect(summary.count).toBe(BIG_REPORTS - 1);
    expect(summary.mean).toBeCloseTo(sum / (BIG_REPORTS - 1), 6);
  }, 60_000);

  it('compares the demo data over the API', async () => {
    const ratio = async (a: string, b: string, metric?: string) =>
      (await getJson<Comparison>(compareUrl(a, b, metric))).ratio;
    expect((await ratio('scsi2sd_redux', 'scsi2sd_10M_Sync'))?.toFixed(2)).toBe('1.90');
    expect((await ratio('scsi2sd_redux', '300G_10K_SGI_Indy'))?.toFixed(2)).toBe('0.39');
    expect(
      (
        await ratio('x4100/c0t0d0,context~tunefs -a 1 /opt', 'x4100/c0t0d0,context~tunefs -a 32 /opt', 'write_iops')
      )?.toFixed(1),
    ).toBe('71.0');
    // The fio sweeps: their model's ratio at every point, before each run's few percent of noise.
    const [nvme, sata] = DEMO_FIO_DEVICES;
    const modelled = DEMO_FIO_RWS.flatMap((rw) =>
      DEMO_FIO_DEPTHS.flatMap((qd) =>
        DEMO_FIO_SIZES.map((bs) => Math.log(demoFioIops(nvme!, rw, bs, qd) / demoFioIops(sata!, rw, bs, qd))),
      ),
    );
    const expected = Math.exp(modelled.reduce((s, x) => s + x, 0) / modelled.length);
    const fio = await getJson<Comparison>(compareUrl('nvme-ssd', 'sata-ssd'));
    expect(fio.points).toBe(80);
    expect(Math.abs(fio.ratio! / expected - 1)).toBeLessThan(0.02);
    expect(fio.ci!.label).toBe('95% interval over 3 runs a side');
    expect(fio.ci!.low).toBeLessThan(fio.ratio!);
    expect(fio.ci!.high).toBeGreaterThan(fio.ratio!);
  });

  it('takes `benchdrop upload --wait` (the CLI as a child process) and reports the upload ready', async () => {
    const ran = await benchdrop([
      'upload',
      CLI_FIXTURE,
      '--device',
      'cli-disk',
      '--tag',
      'interface=SATA',
      '--wait',
      '--api',
      endpoints.apiUrl,
      '--bucket',
      endpoints.bucket,
      '--endpoint',
      endpoints.s3Endpoint,
    ]);
    expectSuccess(ran);
    const runs = await expectedRuns(CLI_FIXTURE);
    expect(ran.stdout).toContain(`uploaded ${CLI_FIXTURE} -> s3://${endpoints.bucket}/${KEYS.cli}`);
    expect(ran.stdout).toMatch(new RegExp(`^ready ${KEYS.cli}: ${runs} runs?$`, 'm'));
    const listed = await getJson<{ runs: { device: string; tags: Record<string, string> }[] }>(
      '/runs?device=cli-disk*',
    );
    expect(listed.runs.length).toBeGreaterThan(0);
    for (const r of listed.runs) expect(r.tags).toEqual({ interface: 'SATA' });
  }, 60_000);

  it('prints an `aws s3 cp` line that works as printed', async () => {
    const lines = lab!.printedLines(/ s3 cp FILE /);
    expect(lines, lab!.output()).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER aws --endpoint-url \S+ --region us-east-1 s3 cp FILE s3:\/\/benchdrop-drop\/mydisk\/FILE --metadata device=mydisk$/,
    );
    // As a user would: in the folder of the log, FILE replaced by its name. The line brings its own credentials.
    const command = lines[0]!.replace(/\bFILE\b/g, basename(PRINTED_LINE_FIXTURE));
    const ran = await run('sh', ['-c', command], {
      cwd: dirname(PRINTED_LINE_FIXTURE),
      env: clientEnv(scratch),
      timeoutMs: 60_000,
    });
    expectSuccess(ran);
    const record = (await settle([KEYS.printed], 20_000)).get(KEYS.printed)!;
    expect(record, JSON.stringify(record)).toMatchObject({
      status: 'ready',
      device: 'mydisk',
      format: 'iostat',
      runCount: await expectedRuns(PRINTED_LINE_FIXTURE),
    });
    settled = await uploads();
  }, 60_000);

  it('stops on SIGTERM and starts again on the same data folder with everything still there', async () => {
    expect(settled.length).toBe(DEMO_KEYS.length + Object.keys(KEYS).length);
    const stopped = await lab!.stop();
    expect(stopped, lab!.output()).toEqual({ code: 0, signal: null, killed: false });
    expect(lab!.stdout).toMatch(/SIGTERM: stopping the lab\.\.\.\nstopped; nothing lost\.\n/);

    const labJson = join(dataDir, 'lab.json');
    await unlink(labJson);
    lab = await LabProcess.start({ dataDir, fresh: false, env: labEnv(), timeoutMs: 60_000 });
    expect(existsSync(labJson)).toBe(true);
    endpoints = lab.endpoints;
    expect(lab.printedLines(/^API /)).toEqual([`API          ${endpoints.apiUrl}`]);

    // Nothing was ingested again: the demo logs were found in the bucket, no event reached the handler.
    expect(lab.deliveredEvents()).toEqual([]);
    const after = await uploads();
    const summary = (list: readonly UploadListing[]) =>
      list.map((u) => `${u.key} ${u.version} ${u.status} ${u.runCount}`).sort();
    expect(summary(after)).toEqual(summary(settled));
    for (const key of DEMO_KEYS) expect(after.filter((u) => u.key === key)).toHaveLength(1);
    expect((await getJson<Comparison>(compareUrl('scsi2sd_redux', 'scsi2sd_10M_Sync'))).ratio?.toFixed(2)).toBe('1.90');
  }, 90_000);
});
