/**
 * The comparison model: the seed ratios from the real samples, ground truth
 * from generated multi-disk, multi-run logs with known ratios, and the rules
 * (zeros, groups, intervals, warnings, words) on cases computed by hand.
 */
import { describe, expect, it } from 'vitest';
import {
  compareObservations,
  CompareError,
  comparisonKey,
  diskperfObservation,
  iostatObservation,
  metricsOf,
  type Observation,
} from '../../shared/compare.ts';
import type { DiskperfRun, IostatRun } from '../../shared/model.ts';
import { parseText } from '../../shared/parsers/index.ts';
import { observationsOf, sideObservations, THREE_DISKS } from '../../harness/ground-truth.ts';
import { fixture } from '../support/fixtures.ts';

async function diskperf(path: string, runId = path): Promise<Observation> {
  const run = (await parseText(fixture(path).toString('utf8'), path)).runs[0] as DiskperfRun;
  return diskperfObservation(runId, run.name, run.rows, {
    ...(run.meta.host !== undefined ? { host: run.meta.host } : {}),
    context: run.context,
    meta: run.meta,
  });
}

const REDUX = 'irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt';
const SYNC = 'irix/irix-6.5-indy-scsi2sd-10M-sync.diskperf.txt';
const HDD = 'irix/irix-6.5-indy-300G-10K.diskperf.txt';
const X4100 = 'solaris/solaris-10-x4100-sas-maxcontig.iostat.txt';

async function x4100Runs(): Promise<IostatRun[]> {
  return (await parseText(fixture(X4100).toString('utf8'), X4100)).runs as IostatRun[];
}

