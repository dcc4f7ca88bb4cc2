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
import { createHash } from 'node:crypto';
import { DISKPERF_METRICS, IOSTAT_METRICS, isMetric, METRIC_GROUPS, METRICS, type DiskperfMetric, type Metric, type MetricGroup } from './metrics.ts';
import type { Format } from './model.ts';

export interface Observation {
  /** The run, and for iostat the series, it comes from. */
  runId: string;
  device: string;
  format: Format;
  /**
   * diskperf: values by metric and request size (a Map: request sizes as object
   * keys would make V8 keep a slow dictionary per metric); iostat: summary means.
   */
  values: Partial<Record<Metric, number | ReadonlyMap<number, number>>>;
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

/** A point of a comparison: a metric, at a request size for diskperf. */
interface Column {
  metric: Metric;
  req_size?: number;
}

/**
 * Both sides laid out once over the union of their points: one row per
 * observation, one column per point, holding the log of the value (NaN where
 * the observation has no such point, -Infinity where it measured 0 or less).
 * pair() and the bootstrap both work from these rows, so no map of points is
 * built per resample, nor twice per comparison.
 */
interface Grid {
  /** Columns in report order: by metric (in `metrics` order), then request size. */
  columns: Column[];
  a: Float64Array[];
  b: Float64Array[];
}

function grid(a: readonly Observation[], b: readonly Observation[], metrics: readonly Metric[]): Grid {
  const found: Column[] = [];
  // metric -> its column (iostat) or its columns by request size (diskperf).
  const index = new Map<Metric, number | Map<number, number>>();
  const columnOf = (metric: Metric, reqSize: number | undefined): number => {
    let entry = index.get(metric);
    if (reqSize === undefined) {
      if (typeof entry !== 'number') index.set(metric, (entry = found.push({ metric }) - 1));
      return entry;
    }
    if (!(entry instanceof Map)) index.set(metric, (entry = new Map()));
    let column = entry.get(reqSize);
    if (column === undefined) entry.set(reqSize, (column = found.push({ metric, req_size: reqSize }) - 1));
    return column;
  };
  /** Every point of an observation, with its column (first seen, first numbered). */
  const each = (o: Observation, visit: (column: number, value: number) => void) => {
    for (const metric of metrics) {
      const v = o.values[metric];
      if (v === undefined) continue;
      // null: a value the store could not keep (non-finite), unusable like a 0.
      if (typeof v === 'number' || v === null) visit(columnOf(metric, undefined), v ?? 0);
      else for (const [size, value] of v) visit(columnOf(metric, size), value);
    }
  };
  const noop = () => undefined;
  for (const o of a) each(o, noop);
  for (const o of b) each(o, noop);
  const metricOrder = new Map(metrics.map((m, i) => [m, i]));
  const order = found.map((_, i) => i).sort((x, y) => metricOrder.get(found[x]!.metric)! - metricOrder.get(found[y]!.metric)! || (found[x]!.req_size ?? 0) - (found[y]!.req_size ?? 0));
  const position = new Int32Array(found.length);
  order.forEach((column, i) => (position[column] = i));
  const rows = (side: readonly Observation[]) =>
    side.map((o) => {
      const row = new Float64Array(found.length).fill(NaN);
      each(o, (column, value) => (row[position[column]!] = value > 0 ? Math.log(value) : -Infinity));
      return row;
    });
  return { columns: order.map((i) => found[i]!), a: rows(a), b: rows(b) };
}

/** One side at one point: present in some observation, measured 0 by one, geometric mean of the rest. */
function combineColumn(rows: readonly Float64Array[], j: number): { present: boolean; zero: boolean; value: number } {
  let present = false;
  let zero = false;
  let logSum = 0;
  let n = 0;
  for (const row of rows) {
    const v = row[j]!;
    if (v !== v) continue;
    present = true;
    if (v === -Infinity) zero = true;
    else {
      logSum += v;
      n++;
    }
  }
  return { present, zero, value: zero ? 0 : Math.exp(logSum / n) };
}

function pair(g: Grid): ComparisonPoint[] {
  return g.columns.map((column, j) => {
    const pa = combineColumn(g.a, j);
    const pb = combineColumn(g.b, j);
    const row: ComparisonPoint = { metric: column.metric, ...(column.req_size !== undefined ? { req_size: column.req_size } : {}) };
    if (pa.present) row.a = pa.value;
    if (pb.present) row.b = pb.value;
    if (!pa.present) row.excluded = 'missing on A';
    else if (!pb.present) row.excluded = 'missing on B';
    else if (pa.zero || pb.zero) row.excluded = `zero on ${pa.zero && pb.zero ? 'both sides' : pa.zero ? 'A' : 'B'}`;
    else row.ratio = METRICS[column.metric].direction === 'higher-better' ? pa.value / pb.value : pb.value / pa.value;
    return row;
  });
}

function geomean(values: readonly number[]): number {
  return Math.exp(values.reduce((s, v) => s + Math.log(v), 0) / values.length);
}

/**
 * Summary ratios of resampled sides, sorted: each iteration draws every side's
 * observations with replacement and takes the geometric mean of the point ratios,
 * with the same exclusions as pair().
 *
 * The log of that mean is the mean over points of sign x (mean log A - mean log B),
 * each inner mean over the drawn rows that have the point. Points that the same
 * rows have (and the same rows measured 0 in) on both sides form a group: for a
 * given draw they are all paired or all excluded, over the same rows, so the sums
 * swap and each row is reduced once to one number per group. An iteration then
 * adds one number per drawn row and group instead of one per drawn row and point.
 * Usually there are one to three groups: every run has every point, plus the
 * request sizes only some runs measured. Same draws, same intervals as summing
 * every point (to rounding).
 */
function bootstrapRatios(g: Grid, iterations: number, random: () => number): Float64Array {
  const signs = g.columns.map((c) => (METRICS[c.metric].direction === 'higher-better' ? 1 : -1));
  // Which rows have a column (f: a value, z: measured 0, -: none), on both sides.
  const pattern = (rows: readonly Float64Array[], j: number) => rows.map((row) => (row[j]! !== row[j]! ? '-' : row[j] === -Infinity ? 'z' : 'f')).join('');
  const byPattern = new Map<string, number[]>();
  g.columns.forEach((_, j) => {
    const key = `${pattern(g.a, j)}|${pattern(g.b, j)}`;
    const [a, b] = key.split('|') as [string, string];
    // Never paired, whatever is drawn: no row of a side has it, or every one measured 0.
    if (!a.includes('f') || !b.includes('f')) return;
    byPattern.get(key)?.push(j) ?? byPattern.set(key, [j]);
  });
  const sideOf = (rows: readonly Float64Array[], columns: readonly number[]) => {
    const j0 = columns[0]!;
    return {
      has: Uint8Array.from(rows, (row) => (row[j0]! === row[j0]! ? 1 : 0)),
      zero: Uint8Array.from(rows, (row) => (row[j0] === -Infinity ? 1 : 0)),
      // Signed sum of the group's log values; only read for rows with values.
      sum: Float64Array.from(rows, (row) => (Number.isFinite(row[j0]!) ? columns.reduce((s, j) => s + signs[j]! * row[j]!, 0) : 0)),
    };
  };
  const groups = [...byPattern.values()].map((columns) => ({ size: columns.length, a: sideOf(g.a, columns), b: sideOf(g.b, columns) }));
  const drawnA = new Int32Array(g.a.length);
  const drawnB = new Int32Array(g.b.length);
  const out = new Float64Array(iterations);
  let kept = 0;
  for (let i = 0; i < iterations; i++) {
    for (let k = 0; k < drawnA.length; k++) drawnA[k] = Math.floor(random() * drawnA.length);
    for (let k = 0; k < drawnB.length; k++) drawnB[k] = Math.floor(random() * drawnB.length);
    let total = 0;
    let count = 0;
    for (const group of groups) {
      const a = meanOfDrawn(group.a, drawnA);
      const b = meanOfDrawn(group.b, drawnB);
      // No drawn row has the points, or one measured 0: excluded, as in pair().
      if (a !== a || b !== b) continue;
      total += a - b;
      count += group.size;
    }
    if (count > 0) out[kept++] = Math.exp(total / count);
  }
  return out.subarray(0, kept).sort();
}

/** Σ over a group's points of sign x mean log value over the drawn rows; NaN when none has them or one measured 0. */
function meanOfDrawn(side: { has: Uint8Array; zero: Uint8Array; sum: Float64Array }, drawn: Int32Array): number {
  let sum = 0;
  let n = 0;
  for (let k = 0; k < drawn.length; k++) {
    const row = drawn[k]!;
    if (side.has[row] === 0) continue;
    if (side.zero[row] === 1) return NaN;
    sum += side.sum[row]!;
    n++;
  }
  return n === 0 ? NaN : sum / n;
}

/**
 * A digest of everything an answer is computed from: both sides' observations in
 * order (ids, formats, every value, sample counts) and the options. Equal digests,
 * equal answers, so a cache of answers keyed by it can never hand out one that
 * its data no longer gives: a run added, removed or re-ingested with other values
 * is another key.
 */
export function comparisonKey(a: readonly Observation[], b: readonly Observation[], options: CompareOptions = {}): string {
  // Names go in as text, every number as its 8 bytes (exact, and far cheaper than
  // printing thousands of them); the text says how many numbers each part holds.
  let text = JSON.stringify([options.metric ?? 'all', options.labels ?? null, options.selectors ?? null, options.iterations ?? null, options.seed ?? null]);
  let numbers = new Float64Array(1024);
  let n = 0;
  const push = (value: number) => {
    if (n === numbers.length) {
      const grown = new Float64Array(numbers.length * 2);
      grown.set(numbers);
      numbers = grown;
    }
    numbers[n++] = value;
  };
  for (const [name, side] of [['A', a], ['B', b]] as const) {
    text += `\n${name} ${side.length}`;
    for (const o of side) {
      text += `\n${o.runId}\t${o.device}\t${o.format}\t${o.samples ?? ''}\t${o.sinceBootOnly === true}`;
      for (const [metric, v] of Object.entries(o.values)) {
        if (typeof v === 'number' || v === null) {
          text += `\t${metric} ${v === null ? 'null' : 1}`;
          if (v !== null) push(v);
        } else {
          text += `\t${metric} ${v.size * 2}`;
          for (const [size, value] of v) {
            push(size);
            push(value);
          }
        }
      }
    }
  }
  return createHash('sha256').update(text).update(new Uint8Array(numbers.buffer, 0, n * 8)).digest('base64url');
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

function percentile(sorted: ArrayLike<number>, q: number): number {
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

  const points = grid(oa, ob, metrics);
  const rows = pair(points);
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
    const samples = bootstrapRatios(points, iterations, prng(seed));
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
      return v === undefined || typeof v === 'number' ? [] : [...v.values()].filter((x) => x > 0);
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
  const values: Partial<Record<Metric, Map<number, number>>> = {};
  for (const row of rows) for (const [metric, v] of Object.entries(row.values) as [Metric, number][]) (values[metric] ??= new Map()).set(row.req_size, v);
  return { runId, device, format: 'diskperf', values };
}

/** The same from a table column-wise (as the store packs it): request sizes, and each metric's values by row (undefined: not measured). */
export function diskperfColumnsObservation(runId: string, device: string, sizes: readonly number[], columns: Partial<Record<DiskperfMetric, readonly (number | undefined)[]>>): Observation {
  const values: Partial<Record<Metric, Map<number, number>>> = {};
  for (const [metric, column] of Object.entries(columns) as [DiskperfMetric, (number | undefined)[]][]) {
    const byReqSize = new Map<number, number>();
    for (let i = 0; i < sizes.length; i++) if (column[i] !== undefined) byReqSize.set(sizes[i]!, column[i]!);
    if (byReqSize.size > 0) values[metric] = byReqSize;
  }
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
