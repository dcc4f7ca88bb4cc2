/**
 * devices, runs and compare against a real HTTP peer serving canned answers in
 * the shapes of shared/api.ts; the canned comparisons are the engine's own output
 * on the IRIX fixtures, so the table is checked against real numbers.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceEntry, RunListing } from '../../shared/api.ts';
import {
  compareObservations,
  diskperfObservation,
  formatRatio,
  type Comparison,
  type Observation,
} from '../../shared/compare.ts';
import type { DiskperfRun } from '../../shared/model.ts';
import { parseText } from '../../shared/parsers/index.ts';
import { runCli } from '../../cli/program.ts';
import { DEFAULT_HOST, DEFAULT_PORTS } from '../../infra/local/options.ts';
import { captureOutput, closedPort, startFakeApi, type FakeApi } from './fake-api.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');

async function diskperf(path: string, runId = path, scale = 1): Promise<Observation> {
  const run = (await parseText(readFileSync(join(FIXTURES, path), 'utf8'), path)).runs[0] as DiskperfRun;
  // A run of the same disk a little faster or slower (scale), printed to diskperf's 0.01 MB/s.
  const rows = run.rows.map((r) => ({
    req_size: r.req_size,
    values: Object.fromEntries(Object.entries(r.values).map(([m, v]) => [m, Math.round(v! * scale * 100) / 100])),
  }));
  return diskperfObservation(runId, run.name, rows);
}

const REDUX = 'irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt';
const SYNC = 'irix/irix-6.5-indy-scsi2sd-10M-sync.diskperf.txt';
const HDD = 'irix/irix-6.5-indy-300G-10K.diskperf.txt';

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
    from: '2020-04-03T21:10:13Z',
    tags: { interface: 'SCSI' },
    context: ['diskperf -W -n scsi2sd_redux -c 1G -t 60 /tmp/testpath'],
    source: { bucket: 'drop', key: 'scsi2sd/redux.txt', version: 'v1' },
  },
  {
    runId: 'r-x4100-0',
    device: 'x4100',
    format: 'iostat',
    name: '',
    time: '2026-11-30T10:00:00Z',
    from: '2026-11-30T10:00:00Z',
    to: '2026-11-30T10:45:00Z',
    reports: 10,
    disks: 5,
    tags: { interface: 'SAS', rpm: '10000' },
    context: ['tunefs -a 32 /opt', 'dd if=/dev/zero of=/opt/q1 bs=1024k', 'iostat -xnz 5 2'],
    source: { bucket: 'drop', key: 'x4100/maxcontig.txt', version: 'v1' },
  },
];

let api: FakeApi;
/** The commands' working directory: an empty folder, so no lab.json of a lab running in the repository is found. */
let cwd: string;
let redux: Comparison;
let runs4: Comparison;
let hdd: Comparison;
let same: Comparison;
let disks: Comparison;
let disksRead: Comparison;

