/**
 * The comparison model on simulated ground truth (issue 12, item 7): 200 seeded
 * data sets per case, each side a label's generated sysstat 12 logs (3 disks,
 * one read-idle) parsed by the real parser, or for classes several labels of
 * one disk each, drawn from a population of disks. Per case:
 *   - the 95% interval covers the true ratio in at least 92% of the data sets;
 *   - with no effect, the summary is significant in at most 7%, and so is any
 *     point of the family (Holm's correction over the points shown);
 *   - a 1.30x effect with 4 runs a side and 3% noise is detected in at least 95%.
 */
import { describe, expect, it } from 'vitest';
import { compareObservations, type Comparison, type MetricSpec } from '../../shared/compare.ts';
import type { Observation } from '../../shared/comparison/observations.ts';
import { prng } from '../../shared/comparison/statistics.ts';
import { gaussian, sideObservations, THREE_DISKS } from '../../harness/ground-truth.ts';
import { recordStressSummary } from '../support/stress-summary.ts';

const DATA_SETS = 200;

interface Case {
  name: string;
  k: number;
  runs: number;
  noise: number;
  metric: MetricSpec;
  /** Labels a side, each of one disk drawn from a population (a class comparison); 0: one label of THREE_DISKS. */
  classOf?: number;
}

async function sides(c: Case, seed: number): Promise<[Observation[], Observation[]]> {
  if (c.classOf === undefined) {
    return [
      await sideObservations({
        label: 'a',
        disks: THREE_DISKS,
        k: c.k,
        noise: c.noise,
        runs: c.runs,
        seed: seed * 2 + 1,
      }),
      await sideObservations({
        label: 'b',
        disks: THREE_DISKS,
        k: 1,
        noise: c.noise,
        runs: c.runs,
        seed: seed * 2 + 2,
      }),
    ];
  }
  const population = prng(seed * 7 + 3);
  const cls = async (name: string, k: number, offset: number) => {
    const out: Observation[] = [];
    for (let u = 0; u < c.classOf!; u++) {
      const disk = { name: `sd${String.fromCharCode(97 + u)}`, level: Math.exp(0.2 * gaussian(population)) };
      out.push(
        ...(await sideObservations({
          label: `${name}${u}`,
          disks: [disk],
          k,
          noise: c.noise,
          runs: c.runs,
          seed: seed * 100 + offset + u,
        })),
      );
    }
    return out;
  };
  return [await cls('a', c.k, 0), await cls('b', 1, 50)];
}

interface Tally {
  covered: number;
  significant: number;
  anyPoint: number;
  withInterval: number;
}

async function simulate(c: Case): Promise<Tally> {
  const tally: Tally = { covered: 0, significant: 0, anyPoint: 0, withInterval: 0 };
  for (let s = 0; s < DATA_SETS; s++) {
    const [a, b] = await sides(c, s);
    const answer: Comparison = compareObservations(a, b, { metric: c.metric, seed: s + 1 });
    if (answer.ci === null) continue;
    tally.withInterval++;
    if (answer.ci.low <= c.k && answer.ci.high >= c.k) tally.covered++;
    if (answer.significant) tally.significant++;
    if (answer.rows.some((r) => r.significant === true)) tally.anyPoint++;
  }
  return tally;
}

const CASES: Case[] = [
  { name: 'no effect, 4 runs, 3% noise', k: 1, runs: 4, noise: 0.03, metric: 'all' },
  { name: '1.30x, 4 runs, 3% noise', k: 1.3, runs: 4, noise: 0.03, metric: 'all' },
  { name: '1.15x, 2 runs, 3% noise', k: 1.15, runs: 2, noise: 0.03, metric: 'write' },
  { name: 'no effect, 8 runs, 10% noise', k: 1, runs: 8, noise: 0.1, metric: 'read' },
  { name: 'classes, no effect, 4 labels a side, 2 runs', k: 1, runs: 2, noise: 0.03, metric: 'write', classOf: 4 },
  { name: 'classes, 1.30x, 3 labels a side, 1 run', k: 1.3, runs: 1, noise: 0.03, metric: 'write', classOf: 3 },
];

describe('comparison model on simulated ground truth', () => {
  it(`intervals cover, no effect is rarely significant, 1.30x is found: ${CASES.length} cases x ${DATA_SETS} data sets`, async (context) => {
    const failures: string[] = [];
    const lines: string[] = [];
    for (const c of CASES) {
      const t = await simulate(c);
      const coverage = t.covered / t.withInterval;
      lines.push(
        `${c.name}: covered ${(coverage * 100).toFixed(1)}%, significant ${((t.significant / t.withInterval) * 100).toFixed(1)}%`,
      );
      if (t.withInterval < DATA_SETS)
        failures.push(`${c.name}: ${DATA_SETS - t.withInterval} data sets without an interval`);
      if (coverage < 0.92)
        failures.push(`${c.name}: the interval covered ${c.k} in ${(coverage * 100).toFixed(1)}% (at least 92%)`);
      if (c.k === 1 && t.significant / t.withInterval > 0.07)
        failures.push(`${c.name}: significant in ${t.significant} of ${t.withInterval} with no effect (at most 7%)`);
      if (c.k === 1 && t.anyPoint / t.withInterval > 0.07)
        failures.push(
          `${c.name}: some point significant in ${t.anyPoint} of ${t.withInterval} with no effect (Holm: at most 7%)`,
        );
      if (c.k === 1.3 && c.runs === 4 && t.significant / t.withInterval < 0.95)
        failures.push(`${c.name}: detected in ${t.significant} of ${t.withInterval} (at least 95%)`);
    }
    recordStressSummary(context, {
      section: 'comparison model',
      cases: CASES.length * DATA_SETS,
      failures: failures.length,
      lost: 0,
      detail: lines.join('; '),
    });
    expect(failures).toEqual([]);
  });
});
