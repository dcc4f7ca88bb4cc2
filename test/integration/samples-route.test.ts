/**
 * GET /runs/{id}/samples through the local lab (infra/local/lab.ts): logs are
 * put into the lab's drop bucket, the lab's own queue and ingest handler write
 * each run's samples object into its results bucket, and the route, over HTTP
 * through the lab's API front, reads them back: every series of every run, for
 * every metric, is what the parser gives for the same text. A generated log of
 * more than two row groups per series pages across them; bad requests answer
 * 400 or 404 saying what to do; and the route, like every route, is deployed
 * behind IAM (SigV4) authorisation.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../harness/quiet.ts';
import { writeIostatLog } from '../../bench/generate.ts';
import { LAB_BUCKET, startLab, type Lab } from '../../infra/local/lab.ts';
import { MAX_SAMPLES, type ApiError, type RunSamples, type UploadsPage } from '../../shared/api.ts';
import { createDocumentClient, createS3Client } from '../../shared/aws.ts';
import { LAB_CREDENTIALS } from '../../shared/config.ts';
import { IOSTAT_METRICS, METRICS, type IostatMetric } from '../../shared/metrics.ts';
import type { IostatRun, IostatSeries, Run } from '../../shared/model.ts';
import { parseStream } from '../../shared/parsers/index.ts';
import { runPk, RUN_META_SK } from '../../shared/store/keys.ts';
import { ROW_GROUP_SAMPLES, SAMPLES_PREFIX } from '../../shared/store/samples-schema.ts';
import { ROUTES } from '../../shared/api.ts';
import { labSettings } from '../../infra/settings.ts';
import { getAtt, resources, roleGrants, synthLabs } from '../infra/synth.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');
/** Linux (two runs in one file), Solaris with `-T d` times, and an IRIX diskperf run (no samples). */
const LOGS = {
  linux: 'linux/linux-sysstat-12.2.0-x-two-runs.txt',
  solaris: 'solaris/solaris-10-xn-Td.iostat.txt',
  irix: 'irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt',
} as const;
/** Reports per series in the generated log: more than two row groups. */
const LONG_REPORTS = 2 * ROW_GROUP_SAMPLES + 500;

const dir = mkdtempSync(join(tmpdir(), 'benchdrop-samples-'));
let lab: Lab;
/** Each uploaded key's runs as the parser reads the text, and the ids the lab stored them under. */
const stored = new Map<string, { runs: Run[]; ids: string[] }>();

beforeAll(async () => {
  lab = await startLab({
    dataDir: join(dir, 'lab'),
    fresh: true,
    samples: false,
    s3Port: 0,
    apiPort: 0,
    log: () => {},
  });
  const long = join(dir, 'long.iostat.txt');
  // Solaris rows are about 70 bytes: 3 disks and 2 header lines a report.
  writeIostatLog('solaris', long, LONG_REPORTS * 330, { devices: 3 });
  const uploads: [string, Buffer][] = [
    ...Object.values(LOGS).map((file): [string, Buffer] => [`box/${file}`, readFileSync(join(FIXTURES, file))]),
    ['long/long.iostat.txt', readFileSync(long)],
  ];
  const s3 = createS3Client({ s3Endpoint: lab.endpoints.s3Endpoint, credentials: LAB_CREDENTIALS });
  for (const [key, body] of uploads) await s3.send(new PutObjectCommand({ Bucket: LAB_BUCKET, Key: key, Body: body }));
  await lab.idle();
  const listed = await get<UploadsPage>('/uploads?limit=100');
  for (const [key, body] of uploads) {
    const upload = listed.body.uploads.find((u) => u.key === key);
    expect(upload?.status, `${key}: ${upload?.message ?? ''}`).toBe('ready');
    stored.set(key, { runs: await parsed(body, key), ids: upload!.runIds });
  }
}, 180_000);

