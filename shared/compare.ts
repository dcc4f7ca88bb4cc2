/**
 * How much faster is A than B: the comparison engine (DESIGN.md section 6).
 *
 * Each side is a set of observations: a diskperf run (points per metric and
 * request size) or an iostat series (one point per metric, its summary mean).
 * Points pair up by (metric, req_size) or by metric; several observations on a
 * side are combined per point by geometric mean. A point's ratio says how many
 * times better A is: A/B for higher-better metrics, B/A for lower-better ones.
 * The summary ratio is the geometric mean of the point ratios; points where a
 * side is missing or zero are excluded and listed with the reason. With at least
 * two observations on each side, a 95% interval comes from a bootstrap over
 * observations (fixed seed: the same data always gives the same interval), and
 * the difference is significant when the interval excludes 1. The answer ends in
 * one plain sentence, benchstat-style honest about what it could not say.
 */
import { DISKPERF_METRICS, IOSTAT_METRICS, isMetric, METRIC_GROUPS, METRICS, type Metric, type MetricGroup } from './metrics.ts';
import type { Format } from './model.ts';

export interface Observation {
  /** The run, and for iostat the series, it comes from. */
  runId: string;
  device: string;
  format: Format;
  /** diskperf: values by metric and request size; iostat: summary means by metric. */
  values: Partial<Record<Metric, number | Record<number, number>>>;
  /** iostat: samples behind the means (a mean of one sample, or of the since-boot report, is weak). */
  samples?: number;
  sinceBootOnly?: boolean;
}

export interface ComparisonPoint {
  metric: Metric;
  req_size?: number;
  a?: number;
  b?: number;
  /** How many times better A is at this point. */
  ratio?: number;
  excluded?: string;
}

export interface MetricRatio {
  ratio: number;
  points: number;
  min: number;
  max: number;
}

export interface SideSummary {
  selector: string;
  label: string;
  runs: number;
  observations: number;
  devices: string[];
  formats: Format[];
}

export interface Comparison {
  a: SideSummary;
  b: SideSummary;
  metric: string;
  metrics: Metric[];
  /** Geometric mean of the point ratios; null when no point could be paired. */
  ratio: number | null;
  byMetric: Partial<Record<Metric, MetricRatio>>;
  points: number;
  min: number | null;
  max: number | null;
  rows: ComparisonPoint[];
  excluded: ComparisonPoint[];
  ci: { level: 0.95; low: number; high: number; method: 'bootstrap'; iterations: number; seed: number } | null;
  ciNote?: string;
  /** The interval excludes 1; null when there is no interval. */
  significant: boolean | null;
  warnings: string[];
  sentence: string;
}

export type MetricSpec = MetricGroup | Metric;

export class CompareError extends Error {
  override readonly name = 'CompareError';
}

export const METRIC_SPEC_HELP = `a group (${METRIC_GROUPS.join(', ')}) or a metric (${[...DISKPERF_METRICS, ...IOSTAT_METRICS].join(', ')})`;

export function isMetricSpec(value: string): value is MetricSpec {
  return (METRIC_GROUPS as readonly string[]).includes(value) || isMetric(value);
}

/** The metrics a spec stands for, among those the formats carry. */
export function metricsOf(spec: MetricSpec, formats: readonly Format[]): Metric[] {
  const pool: Metric[] = [...(formats.includes('diskperf') ? DISKPERF_METRICS : []), ...(formats.includes('iostat') ? IOSTAT_METRICS : [])];
  if (isMetric(spec)) return pool.includes(spec) ? [spec] : [];
  if (spec === 'all') return pool;
  return pool.filter((m) => METRICS[m].groups.includes(spec));
}

export interface CompareOptions {
  metric?: MetricSpec;
  labels?: { a: string; b: string };
  selectors?: { a: string; b: string };
  iterations?: number;
  seed?: number;
}

type PointKey = string;
const keyOf = (metric: Metric, reqSize?: number): PointKey => (reqSize === undefined ? metric : `${metric}@${reqSize}`);

/** Point values of one observation for these metrics. */
function pointsOf(o: Observation, metrics: readonly Metric[]): Map<PointKey, { metric: Metric; req_size?: number; value: number }> {
  const out = new Map<PointKey, { metric: Metric; req_size?: number; value: number }>();
  for (const metric of metrics) {
    const v = o.values[metric];
    if (v === undefined) continue;
    if (typeof v === 'number') out.set(keyOf(metric), { metric, value: v });
    else for (const [size, value] of Object.entries(v)) out.set(keyOf(metric, Number(size)), { metric, req_size: Number(size), value });
  }
  return out;
}