describe('the seed ratios', () => {
  it('scsi2sd_redux is 1.90x scsi2sd_10M_Sync on all six metrics at the 9 shared sizes', async () => {
    const c = compareObservations([await diskperf(REDUX)], [await diskperf(SYNC)], {
      labels: { a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync' },
    });
    expect(c.ratio!.toFixed(2)).toBe('1.90');
    expect(c.points).toBe(54);
    // 2 request sizes only redux measured.
    expect(c.excluded.filter((r) => r.excluded === 'missing on B')).toHaveLength(12);
    expect(c.sentence).toBe('scsi2sd_redux is 1.90x scsi2sd_10M_Sync on all (54 points, 1.11x-4.41x)');
    expect(c.ci).toBeNull();
    expect(c.ciNote).toMatch(/needs at least 2 runs on each side \(A has 1 run, B has 1 run\)/);
    expect(c.significant).toBeNull();
    expect(c.advice!.count).toBeNull();
    expect(c.advice!.note).toMatch(/at least twice on each side/);
    // 10M_Sync's table stops at 1 MiB though its header says 4 MiB.
    expect(c.warnings).toEqual([
      expect.stringMatching(/^B: scsi2sd_10M_Sync's table covers 4 KiB-1 MiB though its header announces 4 KiB-4 MiB/),
    ]);
  });

  it('scsi2sd_redux is 0.39x the 300G 10K disk, said the other way round as 2.56x, with the parameters and the resolution warned', async () => {
    const c = compareObservations([await diskperf(REDUX)], [await diskperf(HDD)], {
      labels: { a: 'scsi2sd_redux', b: '300G_10K_SGI_Indy' },
    });
    expect(c.ratio!.toFixed(2)).toBe('0.39');
    expect(c.points).toBe(65);
    expect(c.sentence).toMatch(/^300G_10K_SGI_Indy is 2\.56x scsi2sd_redux on all \(65 points, /);
    expect(c.excluded).toEqual([
      expect.objectContaining({ metric: 'rnd_wt', req_size: 8192, a: 0.34, b: 0, excluded: 'zero on B' }),
    ]);
    expect(c.warnings).toContainEqual(
      expect.stringMatching(/1 point\(s\) excluded because a side measured 0 \(rnd_wt at 8192\)/),
    );
    expect(c.warnings).toContainEqual(
      expect.stringMatching(/different parameters \(time 60 on A, 10 on B; file size 1 GiB on A, 128 MiB on B\)/),
    );
    const near = c.rows.filter((r) => r.nearResolution);
    expect(near).toEqual([expect.objectContaining({ metric: 'rnd_wt', req_size: 4096, a: 0.18, b: 0.01, ratio: 18 })]);
    expect(c.warnings).toContainEqual(
      expect.stringMatching(/rnd_wt at 4096: A 0\.18, B 0\.01 MB\/s.*without them the summary is 0\.37x/),
    );
    // Values as printed, not as a geometric mean of one rounds them.
    expect(c.rows.find((r) => r.metric === 'fwd_wt' && r.req_size === 32768)!.a).toBe(2.76);
    expect(c.byMetric.fwd_wt!.sentence).toMatch(
      /^fwd_wt \(sequential forward write; MB\/s, higher is better\): 300G_10K_SGI_Indy is 3\.45x scsi2sd_redux/,
    );
  });

  it('c0t0d0 writes 71.0x as many IOPS with maxcontig 1 as with 32 (6028.7 / 84.9)', async () => {
    const runs = await x4100Runs();
    const c0 = (i: number) => observationsOf(runs[i]!, 'x4100', `r${i}`).filter((o) => o.native === 'c0t0d0');
    const c = compareObservations(c0(3), c0(0), { metric: 'write_iops' });
    expect(c.ratio!.toFixed(1)).toBe('71.0');
    expect(c.paired).toBe(true);
    expect(c.warnings.join(' ')).toMatch(/since-boot report/);
  });

  it('o2_cheetah through the buffer cache is 1.15x the same disk with direct I/O, and the setups differ', async () => {
    const runs = (await parseText(fixture('irix/irix-6.5-two-results-direct.diskperf.txt').toString('utf8'), 'two'))
      .runs as DiskperfRun[];
    const [a, b] = runs.map((r, i) =>
      diskperfObservation(`r${i}`, r.name, r.rows, { context: r.context, meta: r.meta }),
    );
    const c = compareObservations([a!], [b!], { labels: { a: 'o2_cheetah', b: 'o2_cheetah_dio' } });
    expect(c.ratio!.toFixed(2)).toBe('1.15');
    expect(c.points).toBe(30);
    expect(c.warnings).toContainEqual(expect.stringMatching(/different parameters \(direct 0 on A, 1 on B\)/));
  });
});

describe('ground truth: generated sysstat 12 logs, 3 disks a label (one read-idle), 3% run-to-run noise', () => {
  const side = (label: string, k: number, runs: number, seed: number) =>
    sideObservations({ label, disks: THREE_DISKS, k, noise: 0.03, runs, seed });

  it('identical data under two labels is exactly 1.00x, with an interval inside [0.9, 1.1] around 1, not significant', async () => {
    const a = await side('left', 1, 4, 7);
    const b = await side('right', 1, 4, 7);
    for (const metric of ['read', 'write', 'all'] as const) {
      const c = compareObservations(a, b, { metric, labels: { a: 'left', b: 'right' } });
      expect(c.ratio).toBe(1);
      expect(c.paired).toBe(true);
      expect(c.ci!.over).toBe('runs');
      expect(c.ci!.low).toBeGreaterThanOrEqual(0.9);
      expect(c.ci!.high).toBeLessThanOrEqual(1.1);
      expect(c.ci!.low).toBeLessThanOrEqual(1);
      expect(c.ci!.high).toBeGreaterThanOrEqual(1);
      expect(c.significant).toBe(false);
      expect(c.sentence).toMatch(/^~ no significant difference between left and right/);
    }
  });

  for (const k of [1.05, 1.15, 1.3, 2]) {
    it(`a ${k}x effect on every disk comes out within 2% on read, write and all, the idle disk left out of the read points only`, async () => {
      const a = await side('fast', k, 4, 11);
      const b = await side('slow', 1, 4, 23);
      for (const metric of ['read', 'write', 'all'] as const) {
        const c = compareObservations(a, b, { metric, labels: { a: 'fast', b: 'slow' } });
        expect(Math.abs(c.ratio! / k - 1)).toBeLessThan(0.02);
        expect(c.ci!.low).toBeLessThan(k);
        expect(c.ci!.high).toBeGreaterThan(k);
        expect(c.significant).toBe(true);
        expect(c.sentence).toMatch(/95% interval over 4 runs a side$/);
      }
      const read = compareObservations(a, b, { metric: 'read' });
      expect(read.points).toBe(3);
      expect(read.excluded).toEqual([]);
      expect(read.rows.every((r) => r.notes?.[0] === 'sdc measured 0 on both sides: left out of this point')).toBe(
        true,
      );
      expect(read.warnings).toContainEqual(
        expect.stringMatching(/^sdc measured 0 on both sides for read_iops, read_kBps, read_ms/),
      );
    });
  }

  it('the summary excludes load metrics and the combined iops, yet each is there by name', async () => {
    const a = await side('fast', 1.3, 4, 11);
    const b = await side('slow', 1, 4, 23);
    const c = compareObservations(a, b, { metric: 'all' });
    expect(c.metrics).toEqual(['read_iops', 'write_iops', 'read_kBps', 'write_kBps', 'read_ms', 'write_ms']);
    for (const metric of ['util_pct', 'active_queue', 'iops', 'wait_ms'] as const)
      expect(metricsOf('all', ['iostat']).includes(metric)).toBe(false);
    const util = compareObservations(a, b, { metric: 'util_pct' });
    expect(util.metrics).toEqual(['util_pct']);
    expect(util.ratio).not.toBeNull();
  });

  it('one run a side gives no interval, saying it needs 2 runs and why', async () => {
    const c = compareObservations(await side('fast', 1.3, 1, 11), await side('slow', 1, 1, 23), { metric: 'write' });
    expect(c.ratio!).toBeGreaterThan(1.2);
    expect(c.ci).toBeNull();
    expect(c.significant).toBeNull();
    expect(c.ciNote).toMatch(/needs at least 2 runs on each side/);
    expect(c.rows.every((r) => r.significant === undefined && r.ci === undefined)).toBe(true);
  });

  it('a side whose devices have 1 run among others with more gives no interval, naming them', async () => {
    const a = await side('fast', 1.3, 4, 11);
    const b = [
      ...(await side('slow', 1, 4, 23)).filter((o) => o.native !== 'sdb'),
      ...(await side('slow', 1, 1, 5)).filter((o) => o.native === 'sdb'),
    ];
    const c = compareObservations(a, b, { metric: 'write' });
    expect(c.ci).toBeNull();
    expect(c.ciNote).toMatch(/B's slow\/sdb has 1 run/);
  });

  it('the run-count advice grows as the noise does', async () => {
    const quiet = compareObservations(await side('a', 1, 4, 1), await side('b', 1, 4, 2), { metric: 'write' });
    const noisy = compareObservations(
      await sideObservations({ label: 'a', disks: THREE_DISKS, k: 1, noise: 0.12, runs: 4, seed: 1 }),
      await sideObservations({ label: 'b', disks: THREE_DISKS, k: 1, noise: 0.12, runs: 4, seed: 2 }),
      { metric: 'write' },
    );
    expect(quiet.advice!.count).toBeGreaterThanOrEqual(2);
    expect(noisy.advice!.count!).toBeGreaterThan(quiet.advice!.count! * 4);
    expect(noisy.advice!.note).toMatch(/^from the spread seen, about \d+ runs a side would tell a 5% difference apart/);
  });

  it('per-point and per-metric marks are Holm-corrected: more points need stronger evidence than one', async () => {
    const a = await side('fast', 1.05, 2, 3);
    const b = await side('slow', 1, 2, 4);
    const c = compareObservations(a, b, { metric: 'all' });
    const points = c.rows.filter((r) => r.p !== undefined);
    expect(points.length).toBe(6);
    // Holm's adjusted p-values are at least the raw ones, and ordered like them.
    for (const r of points) expect(r.p!).toBeGreaterThanOrEqual(0);
    const sorted = [...points].sort((x, y) => x.p! - y.p!);
    expect(sorted[sorted.length - 1]!.p!).toBeLessThanOrEqual(1);
    expect(points.every((r) => r.significant === r.p! < 0.05)).toBe(true);
  });

  it('classes by label across different disks resample devices, not runs', async () => {
    const classA = [
      ...(await side('ssd1', 1.3, 2, 1)).filter((o) => o.native === 'sda'),
      ...(await sideObservations({
        label: 'ssd2',
        disks: [{ name: 'nvme0n1', level: 1.1 }],
        k: 1.3,
        noise: 0.03,
        runs: 2,
        seed: 2,
      })),
    ];
    const classB = [
      ...(await side('hdd1', 1, 2, 3)).filter((o) => o.native === 'sdb'),
      ...(await sideObservations({
        label: 'hdd2',
        disks: [{ name: 'sdq', level: 0.9 }],
        k: 1,
        noise: 0.03,
        runs: 2,
        seed: 4,
      })),
    ];
    const c = compareObservations(classA, classB, { metric: 'write' });
    expect(c.paired).toBe(false);
    expect(c.ci!.over).toBe('devices');
    expect(c.ci!.label).toBe('95% interval over devices (2 on A, 2 on B) and their runs');
    expect(c.a.devices).toEqual(['ssd1/sda', 'ssd2/nvme0n1']);
  });
});

const obs = (runId: string, values: Observation['values'], extra: Partial<Observation> = {}): Observation => ({
  runId,
  device: extra.device ?? runId,
  format: 'iostat',
  values,
  ...extra,
});

describe('rules by hand', () => {
  it('the summary ratio is the geometric mean of point ratios, oriented so that > 1 means A is better', () => {
    // read_iops 200 vs 100 -> 2; read_ms 5 vs 10 -> 2 (lower is better); write_iops 50 vs 50 -> 1.
    const c = compareObservations(
      [obs('a', { read_iops: 200, read_ms: 5, write_iops: 50 })],
      [obs('b', { read_iops: 100, read_ms: 10, write_iops: 50 })],
    );
    expect(c.byMetric.read_iops!.ratio).toBe(2);
    expect(c.byMetric.read_ms!.ratio).toBe(2);
    expect(c.byMetric.write_iops!.ratio).toBe(1);
    expect(c.ratio).toBeCloseTo(Math.cbrt(4), 5);
  });

  it('runs of a device combine by median, so one zero run cannot erase the device', () => {
    const a = [100, 0, 120].map((v, i) =>
      obs(`a${i}`, { read_iops: v }, { device: 'x/sda', native: 'sda', label: 'x' }),
    );
    const b = [50, 60, 55].map((v, i) =>
      obs(`b${i}`, { read_iops: v }, { device: 'y/sda', native: 'sda', label: 'y' }),
    );
    const c = compareObservations(a, b, { metric: 'read_iops' });
    expect(c.rows[0]!.a).toBe(100);
    expect(c.rows[0]!.b).toBe(55);
    expect(c.ratio).toBeCloseTo(100 / 55, 5);
  });

  it('each device counts once however many runs it has (unpaired sides: geometric mean over devices)', () => {
    const a = [
      obs('a1', { read_iops: 100 }, { device: 'p/sda', native: 'sda' }),
      ...[400, 400, 400].map((v, i) => obs(`a${i + 2}`, { read_iops: v }, { device: 'p/sdb', native: 'sdb' })),
    ];
    const c = compareObservations(a, [obs('b', { read_iops: 100 }, { device: 'q/hda', native: 'hda' })], {
      metric: 'read_iops',
    });
    expect(c.paired).toBe(false);
    expect(c.rows[0]!.a).toBeCloseTo(200, 8);
  });

  it('a point is excluded only where a side as a whole measured 0, naming the devices', () => {
    const side = (label: string, sda: number, sdb: number) => [
      obs(`${label}1`, { write_iops: sda }, { device: `${label}/sda`, native: 'sda', label }),
      obs(`${label}1`, { write_iops: sdb }, { device: `${label}/sdb`, native: 'sdb', label }),
    ];
    const c = compareObservations(side('a', 0, 0), side('b', 10, 0), { metric: 'write_iops' });
    expect(c.excluded).toEqual([expect.objectContaining({ metric: 'write_iops', excluded: 'zero on A (sda, sdb)' })]);
    const partly = compareObservations(side('a', 20, 0), side('b', 10, 0), { metric: 'write_iops' });
    expect(partly.ratio).toBe(2);
    expect(partly.rows[0]!.notes).toEqual(['sdb measured 0 on both sides: left out of this point']);
  });

  it('missing points are excluded with their reason', () => {
    const c = compareObservations(
      [obs('a', { read_iops: 5, write_iops: 10 })],
      [obs('b', { read_iops: 5, write_kBps: 3 })],
    );
    expect(c.excluded.map((r) => [r.metric, r.excluded])).toEqual([
      ['write_iops', 'missing on B'],
      ['write_kBps', 'missing on A'],
    ]);
  });

  it('service time stands in for per-direction latency only where no log prints it', () => {
    const solaris = [obs('a', { write_iops: 5, service_ms: 2 })];
    expect(metricsOf('all', ['iostat'], new Set(['write_iops', 'service_ms']))).toContain('service_ms');
    expect(metricsOf('all', ['iostat'], new Set(['write_iops', 'service_ms', 'write_ms']))).not.toContain('service_ms');
    expect(compareObservations(solaris, [obs('b', { write_iops: 5, service_ms: 4 })]).byMetric.service_ms!.ratio).toBe(
      2,
    );
  });

  it('metric groups pick the metrics of the formats at hand', () => {
    expect(metricsOf('write', ['diskperf'])).toEqual(['fwd_wt', 'bwd_wt', 'rnd_wt']);
    expect(metricsOf('random', ['diskperf'])).toEqual(['rnd_wt', 'rnd_rd']);
    expect(metricsOf('read', ['iostat'])).toEqual(['read_iops', 'read_kBps', 'read_ms']);
    expect(metricsOf('fwd_wt', ['iostat'])).toEqual([]);
  });

  it('an empty side or a metric neither format carries is an error naming what is allowed', () => {
    expect(() => compareObservations([], [obs('b', { iops: 1 })])).toThrow(CompareError);
    expect(() => compareObservations([obs('a', { iops: 1 })], [obs('b', { iops: 1 })], { metric: 'fwd_wt' })).toThrow(
      /expected a group .*queue lengths and %util only by name/,
    );
  });

  it('across formats only throughput is compared, with a warning', () => {
    const disk = diskperfObservation('d', 'disk', [
      { req_size: 4096, values: { fwd_rd: 2, bwd_rd: 2, rnd_rd: 2, fwd_wt: 1, bwd_wt: 1, rnd_wt: 1 } },
    ]);
    const c = compareObservations([disk], [obs('i', { read_kBps: 1024, write_kBps: 2048, iops: 5 })]);
    expect(c.metrics).toEqual(['read_kBps', 'write_kBps']);
    expect(c.byMetric.read_kBps!.ratio).toBeCloseTo(2, 10);
    expect(c.byMetric.write_kBps!.ratio).toBeCloseTo(0.5, 10);
    expect(c.warnings[0]).toMatch(/only read and write throughput are compared/);
  });
});

describe('comparability warnings', () => {
  it('a side mixing a Solaris and a Linux log (a class by tag) is warned, as is each platform between sides', async () => {
    const linux = await sideObservations({
      label: 'dl380',
      disks: [{ name: 'sda', level: 1 }],
      k: 1,
      noise: 0.03,
      runs: 1,
      seed: 1,
    });
    const solaris = observationsOf((await x4100Runs())[0]!, 'x4100', 'rs').filter((o) => o.native === 'c0t0d0');
    const c = compareObservations([...linux, ...solaris], linux, { metric: 'write_iops' });
    expect(c.warnings).toContainEqual(expect.stringMatching(/^A mixes platforms \(linux, solaris\)/));
    const across = compareObservations(solaris, linux, { metric: 'write_iops' });
    expect(across.warnings).toContainEqual(expect.stringMatching(/^A is iostat on solaris and B on linux/));
  });

  it('the x4100 label holds mirrors beside their disks and four workloads: both warned, with the selector to use', async () => {
    const runs = await x4100Runs();
    const all = runs.flatMap((run, i) => observationsOf(run, 'x4100', `r${i}`));
    const c = compareObservations(
      all,
      all.filter((o) => o.native === 'c0t0d0'),
      { metric: 'write' },
    );
    expect(c.warnings).toContainEqual(
      expect.stringMatching(
        /^A holds stacked devices \(d10, d11, d12\) beside disks .*select the disks, e\.g\. x4100\/c0t0d0/,
      ),
    );
    expect(c.warnings).toContainEqual(
      expect.stringMatching(/^A mixes 4 workloads .*"tunefs -a 32 \/opt; .*select one with context~TEXT/),
    );
  });

  it('a side spanning hosts is warned', async () => {
    const one = await sideObservations({
      label: 'p',
      disks: [{ name: 'sda', level: 1 }],
      k: 1,
      noise: 0.03,
      runs: 1,
      seed: 1,
      host: 'dl380',
    });
    const two = await sideObservations({
      label: 'q',
      disks: [{ name: 'sda', level: 1 }],
      k: 1,
      noise: 0.03,
      runs: 1,
      seed: 2,
      host: 'r740',
    });
    const c = compareObservations([...one, ...two], one, { metric: 'write_iops' });
    expect(c.warnings).toContainEqual(expect.stringMatching(/^A spans 2 hosts \(dl380, r740\)/));
  });

  it('devices of very different load on a side are warned, naming the busy one', () => {
    const side = [
      obs('r', { write_iops: 900, util_pct: 98 }, { device: 'h/sda', native: 'sda', label: 'h' }),
      obs('r', { write_iops: 3, util_pct: 2 }, { device: 'h/sdb', native: 'sdb', label: 'h' }),
    ];
    const c = compareObservations(side, side, { metric: 'write_iops' });
    expect(c.warnings).toContainEqual(
      expect.stringMatching(/^A holds devices of very different load \(h\/sda 98% busy, h\/sdb 2%\).*e\.g\. h\/sda/),
    );
  });

  it('diskperf runs of one side with different parameters are not replicates, and say so', async () => {
    const c = compareObservations([await diskperf(REDUX, 'r1'), await diskperf(HDD, 'r2')], [await diskperf(SYNC)]);
    expect(c.warnings).toContainEqual(
      expect.stringMatching(
        /^A's diskperf runs used different parameters \(time 60 \/ 10, file size 1 GiB \/ 128 MiB\): they are not replicates/,
      ),
    );
    expect(c.warnings).toContainEqual(expect.stringMatching(/^A spans 2 hosts \(IRIS, isengard\)/));
  });
});

describe('the key of an answer', () => {
  const run = (id: string, fwd: number) =>
    diskperfObservation(id, 'disk', [
      { req_size: 4096, values: { fwd_wt: fwd, fwd_rd: 2 } },
      { req_size: 8192, values: { fwd_wt: 3 } },
    ]);

  it('is the same for the same observations and options, however they were built', () => {
    expect(comparisonKey([run('a', 1)], [run('b', 2)], { metric: 'write' })).toBe(
      comparisonKey([run('a', 1)], [run('b', 2)], { metric: 'write' }),
    );
  });

  it('changes with any value, run, order, fact or option the answer depends on', () => {
    const key = comparisonKey([run('a', 1), run('c', 1)], [run('b', 2)]);
    const others = [
      comparisonKey([run('a', 1.0000000000000002), run('c', 1)], [run('b', 2)]),
      comparisonKey([run('a', 1), run('d', 1)], [run('b', 2)]),
      comparisonKey([run('a', 1)], [run('b', 2)]),
      comparisonKey([run('c', 1), run('a', 1)], [run('b', 2)]),
      comparisonKey([run('a', 1)], [run('c', 1), run('b', 2)]),
      comparisonKey([run('a', 1), run('c', 1)], [run('b', 2)], { metric: 'write' }),
      comparisonKey([run('a', 1), run('c', 1)], [run('b', 2)], { selectors: { a: 'x', b: 'y' } }),
      comparisonKey([run('a', 1), run('c', 1)], [{ ...run('b', 2), samples: 3 }]),
      comparisonKey([run('a', 1), run('c', 1)], [{ ...run('b', 2), context: ['diskperf -t 10'] }]),
      comparisonKey([run('a', 1), run('c', 1)], [{ ...run('b', 2), host: 'other' }]),
    ];
    expect(new Set([key, ...others]).size).toBe(others.length + 1);
  });
});

describe('an iostat observation', () => {
  it('takes its native device from the unit name when the label is known', () => {
    const o = iostatObservation('r', 'sas10k/sda', { read_iops: { mean: 1, count: 2 } }, 3, { label: 'sas10k' });
    expect(o.native).toBe('sda');
    expect(o.label).toBe('sas10k');
  });
});
