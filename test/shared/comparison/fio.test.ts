/**
 * fio comparisons (shared/comparison/): on constructed ground truth, where side A's
 * figures are a known multiple of side B's at every point with seeded run-to-run noise,
 * the ratio comes out at that multiple and its interval holds it; over many simulated
 * comparisons the 95% interval covers the true ratio about as often as it says, and
 * equal sides rarely come out different. Also: no interval from one run a side, fio
 * against diskperf on diskperf's columns and against iostat on throughput, the warning
 * of differing fio parameters, the point column of the printed tables, and fio's metrics.
 */
import { describe, expect, it } from 'vitest';
import { fioJson, type WrittenJob } from '../../../harness/fio-output.ts';
import { fioPointKey, type FioPoint } from '../../../shared/fio-point.ts';
import { FIO_METRICS, METRICS, type FioMetric, type Metric } from '../../../shared/metrics.ts';
import type { FioRun } from '../../../shared/model.ts';
import {
  compareObservations,
  comparisonTable,
  diskperfObservation,
  fioObservation,
  iostatObservation,
  metricsOf,
  tableCsv,
  tableMarkdown,
  type Comparison,
  type Observation,
} from '../../../shared/comparison/index.ts';
import { parseText } from '../../../shared/parsers/driver.ts';

/** A seeded uniform PRNG on [0, 1) (mulberry32). */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal draw (Box-Muller). */
const gaussian = (random: () => number) => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

/** Multiplicative noise: exp(sigma x N(0, 1)). */
const noise = (random: () => number, sigma: number) => Math.exp(sigma * gaussian(random));

/** The points of a sweep: reads and writes, random and sequential, queue depths and jobs. */
const SWEEP: readonly WrittenJob[] = [
  { rw: 'randread', bs: 4096, iodepth: 1, iops: 12_000 },
  { rw: 'randread', bs: 4096, iodepth: 32, iops: 180_000 },
  { rw: 'read', bs: 131072, iodepth: 8, iops: 20_000 },
  { rw: 'randwrite', bs: 4096, iodepth: 32, iops: 90_000 },
  { rw: 'write', bs: 1048576, iodepth: 4, numjobs: 2, iops: 2000 },
];

const pointOf = (j: WrittenJob): FioPoint => ({ rw: j.rw, bs: j.bs, iodepth: j.iodepth, numjobs: j.numjobs ?? 1 });
const isRead = (j: WrittenJob) => j.rw === 'read' || j.rw === 'randread';

/** One pass of the sweep at `scale` times its IOPS, each job with its own noise. */
const pass = (scale: number, random: () => number, sigma: number): WrittenJob[] =>
  SWEEP.map((j) => ({ ...j, iops: j.iops * scale * noise(random, sigma) }));

/** Each fio output parsed by the driver, each of its runs an observation of `label`. */
async function observed(label: string, outputs: readonly string[]): Promise<Observation[]> {
  const observations: Observation[] = [];
  for (const [i, text] of outputs.entries()) {
    const parsed = await parseText(text, `${label}-${i}.json`);
    for (const run of parsed.runs as FioRun[])
      observations.push(fioObservation(`${label}-${i}-${run.index}`, label, run.rows, { meta: run.meta }));
  }
  return observations;
}

const within = (value: number | null | undefined, target: number, tolerance: number) =>
  value !== null && value !== undefined && Math.abs(value / target - 1) < tolerance;

