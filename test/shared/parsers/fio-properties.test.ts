/**
 * Property: the same fio results written as fio 3.x JSON and as terse version 3 (the two
 * ways fio prints one run for machines) parse to the same records: job, group, error and,
 * per direction, IOPS, bandwidth, io bytes, runtime, lat and clat and the kept percentiles.
 * Figures are generated as fio holds them (KiB, ms, whole µs percentiles, ns latencies in
 * JSON, µs in terse), so each style's rounding is its own and never blurs the comparison.
 * FC_NUM_RUNS and FC_SEED as in properties.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFioText } from '../../../shared/parsers/fio.ts';
import type { FioJob } from '../../../shared/parsers/fio-record.ts';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS) > 0 ? Number(process.env.FC_NUM_RUNS) : 150;
const params = { numRuns: NUM_RUNS, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) };

/** The 17 percentiles fio reports by default; terse pads its 20 slots with `0%=0`. */
const PERCENTS = [1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99];

/** A latency as fio keeps it: whole µs bounds, mean and stddev to the ns. */
interface Latency {
  minUs: number;
  maxUs: number;
  meanNs: number;
  stddevNs: number;
}

interface Direction {
  ioKiB: number;
  bwKiB: number;
  iops: number;
  runtimeMs: number;
  slat: Latency;
  clat: Latency;
  lat: Latency;
  /** Whole µs, one per PERCENTS entry, rising. */
  percentilesUs: number[];
}

interface Job {
  name: string;
  groupId: number;
  error: number;
  read?: Direction;
  write?: Direction;
}

const latency: fc.Arbitrary<Latency> = fc
  .tuple(
    fc.integer({ min: 1, max: 50_000 }),
    fc.integer({ min: 0, max: 500_000 }),
    fc.double({ min: 0, max: 1, noNaN: true }),
  )
  .chain(([minUs, span, at]) =>
    fc.record({
      minUs: fc.constant(minUs),
      maxUs: fc.constant(minUs + span),
      meanNs: fc.constant(Math.round((minUs + span * at) * 1000)),
      stddevNs: fc.integer({ min: 0, max: 10_000_000 }),
    }),
  );

const direction: fc.Arbitrary<Direction> = fc.record({
  ioKiB: fc.integer({ min: 4, max: 2 ** 40 }),
  bwKiB: fc.integer({ min: 1, max: 20_000_000 }),
  iops: fc.integer({ min: 1, max: 5_000_000 }),
  runtimeMs: fc.integer({ min: 1, max: 86_400_000 }),
  slat: latency,
  clat: latency,
  lat: latency,
  percentilesUs: fc
    .array(fc.integer({ min: 0, max: 100_000 }), { minLength: PERCENTS.length, maxLength: PERCENTS.length })
    .map((steps) => steps.reduce<number[]>((out, step) => [...out, (out.at(-1) ?? 1) + step], [])),
});

const job: fc.Arbitrary<Job> = fc
  .record({
    name: fc.stringMatching(/^[a-z][a-z0-9_.-]{0,20}$/),
    groupId: fc.integer({ min: 0, max: 3 }),
    error: fc.constantFrom(0, 0, 0, 5),
    read: fc.option(direction, { nil: undefined }),
    write: fc.option(direction, { nil: undefined }),
  })
  .filter((j) => j.read !== undefined || j.write !== undefined)
  .map((j) => Object.fromEntries(Object.entries(j).filter(([, v]) => v !== undefined)) as unknown as Job);

// ---------------------------------------------------------------- fio 3.x JSON

const jsonLatency = (l: Latency, percentiles?: number[]) => ({
  min: l.minUs * 1000,
  max: l.maxUs * 1000,
  mean: l.meanNs,
  stddev: l.stddevNs,
  N: 1000,
  ...(percentiles
    ? { percentile: Object.fromEntries(PERCENTS.map((p, i) => [p.toFixed(6), percentiles[i]! * 1000])) }
    : {}),
});

const IDLE_JSON = {
  io_bytes: 0,
  io_kbytes: 0,
  bw_bytes: 0,
  bw: 0,
  iops: 0,
  runtime: 0,
  total_ios: 0,
  slat_ns: { min: 0, max: 0, mean: 0, stddev: 0, N: 0 },
  clat_ns: { min: 0, max: 0, mean: 0, stddev: 0, N: 0 },
  lat_ns: { min: 0, max: 0, mean: 0, stddev: 0, N: 0 },
};