/** An iostat series of run `run` on one native device of a label. */
const series = (label: string, run: number, native: string, values: Observation['values']): Observation => ({
  runId: `${label}-${run}`,
  device: `${label}/${native}`,
  label,
  native,
  format: 'iostat',
  values,
  samples: 10,
});

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'benchdrop-cli-'));
  const labels = { a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync' };
  redux = compareObservations([await diskperf(REDUX)], [await diskperf(SYNC)], {
    labels,
    selectors: { a: 'device=scsi2sd_redux', b: 'device=scsi2sd_10M_Sync' },
  });
  // 4 runs a side: the same logs a few percent apart, as repeated runs of one disk are.
  runs4 = compareObservations(
    await Promise.all([1, 1.03, 0.97, 1.01].map((s, i) => diskperf(REDUX, `redux-${i}`, s))),
    await Promise.all([1, 0.98, 1.04, 0.99].map((s, i) => diskperf(SYNC, `sync-${i}`, s))),
    { labels },
  );
  hdd = compareObservations([await diskperf(REDUX)], [await diskperf(HDD)], {
    labels: { a: 'scsi2sd_redux', b: '300G_10K_SGI_Indy' },
  });
  const obs = (runId: string, reads: number, service: number): Observation => ({
    runId,
    device: 'x4100/c0t0d0',
    format: 'iostat',
    values: { read_iops: reads, service_ms: service },
    samples: 10,
  });
  same = compareObservations([obs('a1', 100, 5), obs('a2', 130, 4)], [obs('b1', 120, 4.5), obs('b2', 105, 4.2)], {
    labels: { a: 'tuned', b: 'stock' },
  });
  // Three disks a side paired by name, sdc idle on both; 3 runs each.
  const a: Observation[] = [];
  const b: Observation[] = [];
  for (const [run, j] of [0.97, 1, 1.03].entries()) {
    a.push(
      series('tuned', run, 'sda', { read_iops: 200 * j, read_ms: 4 / j }),
      series('tuned', run, 'sdb', { read_iops: 210 * j, read_ms: 4.2 }),
      series('tuned', run, 'sdc', { read_iops: 0, read_ms: 0 }),
    );
    b.push(
      series('stock', run, 'sda', { read_iops: 100 / j, read_ms: 8 * j }),
      series('stock', run, 'sdb', { read_iops: 105, read_ms: 8.1 * j }),
      series('stock', run, 'sdc', { read_iops: 0, read_ms: 0 }),
    );
  }
  disks = compareObservations(a, b, { labels: { a: 'tuned', b: 'stock' } });
  disksRead = compareObservations(a, b, { labels: { a: 'tuned', b: 'stock' }, metric: 'read_ms' });
  const canned: Record<string, Comparison> = { tuned: same, runs4, hdd, disks, 'disks-read': disksRead };
  api = await startFakeApi({
    'GET /devices': { body: { devices: DEVICES } },
    'GET /runs': (request) =>
      request.query['format'] === 'iostat'
        ? { body: { runs: [] } }
        : request.query['device'] === '['
          ? { status: 400, body: { error: { code: 'BadRequest', message: 'device: "[" is not a valid glob' } } }
          : { body: { runs: RUNS } },
    'GET /compare': (request) => {
      if (request.query['a'] === 'nosuch')
        return { status: 404, body: { error: { code: 'NotFound', message: 'A (nosuch) matches no run' } } };
      return { body: canned[request.query['a']!] ?? redux };
    },
  });
});

