/**
 * devices, runs and compare against a real HTTP peer serving canned answers in
 * the shapes of shared/api.ts; the canned comparisons are the engine's own output
 * on the IRIX fixtures, so the table is checked against real numbers.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceEntry, RunListing } from '../../shared/api.ts';
import { compareSelections, diskperfObservation, type Comparison, type Observation } from '../../shared/compare.ts';
import type { DiskperfRun } from '../../shared/model.ts';
import { parseText } from '../../shared/parsers/index.ts';
import { runCli } from '../../cli/program.ts';
import { captureOutput, closedPort, startFakeApi, type FakeApi } from './fake-api.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');

async function diskperf(path: string): Promise<Observation> {
  const run = (await parseText(readFileSync(join(FIXTURES, path), 'utf8'), path)).runs[0] as DiskperfRun;
  return diskperfObservation(path, run.name, run.rows);
}

const DEVICES: DeviceEntry[] = [
  { label: 'scsi2sd_redux', format: 'diskperf', lastSeen: '2024-05-01T10:00:00.123Z' },
  { label: 'x4100-sas/c0t0d0', format: 'iostat', lastSeen: '2024-05-02T11:30:00Z' },
];

const RUNS: RunListing[] = [
  {
    runId: 'r-redux-0',
    device: 'scsi2sd_redux',
    format: 'diskperf',
    name: 'scsi2sd_redux',
    host: 'IRIS',
    time: '2020-04-03T21:10:13Z',
    tags: { interface: 'SCSI' },
    context: ['diskperf -W -n scsi2sd_redux -c 1G -t 60 /tmp/testpath'],
    source: { bucket: 'drop', key: 'scsi2sd/redux.txt', version: 'v1' },
  },
];

let api: FakeApi;
let redux: Comparison;
let same: Comparison;

beforeAll(async () => {
  redux = compareSelections([await diskperf('irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt')], [await diskperf('irix/irix-6.5-indy-scsi2sd-10M-sync.diskperf.txt')], {
    labels: { a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync' },
    selectors: { a: 'device=scsi2sd_redux', b: 'device=scsi2sd_10M_Sync' },
  });
  const obs = (runId: string, iops: number, service: number): Observation => ({ runId, device: 'x4100/c0t0d0', format: 'iostat', values: { iops, service_ms: service }, samples: 10 });
  same = compareSelections([obs('a1', 100, 5), obs('a2', 130, 4)], [obs('b1', 120, 4.5), obs('b2', 105, 4.2)], { labels: { a: 'tuned', b: 'stock' } });
  api = await startFakeApi({
    'GET /devices': { body: { devices: DEVICES } },
    'GET /runs': (request) =>
      request.query['format'] === 'iostat' ? { body: { runs: [] } } : request.query['device'] === '[' ? { status: 400, body: { error: { code: 'BadRequest', message: 'device: "[" is not a valid glob' } } } : { body: { runs: RUNS } },
    'GET /compare': (request) => {
      if (request.query['a'] === 'nosuch') return { status: 404, body: { error: { code: 'NotFound', message: 'A (nosuch) matches no run' } } };
      if (request.query['a'] === 'tuned') return { body: same };
      return { body: redux };
    },
  });
});

afterAll(() => api?.close());

async function run(...args: string[]) {
  const output = captureOutput();
  const code = await runCli(args, output.io, { env: {} });
  return { code, out: output.out, err: output.err };
}

describe('compare', () => {
  it('prints a benchstat-like table for scsi2sd_redux vs scsi2sd_10M_Sync: 1.90 overall, per-metric geomeans, excluded points, the sentence last', async () => {
    const { code, out, err } = await run('compare', 'device=scsi2sd_redux', 'device=scsi2sd_10M_Sync', '--api', api.url);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(api.requests.at(-1)).toMatchObject({ method: 'GET', path: '/compare', query: { a: 'device=scsi2sd_redux', b: 'device=scsi2sd_10M_Sync', metric: 'all' } });
    const lines = out.split('\n');
    expect(lines[0]).toBe('A: scsi2sd_redux (device=scsi2sd_redux): 1 run, diskperf');
    expect(out).toMatch(/^metric\s+req_size\s+A MB\/s\s+B MB\/s\s+ratio$/m);
    // One row per paired point, a geomean per metric, the summary row with its note.
    expect(lines.filter((l) => /^(fwd|bwd|rnd)_(wt|rd)\s+\d+\s/.test(l))).toHaveLength(54);
    expect(out).toMatch(/^fwd_wt\s+geomean\s+\d\.\d\d\s+9 points, /m);
    const summary = lines.find((l) => /^all\s+geomean/.test(l))!;
    expect(summary).toMatch(/\s1\.90\s+54 points, 1\.11x-4\.41x; no interval: it needs at least 2 runs on each side/);
    expect(summary).not.toContain('~');
    expect(out).toContain('excluded (12 points):');
    expect(out).toMatch(/^ {2}fwd_wt at \d+: missing on B \(A \d+\.\d\d MB\/s\)$/m);
    expect(lines.at(-1)).toBe('scsi2sd_redux is 1.90x scsi2sd_10M_Sync on all (54 points, 1.11x-4.41x)');
    expect(lines.at(-1)).toBe(redux.sentence);
  });

  it('marks an insignificant difference with ~ and shows the interval', async () => {
    expect(same.significant).toBe(false);
    const { code, out } = await run('compare', 'tuned', 'stock', '--metric', 'all', '--api', api.url);
    expect(code).toBe(0);
    expect(out).toMatch(/^metric\s+A\s+B\s+unit\s+ratio$/m);
    expect(out).toMatch(/^iops\s+\S+\s+\S+\s+ops\/s\s+\d\.\d\d$/m);
    expect(out).toMatch(/^geomean\s+\d\.\d\d\s+~ not significant: 2 points, .*95% interval \d\.\d\dx-\d\.\d\dx$/m);
    expect(out).not.toContain('excluded');
    expect(out.split('\n').at(-1)).toMatch(/^~ no significant difference between tuned and stock/);
  });

  it('--json prints the API Comparison unchanged', async () => {
    const { code, out } = await run('compare', 'a', 'b', '--json', '--api', api.url);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual(JSON.parse(JSON.stringify(redux)));
  });

  it('an API error becomes `error: <message>` and exit code 1', async () => {
    const { code, out, err } = await run('compare', 'nosuch', 'b', '--api', api.url);
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toBe('error: A (nosuch) matches no run');
  });

  it('refuses an unknown --metric before asking the API', async () => {
    const before = api.requests.length;
    const { code, err } = await run('compare', 'a', 'b', '--metric', 'speed', '--api', api.url);
    expect(code).toBe(1);
    expect(err).toMatch(/^error: --metric speed: expected a group \(write, read, seq, random, all\) or a metric/);
    expect(api.requests.length).toBe(before);
  });
});

describe('devices and runs', () => {
  it('devices: a table of labels, formats and when last seen', async () => {
    const { code, out } = await run('devices', '--api', api.url);
    expect(code).toBe(0);
    expect(out.split('\n')).toEqual([
      'label             format    last seen',
      'scsi2sd_redux     diskperf  2024-05-01T10:00:00Z',
      'x4100-sas/c0t0d0  iostat    2024-05-02T11:30:00Z',
      '2 devices',
    ]);
    expect(JSON.parse((await run('devices', '--json', '--api', api.url)).out)).toEqual({ devices: DEVICES });
  });

  it('runs: filters go to the API; the table shows id, device, format, name/host, time and key', async () => {
    const { code, out } = await run('runs', '--device', 'scsi*', '--format', 'diskperf', '--api', `${api.url}/`);
    expect(code).toBe(0);
    expect(api.requests.at(-1)).toMatchObject({ path: '/runs', query: { device: 'scsi*', format: 'diskperf' } });
    expect(out.split('\n')).toEqual([
      'run id     device         format    name/host             time                  key',
      'r-redux-0  scsi2sd_redux  diskperf  scsi2sd_redux @ IRIS  2020-04-03T21:10:13Z  scsi2sd/redux.txt',
      '1 run',
    ]);
    expect((await run('runs', '--format', 'iostat', '--api', api.url)).out).toBe('no runs match format iostat');
  });

  it('a 400 from the API is printed as its message', async () => {
    const { code, err } = await run('runs', '--device', '[', '--api', api.url);
    expect(code).toBe(1);
    expect(err).toBe('error: device: "[" is not a valid glob');
  });

  it('BENCHDROP_API is the target when no flag names one', async () => {
    const output = captureOutput();
    expect(await runCli(['devices'], output.io, { env: { BENCHDROP_API: api.url } })).toBe(0);
    expect(output.out).toContain('scsi2sd_redux');
  });
});

describe('when the lab cannot be reached', () => {
  it('says which URL could not be reached and how to set the target', async () => {
    const port = await closedPort();
    const { code, err } = await run('devices', '--api', `http://127.0.0.1:${port}`);
    expect(code).toBe(1);
    expect(err).toMatch(new RegExp(`^error: could not reach the benchdrop API at http://127\\.0\\.0\\.1:${port} \\(from --api\\): ECONNREFUSED; is the lab running\\? Otherwise set the lab with --api URL \\(or BENCHDROP_API\\), or --stack NAME`));
  });

  it('says how to name a lab when none is named', async () => {
    const { code, err } = await run('runs');
    expect(code).toBe(1);
    expect(err).toBe('error: no lab API to talk to: set the lab with --api URL (or BENCHDROP_API), or --stack NAME (e.g. Benchdrop-mylab)');
  });

  it('a URL that is not a benchdrop API is named', async () => {
    const other = await startFakeApi({ 'GET /devices': { body: '<html>hello</html>' } });
    try {
      const { code, err } = await run('devices', '--api', other.url);
      expect(code).toBe(1);
      expect(err).toContain(`is ${other.url} a benchdrop API?`);
    } finally {
      await other.close();
    }
  });
});