function jsonDirection(d: Direction | undefined) {
  if (d === undefined) return IDLE_JSON;
  return {
    io_bytes: d.ioKiB * 1024,
    io_kbytes: d.ioKiB,
    bw_bytes: d.bwKiB * 1024,
    bw: d.bwKiB,
    iops: d.iops,
    runtime: d.runtimeMs,
    total_ios: Math.max(1, Math.round(d.ioKiB / 4)),
    slat_ns: jsonLatency(d.slat),
    clat_ns: jsonLatency(d.clat, d.percentilesUs),
    lat_ns: jsonLatency(d.lat),
  };
}

function asJson(jobs: Job[]): string {
  const document = {
    'fio version': 'fio-3.33',
    timestamp: 1_700_000_000,
    'global options': { ioengine: 'libaio', direct: '1' },
    jobs: jobs.map((j) => ({
      jobname: j.name,
      groupid: j.groupId,
      error: j.error,
      eta: 0,
      read: jsonDirection(j.read),
      write: jsonDirection(j.write),
      trim: IDLE_JSON,
    })),
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

// ---------------------------------------------------------------- terse version 3

/** fio prints a double with %f. */
const f = (value: number) => value.toFixed(6);
const terseLatency = (l: Latency) => [l.minUs, l.maxUs, f(l.meanNs / 1000), f(l.stddevNs / 1000)];
const IDLE_TERSE = [
  ...[0, 0, 0, 0],
  ...[0, 0, f(0), f(0)],
  ...[0, 0, f(0), f(0)],
  ...Array<string>(20).fill('0%=0'),
  ...[0, 0, f(0), f(0)],
  ...[0, 0, '0.000000%', f(0), f(0)],
];

function terseDirection(d: Direction | undefined): (string | number)[] {
  if (d === undefined) return IDLE_TERSE;
  const percentiles = PERCENTS.map((p, i) => `${f(p)}%=${d.percentilesUs[i]!}`);
  return [
    ...[d.ioKiB, d.bwKiB, d.iops, d.runtimeMs],
    ...terseLatency(d.slat),
    ...terseLatency(d.clat),
    ...percentiles,
    ...['0%=0', '0%=0', '0%=0'],
    ...terseLatency(d.lat),
    ...[d.bwKiB, d.bwKiB, '100.000000%', f(d.bwKiB), f(0)],
  ];
}

/** cpu usr, sys, ctx, majf, minf; 7 I/O depths; 10 µs and 12 ms latency buckets. */
const TERSE_TAIL = [
  ...['1.250000%', '4.500000%', 1200, 0, 30],
  ...['0.1%', '0.1%', '0.1%', '0.1%', '100.0%', '0.0%', '0.0%'],
  ...Array<string>(22).fill('0.00%'),
];

function asTerse(jobs: Job[]): string {
  return jobs
    .map((j) =>
      [
        3,
        'fio-3.33',
        j.name,
        j.groupId,
        j.error,
        ...terseDirection(j.read),
        ...terseDirection(j.write),
        ...TERSE_TAIL,
        ...['sda', 10, 20, 0, 0, 30, 40, 70, '95.00%'],
      ].join(';'),
    )
    .join('\n')
    .concat('\n');
}

/** What both styles carry: jobs without their line, their options and processes (terse has none) or their client. */
const results = (jobs: FioJob[]) => jobs.map(({ line: _l, options: _o, client: _c, processes: _p, ...job }) => job);

describe('fio json and terse of the same results', () => {
  it('give the same records', () => {
    fc.assert(
      fc.property(fc.array(job, { minLength: 1, maxLength: 4 }), (jobs) => {
        const fromJson = parseFioText(asJson(jobs), 'run.json');
        const fromTerse = parseFioText(asTerse(jobs), 'run.terse');
        expect([fromJson.style, fromTerse.style]).toEqual(['json', 'terse']);
        expect(fromJson.version).toBe(fromTerse.version);
        expect(results(fromTerse.jobs)).toEqual(results(fromJson.jobs));
        // And they are the figures written, not merely the same mistake twice.
        const first = jobs[0]!;
        const side = first.read ?? first.write!;
        const got = fromJson.jobs[0]!.directions[0]!;
        expect(got).toMatchObject({
          direction: first.read ? 'read' : 'write',
          iops: side.iops,
          bandwidthBytesPerSec: side.bwKiB * 1024,
          ioBytes: side.ioKiB * 1024,
          runtimeMs: side.runtimeMs,
          clatPercentilesUs: {
            p50: side.percentilesUs[6],
            p90: side.percentilesUs[10],
            p99: side.percentilesUs[12],
            'p99.9': side.percentilesUs[14],
            'p99.99': side.percentilesUs[16],
          },
        });
        expect(got.clat).toEqual({
          minUs: side.clat.minUs,
          maxUs: side.clat.maxUs,
          meanUs: side.clat.meanNs / 1000,
          stddevUs: side.clat.stddevNs / 1000,
        });
      }),
      params,
    );
  });
});