afterAll(async () => {
  await api?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

async function run(...args: string[]) {
  const output = captureOutput();
  const code = await runCli(args, output.io, { env: {}, cwd });
  return { code, out: output.out, err: output.err };
}

describe('compare', () => {
  /** The table's lines: from the column header to the summary row. */
  const tableOf = (out: string) => {
    const lines = out.split('\n');
    const from = lines.findIndex((l) => l.startsWith('metric '));
    return lines.slice(from, lines.indexOf('', from));
  };
  const x = (r: number) => `${formatRatio(r)}x`;
  const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  /** The sentence: the last of the notes, just above the runs' setups. */
  const sentenceOf = (out: string) => {
    const lines = out.split('\n');
    return lines[lines.findIndex((l) => l.startsWith('setups (')) - 2];
  };

  it('one run a side (scsi2sd_redux vs scsi2sd_10M_Sync): 1.90x, values as given, per-metric geomeans, no interval and why, the advice to run twice, the sentence, then the setups', async () => {
    const { code, out, err } = await run(
      'compare',
      'device=scsi2sd_redux',
      'device=scsi2sd_10M_Sync',
      '--api',
      api.url,
    );
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(api.requests.at(-1)).toMatchObject({
      method: 'GET',
      path: '/compare',
      query: { a: 'device=scsi2sd_redux', b: 'device=scsi2sd_10M_Sync', metric: 'all' },
    });
    const lines = out.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      'A: scsi2sd_redux (device=scsi2sd_redux): 1 run, diskperf',
      'B: scsi2sd_10M_Sync (device=scsi2sd_10M_Sync): 1 run, diskperf',
      'ratio: how many times better A is (A/B for throughput and IOPS, B/A for times)',
      '       queue lengths and %util (wait_queue, active_queue, util_pct) are only shown when asked by name with --metric',
    ]);
    const table = tableOf(out);
    // No interval: no interval column, no p, no `~`.
    expect(table[0]).toBe('metric  req size (bytes)  A MB/s  n A  B MB/s  n B  ratio  note');
    expect(table.join('\n')).not.toMatch(/[[~]/);
    // One row per paired point, the values as the API gives them (5, not 5.00; 4.5, not 4.50).
    expect(table.filter((l) => /^(fwd|bwd|rnd)_(wt|rd)\s+\d+\s/.test(l))).toHaveLength(54);
    expect(table).toContain('fwd_wt            131072       5    1    4.48    1  1.12x');
    expect(table).toContain('fwd_wt           1048576    5.73    1     4.5    1  1.27x');
    // A geomean row: each side's geometric mean over the metric's points, their ratio the metric's.
    expect(table).toContain(`fwd_wt           geomean   4.031        2.635       1.53x  9 points, 1.12x-2.25x`);
    expect(table.at(-1)).toBe(
      `all              geomean   3.564        1.872       1.90x  54 points, 1.11x-4.41x; ${redux.ciNote}`,
    );
    expect(redux.ciNote).toMatch(/^no interval: it needs at least 2 runs on each side \(A has 1 run, B has 1 run\)/);
    expect(out).toContain('excluded (12 points):');
    expect(out).toContain('\n  fwd_wt at 2097152: missing on B (A 5.54 MB/s)\n');
    expect(out).not.toContain('notes:');
    expect(out).toContain(`\nruns needed: ${redux.advice!.note}\n`);
    expect(redux.advice!.note).toMatch(/^run each device at least twice on each side/);
    expect(out).toContain('\nrnd_rd (MB/s, higher is better): scsi2sd_redux is 2.68x scsi2sd_10M_Sync\n');
    expect(sentenceOf(out)).toBe('scsi2sd_redux is 1.90x scsi2sd_10M_Sync on all (54 points, 1.11x-4.41x)');
    expect(sentenceOf(out)).toBe(redux.sentence);
    expect(out).toContain('\nsetups (2 runs; the runs share every setup field):\n');
  });

  it('4 runs a side: every ratio with its interval, the geomeans with theirs, the summary naming what the interval is over, how many runs would resolve 5%', async () => {
    const { code, out } = await run('compare', 'runs4', 'b', '--api', api.url);
    expect(code).toBe(0);
    expect(runs4.ci!.label).toBe('95% interval over 4 runs a side');
    expect(runs4.significant).toBe(true);
    const table = tableOf(out);
    expect(table[0]).toMatch(
      /^metric {2}req size \(bytes\) {2}A MB\/s {2}A spread {2}n A {2}B MB\/s {2}B spread {2}n B {2}ratio {2}95% interval +p {2}~ {2}note$/,
    );
    expect(out).toContain(
      "\ninterval: the ratio's 95% interval (each row on its own); p: Holm-corrected over the points\n",
    );
    expect(out).toContain(
      '\nspread: the farthest run from the centre (the median of the runs), in percent of it; n: runs\n',
    );
    // Each point: A and B as given (medians of 4 runs), their spreads and runs, the ratio and its interval, p;
    // all significant, so no `~`.
    const points = runs4.rows.filter((r) => r.ratio !== undefined);
    expect(points).toHaveLength(54);
    for (const p of points) {
      const line = table.find((l) => l.startsWith(`${p.metric} `) && l.split(/\s+/)[1] === String(p.req_size))!;
      const cells = line.split(/\s+/);
      expect([cells[2], cells[4], cells[5], cells[7]]).toEqual([String(p.a), '4', String(p.b), '4']);
      expect(cells[3]).toMatch(/^±[\d.]+%$/);
      expect(line).toMatch(new RegExp(`${esc(x(p.ratio!))} {2}${esc(`[${x(p.ci!.low)}-${x(p.ci!.high)}]`)}`));
      expect(p.significant).toBe(true);
    }
    // The columns line up: values right-aligned under their headers, the interval after the ratio.
    expect(table).toContainEqual(
      expect.stringMatching(
        /^fwd_wt {14}4096 {3}2\.855 {5}±3\.7% {4}4 {3}1\.255 {5}±4\.4% {4}4 {2}2\.27x {2}\[\d\.\d\dx-\d\.\d\dx\] {2}<0\.001$/,
      ),
    );
    expect(table.slice(1).join('\n')).not.toMatch(/~/);
    const m = runs4.byMetric.fwd_wt!;
    expect(table.find((l) => /^fwd_wt\s+geomean/.test(l))).toMatch(
      new RegExp(
        `^fwd_wt +geomean +[\\d.]+ +[\\d.]+ +${esc(x(m.ratio))} {2}\\[${esc(x(m.ci!.low))}-${esc(x(m.ci!.high))}\\] +<0\\.001 +9 points, ${esc(x(m.min))}-${esc(x(m.max))}$`,
      ),
    );
    const ci = `${x(runs4.ratio!)} [${x(runs4.ci!.low)}-${x(runs4.ci!.high)}]`;
    expect(table.at(-1)).toMatch(
      new RegExp(
        `^all +geomean +[\\d.]+ +[\\d.]+ +${esc(x(runs4.ratio!))} {2}${esc(`[${x(runs4.ci!.low)}-${x(runs4.ci!.high)}]`)} +<0\\.001 +54 points, 1\\.12x-4\\.45x; 95% interval over 4 runs a side$`,
      ),
    );
    expect(out).toContain(
      `\nruns needed: from the spread seen, about ${runs4.advice!.count} runs a side would tell a 5% difference apart (an interval of about ±5%)\n`,
    );
    expect(sentenceOf(out)).toBe(
      `scsi2sd_redux is 1.92x scsi2sd_10M_Sync on all (54 points, 1.12x-4.45x): ${ci}, 95% interval over 4 runs a side`,
    );
  });

  it('marks a difference that is not significant with ~, per row, on the summary and in the sentence', async () => {
    expect(same.significant).toBe(false);
    const { code, out } = await run('compare', 'tuned', 'stock', '--metric', 'all', '--api', api.url);
    expect(code).toBe(0);
    const table = tableOf(out);
    expect(table[0]).toMatch(/^metric +unit +A +A spread +n A +B +B spread +n B +ratio +95% interval +p {2}~ {2}note$/);
    for (const p of same.rows) {
      expect(p.significant).toBe(false);
      expect(table.find((l) => l.startsWith(`${p.metric} `))).toMatch(
        new RegExp(
          `^${p.metric}\\s+\\S+\\s+${esc(String(p.a))}\\s+\\S+\\s+2\\s+${esc(String(p.b))}\\s+\\S+\\s+2\\s+${esc(x(p.ratio!))} {2}\\[${esc(x(p.ci!.low))}-${esc(x(p.ci!.high))}\\]\\s+${esc(String(p.p))} {2}~$`,
        ),
      );
    }
    expect(table.at(-1)).toMatch(
      /^geomean\s+\d\.\d\dx {2}\[\d\.\d\dx-\d\.\d\dx\] +[\d.]+ {2}~ {2}2 points, \S+; 95% interval over 2 runs a side$/,
    );
    expect(out).toContain('~: not significant (p >= 0.05)');
    expect(out).not.toContain('excluded');
    expect(out).toMatch(/^service_ms \(ms, lower is better\): \S+ is \d\.\d\dx \S+ \(~ not significant\)$/m);
    expect(sentenceOf(out)).toMatch(
      /^~ no significant difference between tuned and stock on all: \d\.\d\dx \[[\d.]+x-[\d.]+x\], 95% interval over 2 runs a side \(2 points\)$/,
    );
  });

  it('a ratio under 1: the table keeps A/B (0.39x), the sentence and the directions name the faster side first; a point near 0 is footnoted', async () => {
    const { code, out } = await run('compare', 'hdd', 'b', '--api', api.url);
    expect(code).toBe(0);
    expect(formatRatio(hdd.ratio)).toBe('0.39');
    const table = tableOf(out);
    expect(table.at(-1)).toMatch(/^all\s+geomean\s+[\d.]+\s+[\d.]+\s+0\.39x {2}65 points, 0\.02x-18\.0x; no interval/);
    expect(out).toContain('\nfwd_wt (MB/s, higher is better): 300G_10K_SGI_Indy is 3.45x scsi2sd_redux\n');
    // rnd_wt at 4096: 0.18 against 0.01 MB/s, the ratio is mostly rounding.
    expect(hdd.rows.find((r) => r.metric === 'rnd_wt' && r.req_size === 4096)).toMatchObject({
      a: 0.18,
      b: 0.01,
      nearResolution: true,
    });
    expect(table).toContain('rnd_wt              4096    0.18    1    0.01    1  18.0x  (a)');
    expect(table.filter((l) => l.includes('(a)'))).toHaveLength(1);
    expect(out).toContain(
      '\n\n(a) a side is under 0.05 MB/s (5 printing steps of 0.01): the ratio is mostly rounding\n',
    );
    expect(out).toContain('\n  rnd_wt at 8192: zero on B (A 0.34, B 0 MB/s)\n');
    expect(out).toContain(`\nnotes:\n  [1] ${hdd.warnings[0]}\n  [2] ${hdd.warnings[1]}\n`);
    expect(sentenceOf(out)).toBe('300G_10K_SGI_Indy is 2.56x scsi2sd_redux on all (65 points, 0.06x-50.1x)');
  });

  it('devices paired disk with disk: says so, and footnotes the idle disk left out of each point', async () => {
    expect(disks.paired).toBe(true);
    const { code, out } = await run('compare', 'disks', 'b', '--api', api.url);
    expect(code).toBe(0);
    expect(out).toContain('\ndevices paired disk with disk: each device of A with the device of the same name on B\n');
    const table = tableOf(out);
    const points = table.filter((l) => /^read_(iops|ms) /.test(l));
    expect(points).toHaveLength(2);
    for (const line of points) expect(line).toMatch(/ \(a\)$/);
    expect(out).toContain('\n(a) sdc measured 0 on both sides: left out of this point\n');
  });

  it('--metric naming one metric: its direction said in full', async () => {
    const { code, out } = await run('compare', 'disks-read', 'b', '--metric', 'read_ms', '--api', api.url);
    expect(code).toBe(0);
    expect(api.requests.at(-1)!.query['metric']).toBe('read_ms');
    expect(out).toContain(`\ndirection: ${disksRead.byMetric.read_ms!.sentence}\n`);
    expect(disksRead.byMetric.read_ms!.sentence).toMatch(
      /^read_ms \(average read latency; ms, lower is better\): tuned is \d\.\d\dx stock \(stock's ms over tuned's\)$/,
    );
    expect(out).not.toContain('directions');
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
    expect(err).toMatch(
      /^error: --metric speed: expected a group \(write, read, seq, random, latency, all: throughput, IOPS and latency; latency: the latencies, with fio's percentiles; queue lengths and %util only by name\) or a metric \(fwd_wt, /,
    );
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

  it("runs: filters go to the API; the table shows id, device (an iostat run's disks), format, host, the samples' time range in UTC, context, tags and key", async () => {
    const { code, out } = await run('runs', '--device', 'scsi*', '--format', 'diskperf', '--api', `${api.url}/`);
    expect(code).toBe(0);
    expect(api.requests.at(-1)).toMatchObject({ path: '/runs', query: { device: 'scsi*', format: 'diskperf' } });
    expect(out.split('\n')).toEqual([
      'run id     device           format    host  measured                    context                                   tags                     key',
      'r-redux-0  scsi2sd_redux    diskperf  IRIS  2020-04-03 21:10:13 UTC     diskperf -W -n scsi2sd_redux -c 1G -t 6…  interface=SCSI           scsi2sd/redux.txt',
      'r-x4100-0  x4100 (5 disks)  iostat    -     2026-11-30 10:00–10:45 UTC  tunefs -a 32 /opt; dd if=/dev/zero of=/…  interface=SAS,rpm=10000  x4100/maxcontig.txt',
      '2 runs',
    ]);
    expect((await run('runs', '--format', 'iostat', '--api', api.url)).out).toBe('no runs match format iostat');
  });

  it('a 400 from the API is printed as its message', async () => {
    const { code, err } = await run('runs', '--device', '[', '--api', api.url);
    expect(code).toBe(1);
    expect(err).toBe('error: device: "[" is not a valid glob');
  });

  it('BENCHDROP_API is the target when no flag names one and no lab.json is here, and the CLI says so on stderr', async () => {
    const output = captureOutput();
    expect(await runCli(['devices'], output.io, { env: { BENCHDROP_API: `${api.url}/` }, cwd })).toBe(0);
    expect(output.out).toContain('scsi2sd_redux');
    expect(output.err).toBe(`using the lab at ${api.url} (from BENCHDROP_API)`);
  });

  it('a lab named by a flag is not announced: stderr stays empty', async () => {
    const output = captureOutput();
    expect(
      await runCli(['devices', '--api', api.url], output.io, { env: { BENCHDROP_API: 'http://127.0.0.1:1' }, cwd }),
    ).toBe(0);
    expect(output.err).toBe('');
  });
});

describe('when the lab cannot be reached', () => {
  /** Every way of naming a lab, as the messages end; the examples are the local lab's default ports. */
  const NAME_THE_LAB =
    'name the lab with --api URL (e.g. http://127.0.0.1:4580) or --stack NAME (e.g. Benchdrop-mylab), run `npm start` in this folder (or give --data DIR, the data folder of a running lab), or set BENCHDROP_API';

  it('says which URL could not be reached and how to set the target', async () => {
    const port = await closedPort();
    const { code, err } = await run('devices', '--api', `http://127.0.0.1:${port}`);
    expect(code).toBe(1);
    expect(err).toBe(
      `error: could not reach the benchdrop API at http://127.0.0.1:${port} (from --api): ECONNREFUSED; is the lab running? Otherwise ${NAME_THE_LAB}`,
    );
  });

  it('says every way of naming a lab when none is named: --api, --stack, a running npm start here or --data, BENCHDROP_API', async () => {
    for (const command of [
      ['runs'],
      ['devices'],
      ['compare', 'a', 'b'],
      ['upload', join(FIXTURES, REDUX), '--bucket', 'b', '--wait'],
    ]) {
      const { code, out, err } = await run(...command);
      expect(code, command[0]).toBe(1);
      expect(out).toBe('');
      expect(err).toBe(
        `error: no lab API to talk to (no --api or --stack, no .benchdrop/lab.json here, no BENCHDROP_API): ${NAME_THE_LAB}`,
      );
    }
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

describe('help', () => {
  it("its examples are the local lab's own defaults (infra/local/options.ts), and it says how a lab is found", async () => {
    const api = `http://${DEFAULT_HOST}:${DEFAULT_PORTS.api}`;
    const s3 = `http://${DEFAULT_HOST}:${DEFAULT_PORTS.s3}`;
    expect(api).toBe('http://127.0.0.1:4580');
    for (const command of ['compare', 'runs', 'devices', 'upload']) {
      const { code, out } = await run(command, '--help');
      expect(code, command).toBe(0);
      const flat = out.replace(/\s+/g, ' ');
      expect(flat, command).toContain(
        `--api <url> the lab API, e.g. ${api} (default: the running lab's, from --data's lab.json, else $BENCHDROP_API)`,
      );
      expect(flat, command).toContain(
        "--data <dir> a local lab's data folder: its lab.json, written by npm start, names the API and bucket (default: .benchdrop)",
      );
      expect(out, command).not.toContain('8787');
    }
    expect((await run('upload', '--help')).out.replace(/\s+/g, ' ')).toContain(
      `--endpoint <url> S3 endpoint of a local lab, e.g. ${s3} (default: from --data's lab.json, else $BENCHDROP_S3_ENDPOINT)`,
    );
    expect((await run('--help')).out).toContain(
      "else the lab `npm start` runs\nin this folder (its .benchdrop/lab.json, or --data DIR's), else $BENCHDROP_API.",
    );
  });
});
