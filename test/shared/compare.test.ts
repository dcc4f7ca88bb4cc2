/**
 * The comparison engine: the seed ratios from the real samples, and the statistics
 * on cases computed by hand.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compareSelections, CompareError, comparisonKey, diskperfObservation, iostatObservation, metricsOf, type Observation } from '../../shared/compare.ts';
import type { DiskperfRun, IostatRun } from '../../shared/model.ts';
import { parseText } from '../../shared/parsers/index.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');
const read = (path: string) => readFileSync(join(FIXTURES, path), 'utf8');

async function diskperf(path: string): Promise<Observation> {
  const run = (await parseText(read(path), path)).runs[0] as DiskperfRun;
  return diskperfObservation(path, run.name, run.rows);
}

const REDUX = 'irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt';
const SYNC = 'irix/irix-6.5-indy-scsi2sd-10M-sync.diskperf.txt';
const HDD = 'irix/irix-6.5-indy-300G-10K.diskperf.txt';

describe('the seed ratios', () => {
  it('scsi2sd_redux is 1.90x scsi2sd_10M_Sync on all six metrics at the 9 shared sizes', async () => {
    const c = compareSelections([await diskperf(REDUX)], [await diskperf(SYNC)], { labels: { a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync' } });
    expect(c.ratio!.toFixed(2)).toBe('1.90');
    expect(c.points).toBe(54);
    // 2 request sizes only redux measured.
    expect(c.excluded.filter((r) => r.excluded === 'missing on B')).toHaveLength(12);
    expect(c.sentence).toMatch(/^scsi2sd_redux is 1\.90x scsi2sd_10M_Sync on all \(54 points, 1\.11x-4\.41x\)$/);
    expect(c.ci).toBeNull();
    expect(c.ciNote).toMatch(/at least 2 runs on each side/);
    expect(c.significant).toBeNull();
  });

  it('scsi2sd_redux is 0.39x the 300G 10K disk; its 0.00 rnd_wt point is excluded and said so', async () => {
    const c = compareSelections([await diskperf(REDUX)], [await diskperf(HDD)]);
    expect(c.ratio!.toFixed(2)).toBe('0.39');
    expect(c.points).toBe(65);
    expect(c.excluded).toEqual([expect.objectContaining({ metric: 'rnd_wt', req_size: 8192, excluded: 'zero on B' })]);
    expect(c.warnings.join(' ')).toMatch(/1 point\(s\) excluded because a side measured 0 \(rnd_wt at 8192\)/);
  });

  it('c0t0d0 writes 71.0x as many IOPS with maxcontig 1 as with 32 (6028.7 / 84.9)', async () => {
    const runs = (await parseText(read('solaris/solaris-10-x4100-sas-maxcontig.iostat.txt'))).runs as IostatRun[];
    const c0 = (run: IostatRun) => run.series.find((s) => s.device === 'c0t0d0')!;
    const a = iostatObservation('r3', 'x4100/c0t0d0', c0(runs[3]!).summary, runs[3]!.reports);
    const b = iostatObservation('r0', 'x4100/c0t0d0', c0(runs[0]!).summary, runs[0]!.reports);
    const c = compareSelections([a], [b], { metric: 'write_iops' });
    expect(c.ratio!.toFixed(1)).toBe('71.0');
    expect(c.warnings.join(' ')).toMatch(/since-boot report/);
  });
});

const obs = (runId: string, values: Observation['values'], format: Observation['format'] = 'iostat'): Observation => ({ runId, device: runId, format, values });

describe('statistics by hand', () => {
  it('the summary ratio is the geometric mean of point ratios, oriented so that > 1 means A is better', () => {
    // read_iops 200 vs 100 -> 2; service_ms 5 vs 10 -> 2 (lower is better); util 50 vs 50 -> 1.
    const c = compareSelections([obs('a', { read_iops: 200, service_ms: 5, util_pct: 50 })], [obs('b', { read_iops: 100, service_ms: 10, util_pct: 50 })]);
    expect(c.byMetric.read_iops!.ratio).toBeCloseTo(2, 12);
    expect(c.byMetric.service_ms!.ratio).toBeCloseTo(2, 12);
    expect(c.byMetric.util_pct!.ratio).toBeCloseTo(1, 12);
    expect(c.ratio).toBeCloseTo(Math.cbrt(4), 12);
  });

  it('several runs on a side combine by geometric mean per point', () => {
    const c = compareSelections([obs('a1', { read_iops: 100 }), obs('a2', { read_iops: 400 })], [obs('b', { read_iops: 100 })], { metric: 'read_iops' });
    expect(c.rows[0]!.a).toBeCloseTo(200, 10);
    expect(c.ratio).toBeCloseTo(2, 10);
  });

  it('missing and zero points are excluded with their reason', () => {
    const c = compareSelections([obs('a', { read_iops: 0, write_iops: 10 })], [obs('b', { read_iops: 5, iops: 3 })]);
    expect(c.points).toBe(0);
    expect(c.ratio).toBeNull();
    expect(c.excluded.map((r) => [r.metric, r.excluded])).toEqual([
      ['iops', 'missing on A'],
      ['read_iops', 'zero on A'],
      ['write_iops', 'missing on B'],
    ]);
    expect(c.sentence).toMatch(/share no all measurement/);
  });

  it('the bootstrap interval covers the true ratio of synthetic runs, and is the same every time', () => {
    // Side A: true value 200 with +-10% noise; side B: 100 with noise: true ratio 2.
    const noise = [0.92, 1.05, 0.97, 1.1, 0.95, 1.02, 0.99, 1.08];
    const a = noise.map((n, i) => obs(`a${i}`, { read_iops: 200 * n }));
    const b = noise.map((n, i) => obs(`b${i}`, { read_iops: 100 * noise[(i + 3) % noise.length]! }));
    const c = compareSelections(a, b, { metric: 'read_iops' });
    expect(c.ci!.low).toBeLessThan(2);
    expect(c.ci!.high).toBeGreaterThan(2);
    expect(c.ci!.low).toBeGreaterThan(1.8);
    expect(c.significant).toBe(true);
    expect(compareSelections(a, b, { metric: 'read_iops' }).ci).toEqual(c.ci);
  });

  it('the interval is the 2.5th-97.5th percentile of the comparisons of resampled sides, also with missing and zero points', () => {
    // The definition, computed the slow way: each iteration draws every side with
    // replacement (mulberry32, seed 1, A's draws before B's, as the engine does)
    // and compares the drawn observations. The engine reduces full points once per
    // row instead; the two must agree to rounding.
    let t = 1;
    const random = () => {
      t = (t + 0x6d2b79f5) >>> 0;
      let x = Math.imul(t ^ (t >>> 15), 1 | t);
      x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
      return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
    };
    const sizes = [4096, 8192, 65536];
    const run = (id: string, scale: number, i: number) =>
      diskperfObservation(id, id, sizes.map((req_size, s) => ({
        req_size,
        // Some runs lack a size or measured 0 at it: partial points, whose count varies per resample.
        values: { fwd_wt: scale * (1 + ((i * 7 + s) % 5) / 10), rnd_rd: s === 2 && i % 3 === 0 ? 0 : scale * (1 + ((i * 3 + s) % 4) / 10), ...(s === 1 && i % 2 === 0 ? {} : { bwd_rd: scale * (2 + (i % 3) / 5) }) },
      })));
    const a = Array.from({ length: 7 }, (_, i) => run(`a${i}`, 1.5, i));
    const b = Array.from({ length: 5 }, (_, i) => run(`b${i}`, 1, i + 1));
    const iterations = 300;
    const c = compareSelections(a, b, { iterations, seed: 1 });
    const ratios: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const drawnA = a.map(() => a[Math.floor(random() * a.length)]!);
      const drawnB = b.map(() => b[Math.floor(random() * b.length)]!);
      const r = compareSelections(drawnA, drawnB, { iterations: 0 }).ratio;
      if (r !== null) ratios.push(r);
    }
    ratios.sort((x, y) => x - y);
    const at = (q: number) => {
      const pos = (ratios.length - 1) * q;
      const lo = Math.floor(pos);
      return ratios[lo]! + (ratios[Math.ceil(pos)]! - ratios[lo]!) * (pos - lo);
    };
    expect(c.excluded.length).toBeGreaterThan(0);
    expect(c.ci!.low).toBeCloseTo(at(0.025), 12);
    expect(c.ci!.high).toBeCloseTo(at(0.975), 12);
    expect(c.ci!.low).toBeLessThan(c.ratio!);
    expect(c.ci!.high).toBeGreaterThan(c.ratio!);
  });

  it('overlapping sides are reported as no significant difference, benchstat style', () => {
    const a = [obs('a1', { read_iops: 100 }), obs('a2', { read_iops: 120 }), obs('a3', { read_iops: 90 })];
    const b = [obs('b1', { read_iops: 110 }), obs('b2', { read_iops: 95 }), obs('b3', { read_iops: 105 })];
    const c = compareSelections(a, b, { metric: 'read_iops', labels: { a: 'disk1', b: 'disk2' } });
    expect(c.significant).toBe(false);
    expect(c.sentence).toMatch(/^~ no significant difference between disk1 and disk2 on read_iops/);
  });

  it('metric groups pick the metrics of the formats at hand', () => {
    expect(metricsOf('write', ['diskperf'])).toEqual(['fwd_wt', 'bwd_wt', 'rnd_wt']);
    expect(metricsOf('random', ['diskperf'])).toEqual(['rnd_wt', 'rnd_rd']);
    expect(metricsOf('read', ['iostat'])).toEqual(['read_iops', 'read_kBps', 'read_ms']);
    expect(metricsOf('fwd_wt', ['iostat'])).toEqual([]);
  });

  it('an empty side or a metric neither format carries is an error naming what is allowed', () => {
    expect(() => compareSelections([], [obs('b', { iops: 1 })])).toThrow(CompareError);
    expect(() => compareSelections([obs('a', { iops: 1 })], [obs('b', { iops: 1 })], { metric: 'fwd_wt' })).toThrow(/expected a group/);
  });

  it('across formats only throughput is compared, with a warning', () => {
    const disk = diskperfObservation('d', 'disk', [{ req_size: 4096, values: { fwd_rd: 2, bwd_rd: 2, rnd_rd: 2, fwd_wt: 1, bwd_wt: 1, rnd_wt: 1 } }]);
    const c = compareSelections([disk], [obs('i', { read_kBps: 1024, write_kBps: 2048, iops: 5 })]);
    expect(c.metrics).toEqual(['read_kBps', 'write_kBps']);
    expect(c.byMetric.read_kBps!.ratio).toBeCloseTo(2, 10);
    expect(c.byMetric.write_kBps!.ratio).toBeCloseTo(0.5, 10);
    expect(c.warnings[0]).toMatch(/only read and write throughput are compared/);
  });
});

describe('the key of an answer', () => {
  const run = (id: string, fwd: number) => diskperfObservation(id, 'disk', [{ req_size: 4096, values: { fwd_wt: fwd, fwd_rd: 2 } }, { req_size: 8192, values: { fwd_wt: 3 } }]);

  it('is the same for the same observations and options, however they were built', () => {
    expect(comparisonKey([run('a', 1)], [run('b', 2)], { metric: 'write' })).toBe(comparisonKey([run('a', 1)], [run('b', 2)], { metric: 'write' }));
  });

  it('changes with any value, run, order or option the answer depends on', () => {
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
    ];
    expect(new Set([key, ...others]).size).toBe(others.length + 1);
  });
});