/** Geometric mean per point over a side's observations; zero or negative values make the point unusable. */
function combine(side: readonly Observation[], metrics: readonly Metric[]): Map<PointKey, { metric: Metric; req_size?: number; value: number; zero: boolean }> {
  const acc = new Map<PointKey, { metric: Metric; req_size?: number; logSum: number; n: number; zero: boolean }>();
  for (const o of side) {
    for (const [key, p] of pointsOf(o, metrics)) {
      const entry = acc.get(key) ?? { metric: p.metric, ...(p.req_size !== undefined ? { req_size: p.req_size } : {}), logSum: 0, n: 0, zero: false };
      if (p.value > 0) {
        entry.logSum += Math.log(p.value);
        entry.n++;
      } else entry.zero = true;
      acc.set(key, entry);
    }
  }
  const out = new Map<PointKey, { metric: Metric; req_size?: number; value: number; zero: boolean }>();
  for (const [key, e] of acc) {
    const value = e.zero ? 0 : Math.exp(e.logSum / e.n);
    out.set(key, { metric: e.metric, ...(e.req_size !== undefined ? { req_size: e.req_size } : {}), value, zero: e.zero });
  }
  return out;
}

function pair(a: readonly Observation[], b: readonly Observation[], metrics: readonly Metric[]): ComparisonPoint[] {
  const ca = combine(a, metrics);
  const cb = combine(b, metrics);
  const keys = new Set([...ca.keys(), ...cb.keys()]);
  const rows: ComparisonPoint[] = [];
  for (const key of keys) {
    const pa = ca.get(key);
    const pb = cb.get(key);
    const p = (pa ?? pb)!;
    const row: ComparisonPoint = { metric: p.metric, ...(p.req_size !== undefined ? { req_size: p.req_size } : {}) };
    if (pa) row.a = pa.value;
    if (pb) row.b = pb.value;
    if (!pa) row.excluded = 'missing on A';
    else if (!pb) row.excluded = 'missing on B';
    else if (pa.zero || pb.zero) row.excluded = `zero on ${pa.zero && pb.zero ? 'both sides' : pa.zero ? 'A' : 'B'}`;
    else row.ratio = METRICS[p.metric].direction === 'higher-better' ? pa.value / pb.value : pb.value / pa.value;
    rows.push(row);
  }
  const metricOrder = new Map(metrics.map((m, i) => [m, i]));
  rows.sort((x, y) => metricOrder.get(x.metric)! - metricOrder.get(y.metric)! || (x.req_size ?? 0) - (y.req_size ?? 0));
  return rows;
}

function geomean(values: readonly number[]): number {
  return Math.exp(values.reduce((s, v) => s + Math.log(v), 0) / values.length);
}

/**
 * Summary ratios of resampled sides, sorted. Each observation becomes a dense row
 * of log values over the union of points once (NaN missing, -Infinity zero), so an
 * iteration is a few thousand additions: the same geometric means and exclusions
 * as pair(), without its maps (2,000 iterations of 20 runs a side took seconds).
 */
function bootstrapRatios(a: readonly Observation[], b: readonly Observation[], metrics: readonly Metric[], iterations: number, random: () => number): number[] {
  const keys = new Map<PointKey, number>();
  const signs: number[] = [];
  const rows = (side: readonly Observation[]) =>
    side.map((o) => {
      const points = pointsOf(o, metrics);
      for (const [key, p] of points) {
        if (!keys.has(key)) {
          keys.set(key, keys.size);
          signs.push(METRICS[p.metric].direction === 'higher-better' ? 1 : -1);
        }
      }
      return points;
    });
  const pa = rows(a);
  const pb = rows(b);
  const width = keys.size;
  const dense = (points: ReturnType<typeof pointsOf>[]) =>
    points.map((map) => {
      const row = new Float64Array(width).fill(NaN);
      for (const [key, p] of map) row[keys.get(key)!] = p.value > 0 ? Math.log(p.value) : -Infinity;
      return row;
    });
  const ra = dense(pa);
  const rb = dense(pb);
  const sumA = new Float64Array(width);
  const sumB = new Float64Array(width);
  const nA = new Int32Array(width);
  const nB = new Int32Array(width);
  const accumulate = (rowsOfSide: Float64Array[], sum: Float64Array, n: Int32Array) => {
    sum.fill(0);
    n.fill(0);
    for (let k = 0; k < rowsOfSide.length; k++) {
      const row = rowsOfSide[Math.floor(random() * rowsOfSide.length)]!;
      for (let j = 0; j < width; j++) {
        const v = row[j]!;
        if (v === v) {
          sum[j]! += v;
          n[j]!++;
        }
      }
    }
  };
  const out: number[] = [];
  for (let i = 0; i < iterations; i++) {
    accumulate(ra, sumA, nA);
    accumulate(rb, sumB, nB);
    let total = 0;
    let count = 0;
    for (let j = 0; j < width; j++) {
      // A zero on a side makes its sum -Infinity: the point is excluded, as in pair().
      if (nA[j] === 0 || nB[j] === 0 || sumA[j] === -Infinity || sumB[j] === -Infinity) continue;
      total += signs[j]! * (sumA[j]! / nA[j]! - sumB[j]! / nB[j]!);
      count++;
    }
    if (count > 0) out.push(Math.exp(total / count));
  }
  return out.sort((x, y) => x - y);
}

