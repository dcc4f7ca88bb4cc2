/**
 * Frozen reports through the local lab: POST /reports freezes the comparison
 * GET /compare answers (its JSON and a self-contained page, in the results
 * bucket, never the drop bucket), GET /reports/{id} serves both back byte for
 * byte after a later upload has changed the live comparison, `benchdrop compare
 * --share` prints the link, bad requests say what is wrong, and the page the
 * API function builds from its packaged bundle (as the stack bundles it) is the
 * page the lab builds.
 */
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { execSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../harness/quiet.ts';
import { runCli } from '../../cli/program.ts';
import { packagedReportRenderer } from '../../functions/api/report-page.ts';
import { LAB_BUCKET, LAB_RESULTS_BUCKET, startLab, type Lab } from '../../infra/local/lab.ts';
import { reportPageCommand } from '../../infra/report-page.ts';
import { renderFrozenReport } from '../../report/build.ts';
import type { ApiError, CreatedReport } from '../../shared/api.ts';
import { createS3Client } from '../../shared/aws.ts';
import type { Comparison } from '../../shared/comparison/index.ts';
import { LAB_CREDENTIALS } from '../../shared/config.ts';
import type { FrozenReport } from '../../shared/reports.ts';
import { captureOutput } from '../cli/fake-api.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');
const REDUX = 'irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt';
const QUERY = { a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync', metric: 'all' };

const dir = mkdtempSync(join(tmpdir(), 'benchdrop-reports-'));
let lab: Lab;

beforeAll(async () => {
  lab = await startLab({ dataDir: join(dir, 'lab'), fresh: true, s3Port: 0, apiPort: 0, log: () => {} });
  await lab.idle();
}, 120_000);

afterAll(async () => {
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown) {
  const answer = await fetch(`${lab.endpoints.apiUrl}${path}`, {
    method,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  return { status: answer.status, type: answer.headers.get('content-type') ?? '', text: await answer.text() };
}

const s3 = () => createS3Client({ s3Endpoint: lab.endpoints.s3Endpoint, credentials: LAB_CREDENTIALS });

describe('POST /reports and GET /reports/{id}', () => {
  let created: CreatedReport;
  let page: string;
  let frozen: string;

  it('freezes the comparison GET /compare answers, as a page and its JSON', async () => {
    const post = await call('POST', '/reports', QUERY);
    expect(post.status, post.text).toBe(201);
    created = JSON.parse(post.text) as CreatedReport;
    expect(created).toMatchObject({ path: `/reports/${created.id}`, query: QUERY });
    const html = await call('GET', created.path);
    expect(html.type).toBe('text/html; charset=utf-8');
    page = html.text;
    expect(page).toContain(`"frozen":{"id":"${created.id}"`);
    const json = await call('GET', `${created.path}?format=json`);
    frozen = json.text;
    const report = JSON.parse(frozen) as FrozenReport;
    expect(report.comparison.ratio).toBeCloseTo(1.9, 2);
    expect(report.comparison.a.runs).toBe(1);
  });

  it('keeps the report in the results bucket, never in the drop bucket', async () => {
    const listed = async (bucket: string) =>
      ((await s3().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'reports/' }))).Contents ?? []).map(
        (o) => o.Key,
      );
    expect(await listed(LAB_RESULTS_BUCKET)).toEqual(
      expect.arrayContaining([`reports/${created.id}.html`, `reports/${created.id}.json`]),
    );
    expect(await listed(LAB_BUCKET)).toEqual([]);
  });

  it('serves the report unchanged after an upload has changed the live comparison', async () => {
    await s3().send(
      new PutObjectCommand({
        Bucket: LAB_BUCKET,
        Key: 'again/redux-second-run.txt',
        Body: readFileSync(join(FIXTURES, REDUX)),
        Metadata: { device: 'scsi2sd_redux' },
      }),
    );
    await lab.idle();
    const live = JSON.parse((await call('GET', '/compare?a=scsi2sd_redux&b=scsi2sd_10M_Sync')).text) as Comparison;
    expect(live.a.runs).toBe(2);
    expect((await call('GET', created.path)).text).toBe(page);
    expect((await call('GET', `${created.path}?format=json`)).text).toBe(frozen);
  });

  it('says what is wrong with a bad id, an unknown report or a bad request', async () => {
    const message = (text: string) => (JSON.parse(text) as ApiError).error.message;
    const bad = await call('GET', '/reports/..%2Fsamples');
    expect(bad.status).toBe(400);
    expect(message(bad.text)).toMatch(/^id: 12 characters of/);
    const unknown = await call('GET', '/reports/AAAAAAAAAAAA');
    expect(unknown.status).toBe(404);
    expect(message(unknown.text)).toBe('report AAAAAAAAAAAA does not exist');
    const format = await call('GET', `${created.path}?format=pdf`);
    expect(format.status).toBe(400);
    expect(message(format.text)).toMatch(/^format/);
    const field = await call('POST', '/reports', { ...QUERY, colour: 'red' });
    expect(field.status).toBe(400);
    expect(message(field.text)).toMatch(/colour/);
    const selector = await call('POST', '/reports', { a: 'no_such_disk', b: 'scsi2sd_10M_Sync' });
    expect(selector.status).toBe(400);
    expect(message(selector.text)).toMatch(/no_such_disk/);
  });
});

describe('benchdrop compare --share', () => {
  it('prints the link of a frozen report that serves the comparison it printed', async () => {
    const output = captureOutput();
    const code = await runCli(
      ['compare', 'scsi2sd_redux', 'scsi2sd_10M_Sync', '--share', '--api', lab.endpoints.apiUrl],
      output.io,
      { env: {} },
    );
    expect(code, output.err).toBe(0);
    const line = output.out.split('\n').find((l) => l.startsWith('shared: '));
    expect(line).toMatch(/^shared: http:\/\/127\.0\.0\.1:\d+\/reports\/[1-9A-Za-z]{12} \(frozen /);
    const url = line!.split(' ')[1]!;
    const served = await fetch(`${url}?format=json`);
    expect(served.status).toBe(200);
    expect(((await served.json()) as FrozenReport).comparison.a.runs).toBe(2);
  });
});

describe('the API function packaged as the stack bundles it', () => {
  it('builds the same frozen page from its packaged bundle as the lab does', async () => {
    const out = join(dir, 'api-asset');
    mkdirSync(out, { recursive: true });
    execSync(reportPageCommand(ROOT, out), { stdio: 'pipe', timeout: 60_000 });
    const frozen: FrozenReport = {
      id: 'AAAAAAAAAAAA',
      createdAt: '2026-12-02T10:00:00.000Z',
      query: QUERY,
      comparison: JSON.parse((await call('GET', '/compare?a=scsi2sd_redux&b=scsi2sd_10M_Sync')).text) as Comparison,
    };
    const packaged = await packagedReportRenderer(pathToFileURL(`${out}/`))(frozen);
    expect(packaged).toBe(await renderFrozenReport(frozen));
  });

  it('says the bundle is missing when the function was not bundled with it', async () => {
    const empty = join(dir, 'no-asset');
    mkdirSync(empty, { recursive: true });
    const render = packagedReportRenderer(pathToFileURL(`${empty}/`));
    await expect(
      render({ id: 'x', createdAt: '', query: QUERY, comparison: {} as Comparison }) as Promise<string>,
    ).rejects.toThrow(/report page bundle .* is missing: bundle the API function with the stack/);
  });
});