afterAll(async () => {
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function parsed(body: Buffer, source: string): Promise<Run[]> {
  const runs: Run[] = [];
  await parseStream([body], { source, onRun: (run) => runs.push(run) });
  return runs;
}

async function get<T>(path: string): Promise<{ status: number; body: T }> {
  const answer = await fetch(`${lab.endpoints.apiUrl}${path}`);
  return { status: answer.status, body: (await answer.json()) as T };
}

const samplesPath = (id: string, query: Record<string, string | number>) =>
  `/runs/${id}/samples?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`;

/** The route's answer for one page; the test fails on anything but a 200. */
async function page(id: string, query: Record<string, string | number>): Promise<RunSamples> {
  const answer = await get<RunSamples | ApiError>(samplesPath(id, query));
  expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200);
  return answer.body as RunSamples;
}

/** Every page, following `next`, joined into one answer (which has no `next`). */
async function allPages(id: string, series: string, metric: string, limit: number): Promise<RunSamples> {
  const first = await page(id, { series, metric, limit });
  const joined = { ...first, next: undefined as string | undefined };
  for (let next = first.next; next !== undefined;) {
    const more = await page(id, { series, metric, limit, next });
    expect(more.reports.length).toBeGreaterThan(0);
    for (const column of ['reports', 'times', 'sinceBoot', 'values'] as const)
      (joined[column] as unknown[]).push(...more[column]);
    next = more.next;
  }
  delete joined.next;
  return joined;
}

/** What the route answers for a series, from the parser's own samples. */
function expected(runId: string, series: IostatSeries, metric: IostatMetric): RunSamples {
  const samples = series.samples!;
  return {
    run: runId,
    series: series.device,
    metric,
    unit: METRICS[metric].unit,
    reports: samples.map((s) => s.report),
    times: samples.map((s) => s.time ?? null),
    sinceBoot: samples.map((s) => s.sinceBoot),
    values: samples.map((s) => s.values[metric] ?? null),
  };
}

const iostatRuns = (key: string) =>
  stored.get(key)!.runs.map((run, i) => ({ run: run as IostatRun, id: stored.get(key)!.ids[i]! }));

describe('GET /runs/{id}/samples answers what the parser read', () => {
  it('every series of every run, for every metric, in one page each', async () => {
    for (const key of [`box/${LOGS.linux}`, `box/${LOGS.solaris}`]) {
      const runs = iostatRuns(key);
      expect(runs.length).toBeGreaterThan(0);
      for (const { run, id } of runs)
        for (const series of run.series)
          for (const metric of IOSTAT_METRICS)
            expect(await page(id, { series: series.device, metric }), `${key} ${series.device} ${metric}`).toEqual(
              expected(id, series, metric),
            );
    }
  });

  it('names a series by its label too, and answers its native name', async () => {
    const [{ run, id }] = iostatRuns(`box/${LOGS.solaris}`);
    const series = run!.series[0]!;
    const byLabel = await page(id!, { series: `box/${series.device}`, metric: 'util_pct' });
    expect(byLabel).toEqual(expected(id!, series, 'util_pct'));
  });

  it('times are null where the log prints none, values null where the platform prints no such metric', async () => {
    const [{ run, id }] = iostatRuns(`box/${LOGS.solaris}`);
    // Solaris prints no per-direction latency: read_ms is null in every sample.
    const answer = await page(id!, { series: run!.series[0]!.device, metric: 'read_ms' });
    expect(answer.values.every((v) => v === null)).toBe(true);
    expect(answer.reports.length).toBe(run!.series[0]!.sampleCount);
    const [linux] = iostatRuns(`box/${LOGS.linux}`);
    const times = (await page(linux!.id, { series: linux!.run.series[0]!.device, metric: 'iops' })).times;
    expect(times).toEqual(linux!.run.series[0]!.samples!.map((s) => s.time ?? null));
  });
});

describe('paging', () => {
  const longRun = () => iostatRuns('long/long.iostat.txt')[0]!;

  it('a series of more than two row groups reads whole at the largest limit and equals the parser', async () => {
    const { run, id } = longRun();
    expect(run.reports).toBeGreaterThan(2 * ROW_GROUP_SAMPLES);
    for (const series of run.series) {
      const whole = await page(id, { series: series.device, metric: 'service_ms', limit: MAX_SAMPLES });
      expect(whole.next).toBeUndefined();
      expect(whole).toEqual(expected(id, series, 'service_ms'));
    }
  });

  it('pages joined are the one read, at limits that do and do not divide a row group', async () => {
    const { run, id } = longRun();
    const series = run.series[1]!.device;
    const whole = await page(id, { series, metric: 'write_kBps', limit: MAX_SAMPLES });
    for (const limit of [1000, 4096, 3333]) expect(await allPages(id, series, 'write_kBps', limit)).toEqual(whole);
    // The default limit (10,000) is one page here short of the whole series: two pages.
    const first = await page(id, { series, metric: 'write_kBps' });
    expect(first.reports).toHaveLength(Math.min(10_000, whole.reports.length));
  });

  it('a page ending exactly at the last sample has no next', async () => {
    const { run, id } = longRun();
    const series = run.series[0]!;
    const answer = await page(id, { series: series.device, metric: 'iops', limit: series.sampleCount });
    expect(answer.reports).toHaveLength(series.sampleCount);
    expect(answer.next).toBeUndefined();
  });

  it("a cursor is good for its run, series and metric only, whatever the limit; another's is a 400", async () => {
    const { run, id } = longRun();
    const [a, b] = run.series;
    const first = await page(id, { series: a!.device, metric: 'iops', limit: 10 });
    const second = await page(id, { series: a!.device, metric: 'iops', limit: 5, next: first.next! });
    expect(second.reports).toEqual(a!.samples!.slice(10, 15).map((s) => s.report));
    for (const other of [
      { series: b!.device, metric: 'iops' },
      { series: a!.device, metric: 'util_pct' },
    ]) {
      const refused = await get<ApiError>(samplesPath(id, { ...other, next: first.next! }));
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toMatch(
        /^next: a cursor of this listing asked with another run, series or metric/,
      );
    }
    // A listing's cursor is no samples cursor, and the message says whose it is.
    const listing = (await get<{ next?: string }>('/runs?limit=1')).body.next!;
    const misplaced = await get<ApiError>(samplesPath(id, { series: a!.device, metric: 'iops', next: listing }));
    expect(misplaced.body.error.message).toMatch(/^next: a cursor of GET \/runs, not of GET \/runs\/\{id\}\/samples/);
    const junk = await get<ApiError>(samplesPath(id, { series: a!.device, metric: 'iops', next: 'bm90LWEtY3Vyc29y' }));
    expect(junk.status).toBe(400);
    expect(junk.body.error.message).toMatch(/^next: not a cursor of GET \/runs\/\{id\}\/samples/);
  });
});

describe('what it cannot answer says why', () => {
  const solaris = () => iostatRuns(`box/${LOGS.solaris}`)[0]!;

  async function refused(path: string, status: number): Promise<string> {
    const answer = await get<ApiError>(path);
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    return answer.body.error.message;
  }

  it('a bad or unknown run id', async () => {
    expect(await refused(samplesPath('nope', { series: 'sd0', metric: 'iops' }), 400)).toMatch(/^id: /);
    const unknown = `r${'0'.repeat(solaris().id.length - 1)}`;
    expect(await refused(samplesPath(unknown, { series: 'sd0', metric: 'iops' }), 404)).toBe(
      `run ${unknown} does not exist (or is still being written)`,
    );
  });

  it('a series the run does not have: a 404 naming it and the ones it has', async () => {
    const { run, id } = solaris();
    const message = await refused(samplesPath(id, { series: 'sdz', metric: 'iops' }), 404);
    expect(message).toBe(`series: run ${id} has no series "sdz"; it has ${run.series.map((s) => s.device).join(', ')}`);
  });

  it('a metric that is not an iostat one: a 400 listing them', async () => {
    const { run, id } = solaris();
    const message = await refused(samplesPath(id, { series: run.series[0]!.device, metric: 'fwd_wt' }), 400);
    expect(message).toBe(`metric: expected one iostat metric: ${IOSTAT_METRICS.join(', ')} (got "fwd_wt")`);
  });

  it('a missing series or metric, a bad limit, an unknown parameter: a 400 saying what is allowed', async () => {
    const { run, id } = solaris();
    const series = run.series[0]!.device;
    expect(await refused(samplesPath(id, { metric: 'iops' }), 400)).toMatch(
      /^series: required; expected a series of the run: its native name/,
    );
    expect(await refused(samplesPath(id, { series }), 400)).toMatch(/^metric: required; expected one iostat metric/);
    for (const limit of ['0', String(MAX_SAMPLES + 1), 'abc', '2.5'])
      expect(await refused(samplesPath(id, { series, metric: 'iops', limit }), 400)).toBe(
        `limit: expected a whole number from 1 to ${MAX_SAMPLES} (got ${JSON.stringify(limit)})`,
      );
    expect(await refused(samplesPath(id, { series, metric: 'iops', device: 'x' }), 400)).toBe(
      'device: unknown parameter; expected series, metric, limit, next',
    );
  });

  it('a diskperf run has no samples', async () => {
    const id = stored.get(`box/${LOGS.irix}`)!.ids[0]!;
    expect(await refused(samplesPath(id, { series: 'sd0', metric: 'iops' }), 404)).toMatch(
      new RegExp(`^run ${id} is a diskperf run: only iostat runs have samples`),
    );
  });

  it('a run stored before samples were kept: a 404 saying to upload it again', async () => {
    // Such a run's META names no samples object: take the name off one.
    const [{ run, id }] = iostatRuns(`box/${LOGS.linux}`).slice(1);
    const db = createDocumentClient({ dynamodbEndpoint: lab.endpoints.dynamodbEndpoint, credentials: LAB_CREDENTIALS });
    await db.send(
      new UpdateCommand({
        TableName: lab.endpoints.table,
        Key: { pk: runPk(id!), sk: RUN_META_SK },
        UpdateExpression: 'REMOVE samples',
      }),
    );
    expect(await refused(samplesPath(id!, { series: run!.series[0]!.device, metric: 'iops' }), 404)).toBe(
      `run ${id} was stored before samples were kept: upload box/${LOGS.linux} again (to the same key) to keep its samples`,
    );
  });
});

describe('deployed, the route is behind IAM like every other', () => {
  // The lab's front serves any request (it has no authentication: it binds loopback only);
  // in AWS, API Gateway refuses an unsigned request with a 403 before the function runs.
  it('its route requires SigV4 (AWS_IAM), and the API function may only read samples objects', () => {
    const synth = synthLabs([labSettings({ lab: 'alpha' })]);
    try {
      const { stack, template } = synth.labs['alpha']!;
      const id = (construct: { node: { defaultChild?: unknown } }) =>
        stack.getLogicalId(construct.node.defaultChild as Parameters<typeof stack.getLogicalId>[0]);
      const [, route] = resources(template, 'AWS::ApiGatewayV2::Route').find(
        ([, r]) => r.Properties!.RouteKey === ROUTES.samples,
      )!;
      expect(route.Properties!.AuthorizationType).toBe('AWS_IAM');
      const grants = roleGrants(template, id(stack.apiRole));
      const objects = (prefix: string) =>
        JSON.stringify({ 'Fn::Join': ['', [getAtt(id(stack.resultsBucket), 'Arn'), `/${prefix}*`]] });
      expect(grants[objects(SAMPLES_PREFIX)]).toEqual(['s3:GetObject']);
      expect(grants[objects('reports/')]).toEqual(['s3:GetObject', 's3:PutObject']);
    } finally {
      synth.dispose();
    }
  }, 120_000);
});