/** A small deterministic PRNG (mulberry32): the same data always gives the same interval. */
function prng(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let x = Math.imul(t ^ (t >>> 15), 1 | t);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function percentile(sorted: readonly number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

const fmt = (r: number) => (r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(2));

function side(obs: readonly Observation[], label: string, selector: string): SideSummary {
  return {
    selector,
    label,
    runs: new Set(obs.map((o) => o.runId)).size,
    observations: obs.length,
    devices: [...new Set(obs.map((o) => o.device))].sort(),
    formats: [...new Set(obs.map((o) => o.format))].sort() as Format[],
  };
}

export function compareSelections(a: readonly Observation[], b: readonly Observation[], options: CompareOptions = {}): Comparison {
  const spec = options.metric ?? 'all';
  const labels = options.labels ?? { a: options.selectors?.a ?? 'A', b: options.selectors?.b ?? 'B' };
  const sideA = side(a, labels.a, options.selectors?.a ?? labels.a);
  const sideB = side(b, labels.b, options.selectors?.b ?? labels.b);
  const warnings: string[] = [];
  if (a.length === 0) throw new CompareError(`A (${sideA.selector}) matches no run`);
  if (b.length === 0) throw new CompareError(`B (${sideB.selector}) matches no run`);
  const formats = [...new Set([...sideA.formats, ...sideB.formats])];
  const crossFormat = !sideA.formats.every((f) => sideB.formats.includes(f)) || !sideB.formats.every((f) => sideA.formats.includes(f));
  let metrics = metricsOf(spec, formats);
  if (crossFormat) {
    // diskperf and iostat share no metric names: compare what both can say, throughput.
    metrics = metrics.filter((m) => m === 'read_kBps' || m === 'write_kBps');
    warnings.push(`A is ${sideA.formats.join('+')} and B is ${sideB.formats.join('+')}: only read and write throughput are compared, from diskperf's MB/s (x1024) against iostat's kB/s`);
  }
  if (metrics.length === 0) throw new CompareError(`metric "${spec}" is not carried by ${formats.join(' and ')} runs; expected ${METRIC_SPEC_HELP}`);
  const sideObs = (obs: readonly Observation[]) => (crossFormat ? obs.map(asThroughput) : obs);
  const oa = sideObs(a);
  const ob = sideObs(b);

  const rows = pair(oa, ob, metrics);
  const paired = rows.filter((r) => r.ratio !== undefined);
  const excluded = rows.filter((r) => r.excluded !== undefined);
  const ratios = paired.map((r) => r.ratio!);
  const ratio = ratios.length > 0 ? geomean(ratios) : null;
  const byMetric: Partial<Record<Metric, MetricRatio>> = {};
  for (const metric of metrics) {
    const mine = paired.filter((r) => r.metric === metric).map((r) => r.ratio!);
    if (mine.length > 0) byMetric[metric] = { ratio: geomean(mine), points: mine.length, min: Math.min(...mine), max: Math.max(...mine) };
  }

  // Data-quality warnings.
  const zeros = excluded.filter((r) => r.excluded?.startsWith('zero'));
  if (zeros.length > 0) warnings.push(`${zeros.length} point(s) excluded because a side measured 0 (${zeros.slice(0, 3).map(describePoint).join(', ')}${zeros.length > 3 ? ', ...' : ''})`);
  for (const [name, obs] of [['A', a], ['B', b]] as const) {
    const boot = obs.filter((o) => o.sinceBootOnly);
    if (boot.length > 0) warnings.push(`${name}: ${boot.length} iostat series hold only their since-boot report (averages since boot, not over the benchmark)`);
    const sizes = obs.map((o) => o.samples ?? 0).filter((n) => n > 0);
    if (sizes.length > 1 && Math.max(...sizes) > 10 * Math.min(...sizes)) warnings.push(`${name}: runs of very different sizes (${Math.min(...sizes)} to ${Math.max(...sizes)} samples) are weighted equally`);
  }

  // Confidence interval: bootstrap over observations, each side resampled on its own.
  const iterations = options.iterations ?? 2000;
  const seed = options.seed ?? 1;
  let ci: Comparison['ci'] = null;
  let ciNote: string | undefined;
  if (ratio === null) ciNote = 'no point could be paired';
  else if (oa.length < 2 || ob.length < 2) ciNote = `no interval: it needs at least 2 runs on each side (A has ${oa.length}, B has ${ob.length})`;
  else {
    const samples = bootstrapRatios(oa, ob, metrics, iterations, prng(seed));
    if (samples.length > 0) ci = { level: 0.95, low: percentile(samples, 0.025), high: percentile(samples, 0.975), method: 'bootstrap', iterations, seed };
  }
  const significant = ci === null ? null : ci.low > 1 || ci.high < 1;

  const min = ratios.length > 0 ? Math.min(...ratios) : null;
  const max = ratios.length > 0 ? Math.max(...ratios) : null;
  let sentence: string;
  if (ratio === null) sentence = `${labels.a} and ${labels.b} share no ${spec} measurement to compare`;
  else if (significant === false) sentence = `~ no significant difference between ${labels.a} and ${labels.b} on ${spec} (${fmt(ratio)}x, 95% interval ${fmt(ci!.low)}x-${fmt(ci!.high)}x, ${paired.length} points)`;
  else {
    const interval = ci ? `, 95% interval ${fmt(ci.low)}x-${fmt(ci.high)}x` : '';
    sentence = `${labels.a} is ${fmt(ratio)}x ${labels.b} on ${spec} (${paired.length} point${paired.length === 1 ? '' : 's'}, ${fmt(min!)}x-${fmt(max!)}x${interval})`;
  }

  return {
    a: sideA,
    b: sideB,
    metric: spec,
    metrics,
    ratio,
    byMetric,
    points: paired.length,
    min,
    max,
    rows,
    excluded,
    ci,
    ...(ciNote !== undefined ? { ciNote } : {}),
    significant,
    warnings,
    sentence,
  };
}

function describePoint(p: ComparisonPoint): string {
  return p.req_size === undefined ? p.metric : `${p.metric} at ${p.req_size}`;
}

/**
 * An observation as read/write throughput in kB/s, for comparing across formats:
 * diskperf's MB/s averaged (geometric mean) over request sizes and directions.
 */
function asThroughput(o: Observation): Observation {
  if (o.format === 'iostat') return { ...o, values: { ...(o.values.read_kBps !== undefined ? { read_kBps: o.values.read_kBps } : {}), ...(o.values.write_kBps !== undefined ? { write_kBps: o.values.write_kBps } : {}) } };
  const collect = (metrics: readonly Metric[]) =>
    metrics.flatMap((m) => {
      const v = o.values[m];
      return v === undefined || typeof v === 'number' ? [] : Object.values(v).filter((x) => x > 0);
    });
  const reads = collect(['fwd_rd', 'bwd_rd', 'rnd_rd']);
  const writes = collect(['fwd_wt', 'bwd_wt', 'rnd_wt']);
  return {
    ...o,
    values: { ...(reads.length ? { read_kBps: geomean(reads) * 1024 } : {}), ...(writes.length ? { write_kBps: geomean(writes) * 1024 } : {}) },
  };
}

/** A diskperf run as an observation (from a parsed run or a stored one). */
export function diskperfObservation(runId: string, device: string, rows: readonly { req_size: number; values: Partial<Record<Metric, number>> }[]): Observation {
  const values: Partial<Record<Metric, Record<number, number>>> = {};
  for (const row of rows) for (const [metric, v] of Object.entries(row.values) as [Metric, number][]) (values[metric] ??= {})[row.req_size] = v;
  return { runId, device, format: 'diskperf', values };
}

/** An iostat series as an observation: the mean of each metric's summary. */
export function iostatObservation(runId: string, device: string, summary: Partial<Record<Metric, { mean: number; count: number }>>, reports: number): Observation {
  const values: Partial<Record<Metric, number>> = {};
  let samples = 0;
  for (const [metric, s] of Object.entries(summary) as [Metric, { mean: number; count: number }][]) {
    values[metric] = s.mean;
    samples = Math.max(samples, s.count);
  }
  return { runId, device, format: 'iostat', values, samples, ...(reports === 1 ? { sinceBootOnly: true } : {}) };
}