describe('fio ground truth: A has 1.5x the IOPS of B at every point, 4 runs a side', () => {
  const TRUE_RATIO = 1.5;
  const SIGMA = 0.01;
  const random = prng(20240601);
  // A: one output with the sweep four times (four runs); B: four outputs of one pass each.
  const outputA = fioJson({ jobs: [0, 1, 2, 3].flatMap(() => pass(TRUE_RATIO, random, SIGMA)) });
  const outputsB = [0, 1, 2, 3].map(() => fioJson({ jobs: pass(1, random, SIGMA) }));
  const sides = Promise.all([observed('nvme-new', [outputA]), observed('nvme-old', outputsB)]);

  it('reads four runs a side from one output or four', async () => {
    const [a, b] = await sides;
    expect(a.map((o) => o.runId)).toEqual(['nvme-new-0-0', 'nvme-new-0-1', 'nvme-new-0-2', 'nvme-new-0-3']);
    expect(b).toHaveLength(4);
    expect([...(a[0]!.values.fio_read_iops as Map<string, number>).keys()]).toEqual(
      SWEEP.filter(isRead).map((j) => fioPointKey(pointOf(j))),
    );
  });

  it('finds the ratio within 1%, its interval holding it, at every read point', async () => {
    const [a, b] = await sides;
    const c = compareObservations(a, b, { metric: 'fio_read_iops', seed: 7, iterations: 1000 });
    expect(within(c.ratio, TRUE_RATIO, 0.01)).toBe(true);
    expect(c.ci).toMatchObject({ method: 'bootstrap-t', over: 'runs', replicates: { a: 4, b: 4 }, iterations: 1000 });
    expect(c.ci!.low).toBeLessThanOrEqual(TRUE_RATIO);
    expect(c.ci!.high).toBeGreaterThanOrEqual(TRUE_RATIO);
    expect(c.ci!.label).toBe('95% interval over 4 runs a side');
    expect(c.significant).toBe(true);
    expect(c.metrics).toEqual(['fio_read_iops']);
    const reads = SWEEP.filter(isRead);
    expect(c.rows).toHaveLength(reads.length);
    expect(c.rows.map((r) => ({ rw: r.rw, bs: r.bs, iodepth: r.iodepth, numjobs: r.numjobs }))).toEqual(
      reads.map(pointOf),
    );
    for (const [i, row] of c.rows.entries()) {
      expect(row.metric).toBe('fio_read_iops');
      expect(row.point).toBe(fioPointKey(pointOf(reads[i]!)));
      expect(row.req_size).toBeUndefined();
      expect(within(row.ratio, TRUE_RATIO, 0.03)).toBe(true);
      expect(within(row.a, reads[i]!.iops * TRUE_RATIO, 0.03)).toBe(true);
      expect(within(row.b, reads[i]!.iops, 0.03)).toBe(true);
      expect(row.spread).toEqual({ a: expect.objectContaining({ runs: 4 }), b: expect.objectContaining({ runs: 4 }) });
    }
    expect(c.sentence).toMatch(/^A is 1\.(49|50|51)x B on fio_read_iops \(3 points/);
  });

  it('finds the same ratio on the write points (numjobs 2 among them)', async () => {
    const [a, b] = await sides;
    const c = compareObservations(a, b, { metric: 'fio_write_iops', seed: 7, iterations: 1000 });
    expect(within(c.ratio, TRUE_RATIO, 0.01)).toBe(true);
    expect(c.ci!.low).toBeLessThanOrEqual(TRUE_RATIO);
    expect(c.ci!.high).toBeGreaterThanOrEqual(TRUE_RATIO);
    expect(c.rows.map((r) => r.point)).toEqual([
      'randwrite bs=4096 iodepth=32 numjobs=1',
      'write bs=1048576 iodepth=4 numjobs=2',
    ]);
  });

  it("finds it on bandwidth and mean latency too (Little's law: the latency is 1.5x lower)", async () => {
    const [a, b] = await sides;
    const c = compareObservations(a, b, { metric: 'all', seed: 7, iterations: 500 });
    expect(c.metrics).toEqual(['fio_read_bw', 'fio_read_lat', 'fio_write_bw', 'fio_write_lat']);
    expect(within(c.ratio, TRUE_RATIO, 0.01)).toBe(true);
    for (const metric of c.metrics) expect(within(c.byMetric[metric]!.ratio, TRUE_RATIO, 0.02)).toBe(true);
    expect(c.byMetric.fio_read_lat!.direction).toBe('lower-better');
    const lat = c.rows.find((r) => r.metric === 'fio_read_lat' && r.iodepth === 32)!;
    // A's latency is the lower one, and the ratio says A is better.
    expect(lat.a!).toBeLessThan(lat.b!);
    expect(lat.ratio!).toBeGreaterThan(1);
    expect(c.points).toBe(SWEEP.length * 2);
  });

  it('prints the point of each row in the table, CSV and Markdown', async () => {
    const [a, b] = await sides;
    const c = compareObservations(a, b, { metric: 'fio_read_iops', seed: 7, iterations: 200 });
    const table = comparisonTable(c);
    expect(table.columns[1]).toBe('point (rw bs qd jobs)');
    expect(table.columns).not.toContain('req size (bytes)');
    const points = table.rows.filter((r) => r.kind === 'point');
    expect(points.map((r) => r.point)).toEqual(c.rows.map((r) => r.point));
    expect(points.map((r) => r.cells[1])).toEqual(['randread 4k qd1 nj1', 'randread 4k qd32 nj1', 'read 128k qd8 nj1']);

    const csv = tableCsv(table).split('\r\n');
    expect(csv[0]!.startsWith('metric,point (rw bs qd jobs),')).toBe(true);
    expect(csv[1]!.startsWith('fio_read_iops,randread 4k qd1 nj1,')).toBe(true);
    expect(csv[3]!.startsWith('fio_read_iops,read 128k qd8 nj1,')).toBe(true);

    const markdown = tableMarkdown(table);
    expect(markdown).toContain('| metric | point (rw bs qd jobs) |');
    expect(markdown).toContain('| fio\\_read\\_iops | randread 4k qd32 nj1 |');
  });
});

/** Observations built straight from rows: `runs` runs of `label`, `scale` times the base at each point. */
function simulatedSide(label: string, scale: number, runs: number, random: () => number, sigma: number) {
  const points: FioPoint[] = [
    { rw: 'randread', bs: 4096, iodepth: 32, numjobs: 1 },
    { rw: 'randread', bs: 4096, iodepth: 1, numjobs: 1 },
    { rw: 'read', bs: 131072, iodepth: 8, numjobs: 4 },
  ];
  return Array.from({ length: runs }, (_, r) =>
    fioObservation(
      `${label}-${r}`,
      label,
      points.map((point, i) => ({ point, values: { fio_read_iops: 1000 * (i + 1) * scale * noise(random, sigma) } })),
    ),
  );
}

describe('fio intervals over many simulated comparisons', () => {
  const SIMULATIONS = 200;
  const SIGMA = 0.05;

  it('covers the true ratio with the 95% interval about as often as it says', () => {
    const trueRatio = 1.3;
    let covered = 0;
    for (let s = 0; s < SIMULATIONS; s++) {
      const random = prng(1000 + s);
      const a = simulatedSide('a', trueRatio, 4, random, SIGMA);
      const b = simulatedSide('b', 1, 4, random, SIGMA);
      const c = compareObservations(a, b, { metric: 'fio_read_iops', seed: s + 1, iterations: 200 });
      if (c.ci!.low <= trueRatio && trueRatio <= c.ci!.high) covered++;
    }
    const coverage = covered / SIMULATIONS;
    expect(coverage).toBeGreaterThanOrEqual(0.85);
    // Not every time either: an interval that always covers is wider than 95% says.
    expect(coverage).toBeLessThanOrEqual(0.995);
  });

  it('rarely calls equal sides different', () => {
    let significant = 0;
    for (let s = 0; s < SIMULATIONS; s++) {
      const random = prng(5000 + s);
      const a = simulatedSide('a', 1, 4, random, SIGMA);
      const b = simulatedSide('b', 1, 4, random, SIGMA);
      const c = compareObservations(a, b, { metric: 'fio_read_iops', seed: s + 1, iterations: 200 });
      expect(c.significant).not.toBeNull();
      if (c.significant === true) significant++;
    }
    expect(significant / SIMULATIONS).toBeLessThan(0.15);
  });

  it('calls a real 1.3x difference significant nearly always', () => {
    let significant = 0;
    for (let s = 0; s < 50; s++) {
      const random = prng(9000 + s);
      const c = compareObservations(
        simulatedSide('a', 1.3, 4, random, SIGMA),
        simulatedSide('b', 1, 4, random, SIGMA),
        { metric: 'fio_read_iops', seed: s + 1, iterations: 200 },
      );
      if (c.significant === true) significant++;
    }
    expect(significant).toBeGreaterThanOrEqual(45);
  });
});

describe('one fio run a side', () => {
  const rows = (scale: number) =>
    SWEEP.filter(isRead).map((j) => ({ point: pointOf(j), values: { fio_read_iops: j.iops * scale } }));
  const c = compareObservations([fioObservation('a1', 'new', rows(1.5))], [fioObservation('b1', 'old', rows(1))], {
    metric: 'fio_read_iops',
    seed: 1,
    iterations: 200,
  });

  it('has the ratio but no interval, and says it needs 2 runs a side', () => {
    expect(c.ratio).toBe(1.5);
    expect(c.rows.map((r) => r.ratio)).toEqual([1.5, 1.5, 1.5]);
    expect(c.ci).toBeNull();
    expect(c.significant).toBeNull();
    expect(c.rows.every((r) => r.ci === undefined)).toBe(true);
    expect(c.ciNote).toBe(
      'no interval: it needs at least 2 runs on each side (A has 1 run, B has 1 run); ' +
        'with one run nothing is known of run-to-run noise',
    );
  });
});

describe('fio against diskperf', () => {
  const SIZES = [4096, 65536, 1048576];
  /** diskperf's figures (MB/s) at a request size. */
  const diskperfRow = (req_size: number, scale: number) => {
    const base = Math.log2(req_size);
    return {
      req_size,
      values: { fwd_rd: 3 * base * scale, fwd_wt: 2 * base * scale, rnd_rd: base * scale, rnd_wt: 0.5 * base * scale },
    };
  };
  const COLUMN_OF_RW = { read: 'fwd_rd', write: 'fwd_wt', randread: 'rnd_rd', randwrite: 'rnd_wt' } as const;

  /** A fio run whose one-request-at-a-time jobs measure `ratio` times diskperf's table, beside jobs that do not count. */
  function fioRows(ratio: number, random: () => number) {
    const rows: { point: FioPoint; values: Partial<Record<FioMetric, number>> }[] = [];
    for (const bs of SIZES) {
      const table = diskperfRow(bs, 1).values;
      for (const [rw, column] of Object.entries(COLUMN_OF_RW)) {
        const metric: FioMetric = rw.endsWith('read') ? 'fio_read_bw' : 'fio_write_bw';
        const bw = table[column] * ratio * noise(random, 0.005);
        rows.push({ point: { rw, bs, iodepth: 1, numjobs: 1 }, values: { [metric]: bw } });
        // Deeper queues and more jobs than diskperf's one request: not its table.
        rows.push({ point: { rw, bs, iodepth: 32, numjobs: 1 }, values: { [metric]: bw * 10 } });
        rows.push({ point: { rw, bs, iodepth: 1, numjobs: 4 }, values: { [metric]: bw * 7 } });
      }
    }
    rows.push({ point: { rw: 'randrw', bs: 4096, iodepth: 1, numjobs: 1 }, values: { fio_read_bw: 999 } });
    rows.push({ point: { rw: 'read', bs: '4k-64k', iodepth: 1, numjobs: 1 }, values: { fio_read_bw: 999 } });
    rows.push({ point: { job: 'seq' }, values: { fio_read_bw: 999 } });
    return rows;
  }

  const random = prng(77);
  const a = [0, 1, 2].map((r) => fioObservation(`f${r}`, 'nvme', fioRows(2, random)));
  const b = [0, 1, 2].map((r) =>
    diskperfObservation(
      `d${r}`,
      'scsi2sd',
      SIZES.map((s) => diskperfRow(s, noise(random, 0.005))),
    ),
  );
  const c = compareObservations(a, b, { metric: 'all', seed: 3, iterations: 500 });

  it("compares on diskperf's columns at equal request sizes, from fio's qd1 nj1 jobs", () => {
    const compared = new Set(c.rows.map((r) => r.metric));
    expect([...compared].sort()).toEqual(['fwd_rd', 'fwd_wt', 'rnd_rd', 'rnd_wt']);
    expect(c.rows).toHaveLength(4 * SIZES.length);
    for (const row of c.rows) {
      expect(SIZES).toContain(row.req_size);
      expect(row.point).toBeUndefined();
      expect(within(row.ratio, 2, 0.03)).toBe(true);
    }
    expect(c.excluded).toEqual([]);
  });

  it('finds the known ratio, its interval holding it', () => {
    expect(within(c.ratio, 2, 0.01)).toBe(true);
    expect(c.ci!.low).toBeLessThanOrEqual(2);
    expect(c.ci!.high).toBeGreaterThanOrEqual(2);
    expect(c.ci!.replicates).toEqual({ a: 3, b: 3 });
  });

  it('warns that the tools differ, among the setup warnings', () => {
    const warning = c.warnings.findIndex((w) => w.startsWith('A is fio and B is diskperf: compared on diskperf'));
    expect(warning).toBeGreaterThanOrEqual(0);
    expect(c.warnings[warning]).toContain('iodepth 1 and numjobs 1');
    expect(c.warnings[warning]).toMatch(/the tools measure differently$/);
    expect(c.setups.warnings).toContain(warning);
    expect(c.setups.differs).toContain('format');
  });

  it('is the same comparison the other way round, inverted', () => {
    const back = compareObservations(b, a, { metric: 'all', seed: 3, iterations: 500 });
    expect(back.warnings[0]).toMatch(/^A is diskperf and B is fio: /);
    expect(within(back.ratio, 0.5, 0.01)).toBe(true);
    expect(within(back.ratio! * c.ratio!, 1, 1e-4)).toBe(true);
  });
});

describe('fio against iostat', () => {
  it("compares read and write throughput: fio's MiB/s (x1024, geometric mean over points) against kB/s", () => {
    const fio = (runId: string) =>
      fioObservation(runId, 'nvme', [
        { point: { rw: 'read', bs: 131072, iodepth: 8, numjobs: 1 }, values: { fio_read_bw: 100 } },
        { point: { rw: 'randread', bs: 4096, iodepth: 32, numjobs: 1 }, values: { fio_read_bw: 400 } },
        { point: { rw: 'write', bs: 131072, iodepth: 8, numjobs: 1 }, values: { fio_write_bw: 50 } },
      ]);
    const iostat = (runId: string) =>
      iostatObservation(
        runId,
        'box/sda',
        { read_kBps: { mean: 102_400, count: 12 }, write_kBps: { mean: 51_200, count: 12 } },
        12,
        { label: 'box', platform: 'linux' },
      );
    const c = compareObservations([fio('f1'), fio('f2')], [iostat('i1'), iostat('i2')], { seed: 1, iterations: 200 });
    expect(c.metrics).toEqual(['read_kBps', 'write_kBps']);
    // Reads: sqrt(100 x 400) = 200 MiB/s = 204,800 kB/s, twice 102,400; writes 51,200 on both.
    expect(c.byMetric.read_kBps!.ratio).toBe(2);
    expect(c.byMetric.write_kBps!.ratio).toBe(1);
    expect(c.rows.find((r) => r.metric === 'read_kBps')!.a).toBe(204_800);
    expect(c.warnings[0]).toMatch(/^A is fio and B is iostat: only read and write throughput are compared/);
    expect(c.warnings[0]).toContain("fio's MiB/s (x1024)");
  });
});

describe('fio runs of different parameters', () => {
  const sweep: WrittenJob[] = [
    { rw: 'randread', bs: 4096, iodepth: 32, iops: 100_000 },
    { rw: 'write', bs: 131072, iodepth: 4, iops: 5000 },
  ];
  const scaled = (scale: number) => sweep.map((j) => ({ ...j, iops: j.iops * scale }));
  const compare = (a: Observation[], b: Observation[]): Comparison =>
    compareObservations(a, b, { metric: 'all', seed: 1, iterations: 200 });
  const FIO_WARNING = /the fio runs used different parameters/;

  it('warns when the sides ran different ioengines, and the setups say so', async () => {
    const a = await observed('new', [fioJson({ jobs: sweep }), fioJson({ jobs: scaled(1.01) })]);
    const b = await observed('old', [
      fioJson({ jobs: sweep, ioengine: 'io_uring' }),
      fioJson({ jobs: scaled(0.99), ioengine: 'io_uring' }),
    ]);
    const c = compare(a, b);
    const warning = c.warnings.findIndex((w) => FIO_WARNING.test(w));
    expect(c.warnings[warning]).toBe(
      'the fio runs used different parameters (ioengine libaio on A, io_uring on B): ' +
        "the difference may be the setup's (caching, file placement, run length), not the disk's",
    );
    expect(c.setups.warnings).toContain(warning);
    expect(c.setups.differs).toEqual(['parameters.ioengine']);
    expect(c.setups.a[0]!.parameters).toEqual({
      ioengine: 'libaio',
      direct: '1',
      size: '4G',
      runtime: '30',
      fio: 'fio-3.36',
    });
    expect(c.setups.b.map((s) => s.parameters!.ioengine)).toEqual(['io_uring', 'io_uring']);
  });

  it('warns of different fio versions, as the setup key fio', async () => {
    const a = await observed('new', [fioJson({ jobs: sweep }), fioJson({ jobs: sweep })]);
    const b = await observed('old', [
      fioJson({ jobs: sweep, version: 'fio-3.28' }),
      fioJson({ jobs: sweep, version: 'fio-3.28' }),
    ]);
    const c = compare(a, b);
    expect(c.warnings.filter((w) => FIO_WARNING.test(w))).toEqual([
      'the fio runs used different parameters (fio fio-3.36 on A, fio-3.28 on B): ' +
        "the difference may be the setup's (caching, file placement, run length), not the disk's",
    ]);
    expect(c.setups.differs).toEqual(['parameters.fio']);
  });

  it('warns of runs of one side that differ: they are not replicates', async () => {
    const a = await observed('new', [fioJson({ jobs: sweep }), fioJson({ jobs: sweep, runtimeMs: 60_000 })]);
    const b = await observed('old', [fioJson({ jobs: sweep }), fioJson({ jobs: sweep })]);
    const c = compare(a, b);
    expect(c.warnings).toContain(
      "A's fio runs used different parameters (runtime 30 / 60): they are not replicates of one test",
    );
    expect(c.warnings.some((w) => FIO_WARNING.test(w))).toBe(false);
    expect(c.setups.differs).toEqual(['parameters.runtime']);
  });

  it('says nothing of parameters when both sides ran alike', async () => {
    const a = await observed('new', [fioJson({ jobs: sweep }), fioJson({ jobs: scaled(1.02) })]);
    const b = await observed('old', [fioJson({ jobs: scaled(0.5) }), fioJson({ jobs: scaled(0.52) })]);
    const c = compare(a, b);
    expect(c.warnings.filter((w) => /parameters/.test(w))).toEqual([]);
    expect(c.setups.differs).toEqual([]);
    expect(within(c.ratio, 2, 0.03)).toBe(true);
  });
});

describe('fio job-only points (terse outputs)', () => {
  it('pair by job name and print it in the point column', () => {
    const side = (label: string, scale: number) =>
      [0, 1].map((r) =>
        fioObservation(`${label}${r}`, label, [
          { point: { job: 'seq-read' }, values: { fio_read_bw: 1000 * scale * (1 + r / 100) } },
          { point: { job: 'rand-write' }, values: { fio_write_bw: 100 * scale * (1 + r / 100) } },
        ]),
      );
    const c = compareObservations(side('a', 3), side('b', 1), { metric: 'all', seed: 1, iterations: 200 });
    expect(c.rows.map((r) => [r.metric, r.point, r.job, r.ratio])).toEqual([
      ['fio_read_bw', 'job=seq-read', 'seq-read', 3],
      ['fio_write_bw', 'job=rand-write', 'rand-write', 3],
    ]);
    expect(c.rows[0]!.rw).toBeUndefined();
    const table = comparisonTable(c);
    expect(table.rows.filter((r) => r.kind === 'point').map((r) => r.cells[1])).toEqual([
      'job seq-read',
      'job rand-write',
    ]);
  });
});

describe("fio's metrics", () => {
  const DIRECTIONS = ['read', 'write', 'trim', 'mixed'] as const;
  const PERCENTILES = ['p50', 'p90', 'p99', 'p99_9', 'p99_99'] as const;

  it('are every measure of every direction, each with its unit and direction', () => {
    expect(FIO_METRICS).toHaveLength(32);
    expect(FIO_METRICS.slice(0, 8)).toEqual([
      'fio_read_bw',
      'fio_read_iops',
      'fio_read_lat',
      'fio_read_p50',
      'fio_read_p90',
      'fio_read_p99',
      'fio_read_p99_9',
      'fio_read_p99_99',
    ]);
    for (const d of DIRECTIONS) {
      expect(METRICS[`fio_${d}_bw`]).toMatchObject({ unit: 'MiB/s', direction: 'higher-better' });
      expect(METRICS[`fio_${d}_iops`]).toMatchObject({ unit: 'IOPS', direction: 'higher-better', groups: [] });
      expect(METRICS[`fio_${d}_lat`]).toMatchObject({ unit: 'us', direction: 'lower-better' });
      for (const p of PERCENTILES)
        expect(METRICS[`fio_${d}_${p}`]).toMatchObject({ unit: 'us', direction: 'lower-better', groups: ['latency'] });
    }
  });

  it('join groups: bandwidth and mean latency their direction and all; percentiles latency only; IOPS none', () => {
    expect(metricsOf('read', ['fio'])).toEqual(['fio_read_bw', 'fio_read_lat']);
    expect(metricsOf('write', ['fio'])).toEqual(['fio_write_bw', 'fio_write_lat']);
    expect(metricsOf('all', ['fio'])).toEqual(DIRECTIONS.flatMap((d) => [`fio_${d}_bw`, `fio_${d}_lat`] as Metric[]));
    expect(metricsOf('latency', ['fio'])).toEqual(
      DIRECTIONS.flatMap((d) => [`fio_${d}_lat`, ...PERCENTILES.map((p) => `fio_${d}_${p}`)] as Metric[]),
    );
    for (const group of ['read', 'write', 'seq', 'random', 'latency', 'all'] as const)
      expect(metricsOf(group, ['fio']).some((m) => m.endsWith('_iops'))).toBe(false);
    expect(metricsOf('fio_read_iops', ['fio'])).toEqual(['fio_read_iops']);
    expect(metricsOf('fio_read_iops', ['diskperf', 'iostat'])).toEqual([]);
    expect(metricsOf('all', ['diskperf']).some((m) => m.startsWith('fio_'))).toBe(false);
  });

  it('compare percentiles on the latency group, lower better', () => {
    const side = (label: string, scale: number) =>
      [0, 1, 2].map((r) =>
        fioObservation(`${label}${r}`, label, [
          {
            point: { rw: 'randread', bs: 4096, iodepth: 1, numjobs: 1 },
            values: { fio_read_lat: 100 * scale + r, fio_read_p99: 400 * scale + r, fio_read_iops: 10_000 / scale },
          },
        ]),
      );
    const c = compareObservations(side('fast', 1), side('slow', 2), { metric: 'latency', seed: 1, iterations: 200 });
    expect(c.metrics).toEqual(['fio_read_lat', 'fio_read_p99']);
    expect(within(c.byMetric.fio_read_lat!.ratio, 2, 0.02)).toBe(true);
    expect(within(c.byMetric.fio_read_p99!.ratio, 2, 0.02)).toBe(true);
  });
});
