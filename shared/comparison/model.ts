/**
 * The statistical model of a comparison (docs/comparisons.md says it in words).
 *
 *   observations (run x unit) -> centre per unit and point: the median of its runs
 *     -> per point: units paired disk with disk (sda with sda) when both sides
 *        hold the same native devices, else each side the geometric mean of its
 *        units -> the point's ratio, oriented so that > 1 means A is better
 *     -> summaries (per metric, overall): geometric mean of the point ratios
 *   uncertainty: each side resampled on its own, runs within units (or, for a
 *   class of several labels, units and then runs within them); the spread of
 *   the resampled log ratio is its standard error, and intervals and p-values
 *   use Student's t with Welch-Satterthwaite degrees of freedom.
 *
 * Everything happens in logs: a ratio is exp(mean over points of
 * sign x (log A - log B)), sign -1 for lower-better metrics.
 */
import { compareFioPoints, fioPointOf } from '../fio-point.ts';
import { METRICS, type Metric } from '../metrics.ts';
import type { ObservedValue, Observation } from './observations.ts';
import { geomean, holm, meanVariance, median, prng } from './statistics.ts';
import { tQuantile, tTwoSided } from './student-t.ts';

/** A point of a comparison: a metric, at a request size for diskperf, at a point key for fio (fio-point.ts). */
export interface Column {
  metric: Metric;
  req_size?: number;
  point?: string;
}

/** Where in its metric a column is: its request size or fio point key; undefined for a mean (iostat). */
const placeOf = (c: Column): number | string | undefined => c.req_size ?? c.point;

/** Request sizes in numeric order, then fio points in sweep order (each key read once). */
function sortedPlaces(places: Iterable<number | string>): (number | string)[] {
  const all = [...places];
  const sizes = all.filter((p): p is number => typeof p === 'number').sort((x, y) => x - y);
  const points = all
    .filter((p): p is string => typeof p === 'string')
    .map((key) => ({ key, point: fioPointOf(key) }))
    .sort((x, y) => compareFioPoints(x.point, y.point));
  return [...sizes, ...points.map((p) => p.key)];
}

/** One unit of a side: a device, with its runs in the order given. */
export interface Unit {
  name: string;
  label?: string;
  native?: string;
  runs: Observation[];
}

/** What was resampled for an interval. */
export type Over = 'runs' | 'devices';

export const LEVEL = 0.95;
/**
 * Resamples per side. Only their spread is used (a standard error, not tail
 * percentiles), which 500 pin down to about 3% and 200 to about 5%: large
 * tables (many points times many runs) get fewer, down to 200, so that a
 * comparison's CPU stays bounded.
 */
export const ITERATIONS = { most: 500, least: 200, work: 600_000 } as const;

/** Resamples for these sides: ITERATIONS.work medians' worth of walking over runs, within most and least. */
function iterationsFor(sides: readonly Side[], points: readonly PointPlan[]): number {
  let work = 0;
  for (const side of sides) for (const unit of side.units) work += unit.runs.length;
  work *= points.filter((p) => p.ratio !== undefined).length;
  return Math.max(ITERATIONS.least, Math.min(ITERATIONS.most, Math.floor(ITERATIONS.work / Math.max(1, work))));
}
/** The smallest difference the run-count advice sizes for. */
export const RESOLVE = 1.05;

interface Side {
  units: Unit[];
  /** values[u][r * columns + j], linear, NaN where the run lacks the point. */
  values: Float64Array[];
  /** centre[u][j]: median over the unit's runs that have the point (NaN: none has it). */
  centre: Float64Array[];
}

/** The units each side's part of a point is made of, fixed by the estimate and kept in every resample. */
export interface PointPlan {
  column: Column;
  sign: 1 | -1;
  /** Unit indices; paired comparisons list them aligned (a[i] pairs with b[i]). */
  a: number[];
  b: number[];
  /** Linear values of each side at the point (geomean of its units' centres), when present. */
  valueA?: number;
  valueB?: number;
  ratio?: number;
  excluded?: string;
  notes: string[];
  /** Units measured 0 at this point, by side: said in a warning. */
  idle: { a: string[]; b: string[]; both: string[] };
  /** Each side's runs behind its value, where the point has a ratio. */
  spread?: { a: SideSpread; b: SideSpread };
}

/**
 * The runs behind a side's value at a point: how many, and the smallest and
 * largest of their values. A run's value is the geometric mean of the point's
 * devices it measured (one device: its own value), as the centre is formed.
 */
export interface SideSpread {
  runs: number;
  low: number;
  high: number;
}

export interface Interval {
  low: number;
  high: number;
}

/** The uncertainty of one log ratio: its standard error, degrees of freedom, interval and p-value. */
export interface Uncertainty {
  se: number;
  df: number;
  interval: Interval;
  p: number;
}

export interface ModelResult {
  columns: Column[];
  units: { a: Unit[]; b: Unit[] };
  paired: boolean;
  points: PointPlan[];
  /** Indices into points of those with a ratio. */
  matched: number[];
  ratio: number | null;
  byMetric: Map<Metric, { ratio: number; indices: number[] }>;
  /** null, with the reason, when the data cannot support an interval. */
  uncertainty: {
    over: Over;
    iterations: number;
    seed: number;
    summary: Uncertainty | undefined;
    byMetric: Map<Metric, Uncertainty & { pHolm: number }>;
    byPoint: Map<number, Uncertainty & { pHolm: number }>;
    /** About how many runs (or devices) a side would resolve a RESOLVE difference, from the spread seen. */
    advice: { per: 'runs' | 'devices'; count: number | null } | undefined;
    /** The smallest replicate count per side (runs of the least-run unit, or units). */
    replicates: { a: number; b: number };
  } | null;
  noInterval?: string;
}

export interface ModelOptions {
  iterations?: number;
  seed?: number;
}

/** Units of a side, first seen first. */
export function unitsOf(observations: readonly Observation[]): Unit[] {
  const byName = new Map<string, Unit>();
  for (const o of observations) {
    let unit = byName.get(o.device);
    if (unit === undefined)
      byName.set(
        o.device,
        (unit = {
          name: o.device,
          ...(o.label !== undefined ? { label: o.label } : {}),
          ...(o.native !== undefined ? { native: o.native } : {}),
          runs: [],
        }),
      );
    unit.runs.push(o);
  }
  // Runs in id order: units measured in the same runs (the disks of one iostat session) line up run by run.
  for (const unit of byName.values()) unit.runs.sort((x, y) => (x.runId < y.runId ? -1 : x.runId > y.runId ? 1 : 0));
  return [...byName.values()];
}

/** Every point either side has, by metric (in `metrics` order) then request size or fio point. */
export function columnsOf(sides: readonly (readonly Observation[])[], metrics: readonly Metric[]): Column[] {
  const found = new Map<Metric, Set<number | string> | true>();
  for (const side of sides)
    for (const o of side)
      for (const metric of metrics) {
        const v = o.values[metric];
        if (v === undefined || v === null) continue;
        if (typeof v === 'number') found.set(metric, true);
        else {
          let sizes = found.get(metric);
          if (sizes === undefined || sizes === true) found.set(metric, (sizes = new Set()));
          for (const size of v.keys()) sizes.add(size);
        }
      }
  const columns: Column[] = [];
  for (const metric of metrics) {
    const entry = found.get(metric);
    if (entry === true) columns.push({ metric });
    else if (entry !== undefined)
      for (const place of sortedPlaces(entry))
        columns.push(typeof place === 'number' ? { metric, req_size: place } : { metric, point: place });
  }
  return columns;
}

function layout(units: Unit[], columns: readonly Column[]): Side {
  // metric -> its column (iostat), or its columns by request size (diskperf) or point (fio).
  const index = new Map<Metric, number | Map<number | string, number>>();
  columns.forEach((c, j) => {
    const place = placeOf(c);
    if (place === undefined) index.set(c.metric, j);
    else {
      const places = index.get(c.metric);
      if (places instanceof Map) places.set(place, j);
      else index.set(c.metric, new Map([[place, j]]));
    }
  });
  const values = units.map((unit) => {
    const table = new Float64Array(unit.runs.length * columns.length).fill(NaN);
    unit.runs.forEach((o, r) => {
      for (const [metric, v] of Object.entries(o.values) as [Metric, ObservedValue | null][]) {
        if (v === null || v === undefined) continue;
        const at = index.get(metric);
        if (typeof v === 'number') {
          if (typeof at === 'number' && Number.isFinite(v)) table[r * columns.length + at] = v;
        } else if (at instanceof Map)
          for (const [place, value] of v as ReadonlyMap<number | string, number>) {
            const j = at.get(place);
            if (j !== undefined && Number.isFinite(value)) table[r * columns.length + j] = value;
          }
      }
    });
    return table;
  });
  const centre = units.map((unit, u) =>
    Float64Array.from(columns, (_, j) => {
      const present: number[] = [];
      for (let r = 0; r < unit.runs.length; r++) {
        const v = values[u]![r * columns.length + j]!;
        if (v === v) present.push(v);
      }
      return median(present);
    }),
  );
  return { units, values, centre };
}

/**
 * Disk with disk: when each side is one label's devices, every unit has a
 * native device name, and both sides hold the same names. Sides spanning
 * labels are classes: their sda's are different disks.
 */
export function pairsUnits(a: readonly Unit[], b: readonly Unit[]): boolean {
  if (spansLabels(a) || spansLabels(b)) return false;
  const names = (units: readonly Unit[]) => units.map((u) => u.native);
  const na = names(a);
  const nb = names(b);
  if (na.some((n) => n === undefined) || nb.some((n) => n === undefined)) return false;
  const sa = new Set(na);
  const sb = new Set(nb);
  return sa.size === na.length && sb.size === nb.length && sa.size === sb.size && [...sa].every((n) => sb.has(n));
}

/** A side whose units come from more than one device label: a class. */
function spansLabels(units: readonly Unit[]): boolean {
  return new Set(units.map((u) => u.label ?? u.name)).size > 1;
}

/** The units at one point on each side: which count, which are idle, and the point's values and ratio. */
function planPoint(column: Column, j: number, A: Side, B: Side, paired: boolean): PointPlan {
  const sign = METRICS[column.metric].direction === 'higher-better' ? 1 : -1;
  const plan: PointPlan = { column, sign, a: [], b: [], notes: [], idle: { a: [], b: [], both: [] } };
  const centre = (side: Side, u: number) => side.centre[u]![j]!;
  const present = (side: Side) => side.units.map((_, u) => u).filter((u) => centre(side, u) === centre(side, u));
  const zero = (side: Side, u: number) => centre(side, u) <= 0;
  const name = (side: Side, u: number) => side.units[u]!.native ?? side.units[u]!.name;
  /** A side's value at the point: the geometric mean of its measuring units' centres, 0 when all measured 0. */
  const valueOf = (side: Side, units: number[]) => {
    const measuring = units.filter((u) => !zero(side, u));
    return measuring.length === 0 ? 0 : geomean(measuring.map((u) => centre(side, u)));
  };
  const pa = present(A);
  const pb = present(B);
  if (pa.length > 0) plan.valueA = valueOf(A, pa);
  if (pb.length > 0) plan.valueB = valueOf(B, pb);
  if (pa.length === 0) return { ...plan, excluded: 'missing on A' };
  if (pb.length === 0) return { ...plan, excluded: 'missing on B' };
  if (paired) {
    const partner = new Map(pb.map((u) => [B.units[u]!.native!, u]));
    for (const ua of pa) {
      const ub = partner.get(A.units[ua]!.native!);
      if (ub === undefined) continue;
      const [za, zb] = [zero(A, ua), zero(B, ub)];
      const idle = za && zb ? plan.idle.both : za ? plan.idle.a : zb ? plan.idle.b : undefined;
      if (idle !== undefined) idle.push(name(A, ua));
      else {
        plan.a.push(ua);
        plan.b.push(ub);
      }
    }
  } else {
    plan.a = pa.filter((u) => !zero(A, u));
    plan.b = pb.filter((u) => !zero(B, u));
    const za = new Set(pa.filter((u) => zero(A, u)).map((u) => name(A, u)));
    const zb = new Set(pb.filter((u) => zero(B, u)).map((u) => name(B, u)));
    for (const n of za) (zb.has(n) ? plan.idle.both : plan.idle.a).push(n);
    for (const n of zb) if (!za.has(n)) plan.idle.b.push(n);
  }
  const allZeroA = pa.every((u) => zero(A, u));
  const allZeroB = pb.every((u) => zero(B, u));
  if (plan.a.length === 0 || plan.b.length === 0) {
    if (!allZeroA && !allZeroB) return { ...plan, excluded: 'no device measured it on both sides' };
    const which = allZeroA && allZeroB ? 'both sides' : allZeroA ? 'A' : 'B';
    const who = [
      ...new Set([...(allZeroA ? pa.map((u) => name(A, u)) : []), ...(allZeroB ? pb.map((u) => name(B, u)) : [])]),
    ];
    // One device a side: "zero on B" says it all.
    const units = A.units.length === 1 && B.units.length === 1 ? '' : ` (${who.join(', ')})`;
    return { ...plan, excluded: `zero on ${which}${units}` };
  }
  for (const [idle, where] of [
    [plan.idle.both, 'on both sides'],
    [plan.idle.a, 'on A'],
    [plan.idle.b, 'on B'],
  ] as const) {
    if (idle.length > 0) plan.notes.push(`${idle.join(', ')} measured 0 ${where}: left out of this point`);
  }
  plan.valueA = geomean(plan.a.map((u) => centre(A, u)));
  plan.valueB = geomean(plan.b.map((u) => centre(B, u)));
  plan.ratio = sign === 1 ? plan.valueA / plan.valueB : plan.valueB / plan.valueA;
  plan.spread = { a: spreadOf(A, plan.a, j), b: spreadOf(B, plan.b, j) };
  return plan;
}

/**
 * A side's runs at point j over these units: each run's value the geometric
 * mean of the units it measured there (units of one iostat session share their
 * runs; a class's units have runs of their own), then the fewest and most.
 */
function spreadOf(side: Side, units: readonly number[], j: number): SideSpread {
  const J = side.centre[0]?.length ?? 0;
  const byRun = new Map<string, number[]>();
  for (const u of units)
    side.units[u]!.runs.forEach((o, r) => {
      const v = side.values[u]![r * J + j]!;
      if (v !== v) return;
      const values = byRun.get(o.runId);
      if (values) values.push(v);
      else byRun.set(o.runId, [v]);
    });
  // A run that measured 0 on one of the devices gives 0 (the mean of its logs is -Infinity).
  const perRun = [...byRun.values()].map(geomean);
  return { runs: perRun.length, low: Math.min(...perRun), high: Math.max(...perRun) };
}

/**
 * The smallest number of replicates on a side, and whether an interval over
 * `over` is possible: every unit with 2 runs (over runs), or 2 units (a class,
 * over devices; a one-unit side of such a comparison still needs 2 runs).
 */
function replicates(side: Side, over: Over, plans: readonly PointPlan[], key: 'a' | 'b'): number {
  const used = new Set(plans.flatMap((p) => (p.ratio === undefined ? [] : p[key])));
  const units = side.units.filter((_, u) => used.has(u));
  if (over === 'devices' && units.length >= 2) return units.length;
  return units.length === 0 ? 0 : Math.min(...units.map((u) => u.runs.length));
}

/**
 * One side's part of every point in each resample: parts[r * columns + j] is
 * the mean over the point's units of the log of their resampled centres (NaN
 * where a resample leaves a unit without the point, or its centre at 0).
 *
 * Per unit, the points it takes part in are laid out flat with their runs
 * sorted by value, so a resampled median is a walk over run counts: no sort,
 * no allocation per resample.
 */
function resampleSide(
  side: Side,
  plans: readonly PointPlan[],
  key: 'a' | 'b',
  over: Over,
  iterations: number,
  random: () => number,
): Float64Array {
  const J = plans.length;
  const units = side.units.length;
  const parts = new Float64Array(iterations * J).fill(NaN);
  const layouts = unitLayouts(side, plans, key);
  const sums = new Float64Array(J);
  const ns = new Int32Array(J);
  const hierarchical = over === 'devices' && units >= 2;
  for (let i = 0; i < iterations; i++) {
    sums.fill(0);
    ns.fill(0);
    for (let k = 0; k < units; k++) {
      const l = layouts[hierarchical ? Math.floor(random() * units) : k]!;
      // A unit draws its runs, or (over runs) takes the draw of the first unit of its group.
      const counts = hierarchical || l.group === k ? l.counts : layouts[l.group]!.counts;
      if (counts === l.counts) drawRuns(counts, random);
      addMedianLogs(l, counts, sums, ns);
    }
    for (let j = 0; j < J; j++) if (ns[j]! > 0) parts[i * J + j] = sums[j]! / ns[j]!;
  }
  return parts;
}

/** A unit's member points (columns) and, for each, the runs that have it sorted by value. */
interface UnitLayout {
  columns: Int32Array;
  starts: Int32Array;
  runs: Int32Array;
  values: Float64Array;
  logs: Float64Array;
  /** 1 where every run of the unit has the point. */
  complete: Uint8Array;
  /** How often each run was drawn in the current resample. */
  counts: Int32Array;
  /** The first unit measured in the same runs: they are resampled together. */
  group: number;
}

function unitLayouts(side: Side, plans: readonly PointPlan[], key: 'a' | 'b'): UnitLayout[] {
  const memberOf = side.units.map(() => new Uint8Array(plans.length));
  plans.forEach((p, j) => {
    if (p.ratio !== undefined) for (const u of p[key]) memberOf[u]![j] = 1;
  });
  const layouts = side.units.map((unit, u) => layoutUnit(side.values[u]!, unit.runs.length, memberOf[u]!));
  // Units measured in the same runs are resampled together, whole runs at a time: a slow run is slow on every disk.
  const groups = new Map<string, number>();
  side.units.forEach((unit, u) => {
    const runKey = unit.runs.map((o) => o.runId).join('\u0000');
    let group = groups.get(runKey);
    if (group === undefined) groups.set(runKey, (group = u));
    layouts[u]!.group = group;
  });
  return layouts;
}

function layoutUnit(unitValues: ArrayLike<number>, runCount: number, member: Uint8Array): UnitLayout {
  const J = member.length;
  const columns: number[] = [];
  const starts: number[] = [0];
  const runs: number[] = [];
  const values: number[] = [];
  for (let j = 0; j < J; j++) {
    if (member[j] === 0) continue;
    const present: number[] = [];
    for (let r = 0; r < runCount; r++) if (unitValues[r * J + j]! === unitValues[r * J + j]!) present.push(r);
    present.sort((x, y) => unitValues[x * J + j]! - unitValues[y * J + j]!);
    columns.push(j);
    for (const r of present) {
      runs.push(r);
      values.push(unitValues[r * J + j]!);
    }
    starts.push(runs.length);
  }
  const complete = Uint8Array.from(columns, (_, c) => (starts[c + 1]! - starts[c]! === runCount ? 1 : 0));
  const logs = Float64Array.from(values, Math.log);
  return {
    columns: Int32Array.from(columns),
    starts: Int32Array.from(starts),
    runs: Int32Array.from(runs),
    values: Float64Array.from(values),
    logs,
    complete,
    counts: new Int32Array(runCount),
    group: 0,
  };
}

/** Draw as many runs as the unit has, with replacement: counts[r] is how often run r came up. */
function drawRuns(counts: Int32Array, random: () => number): void {
  const n = counts.length;
  counts.fill(0);
  for (let d = 0; d < n; d++) counts[Math.floor(random() * n)]!++;
}

/** Add the log of the unit's resampled median at each of its points to sums (NaN where no drawn run has it). */
function addMedianLogs(l: UnitLayout, counts: Int32Array, sums: Float64Array, ns: Int32Array): void {
  const n = l.counts.length;
  const { columns, starts, runs, values, logs, complete } = l;
  for (let c = 0; c < columns.length; c++) {
    const from = starts[c]!;
    const to = starts[c + 1]!;
    // Every run has the point (the usual case): all n draws count.
    let total = complete[c] === 1 ? n : 0;
    if (total === 0) for (let x = from; x < to; x++) total += counts[runs[x]!]!;
    const j = columns[c]!;
    ns[j]!++;
    // No drawn run has the point: the unit is lost from it in this resample.
    if (total === 0) {
      sums[j] = NaN;
      continue;
    }
    const lowRank = (total - 1) >> 1;
    const highRank = total >> 1;
    let seen = 0;
    let low = -1;
    for (let x = from; x < to; x++) {
      seen += counts[runs[x]!]!;
      if (low < 0 && seen > lowRank) low = x;
      if (seen > highRank) {
        // The middle two drawn values, or the middle one twice: its log is known.
        sums[j] += low === x ? logs[x]! : Math.log((values[low]! + values[x]!) / 2);
        break;
      }
    }
  }
}

/** Welch-Satterthwaite degrees of freedom of a sum of two variances, each with its own. */
function satterthwaite(va: number, dfa: number, vb: number, dfb: number): number {
  const total = va + vb;
  if (total === 0) return dfa + dfb;
  const denominator = (va * va) / dfa + (vb * vb) / dfb;
  return denominator === 0 ? dfa + dfb : (total * total) / denominator;
}

function uncertaintyOf(estimate: number, va: number, vb: number, dfa: number, dfb: number): Uncertainty | undefined {
  if (!Number.isFinite(va) || !Number.isFinite(vb)) return undefined;
  const se = Math.sqrt(va + vb);
  const df = satterthwaite(va, dfa, vb, dfb);
  const half = se === 0 ? 0 : tQuantile(1 - (1 - LEVEL) / 2, df) * se;
  const p = se === 0 ? (estimate === 0 ? 1 : 0) : tTwoSided(estimate / se, df);
  return { se, df, interval: { low: Math.exp(estimate - half), high: Math.exp(estimate + half) }, p };
}

/** The point estimates: the geometric mean ratio over the matched points, overall and per metric. */
function pointEstimates(points: readonly PointPlan[], metrics: readonly Metric[]) {
  const matched = points.flatMap((p, i) => (p.ratio !== undefined ? [i] : []));
  const logRatio = (indices: readonly number[]) =>
    indices.reduce((s, i) => s + Math.log(points[i]!.ratio!), 0) / indices.length;
  const ratio = matched.length > 0 ? Math.exp(logRatio(matched)) : null;
  const byMetric = new Map<Metric, { ratio: number; indices: number[] }>();
  for (const metric of metrics) {
    const indices = matched.filter((i) => points[i]!.column.metric === metric);
    if (indices.length > 0) byMetric.set(metric, { ratio: Math.exp(logRatio(indices)), indices });
  }
  return { matched, ratio, byMetric };
}

/**
 * The model's whole answer for two sides' observations over these metrics.
 * Intervals need, on each side, every unit with at least 2 runs (over runs) or
 * at least 2 units (over devices, when a side spans several labels).
 */
export function runModel(
  a: readonly Observation[],
  b: readonly Observation[],
  metrics: readonly Metric[],
  options: ModelOptions = {},
): ModelResult {
  const columns = columnsOf([a, b], metrics);
  const unitsA = unitsOf(a);
  const unitsB = unitsOf(b);
  const A = layout(unitsA, columns);
  const B = layout(unitsB, columns);
  const paired = pairsUnits(unitsA, unitsB);
  const points = columns.map((column, j) => planPoint(column, j, A, B, paired));
  const { matched, ratio, byMetric } = pointEstimates(points, metrics);
  const over: Over = spansLabels(unitsA) || spansLabels(unitsB) ? 'devices' : 'runs';
  const result: ModelResult = {
    columns,
    units: { a: unitsA, b: unitsB },
    paired,
    points,
    matched,
    ratio,
    byMetric,
    uncertainty: null,
  };
  if (ratio === null) return { ...result, noInterval: 'no point could be paired' };

  const nA = replicates(A, over, points, 'a');
  const nB = replicates(B, over, points, 'b');
  if (nA < 2 || nB < 2) return { ...result, noInterval: noIntervalReason(over, A, B, points, nA, nB) };
  return { ...result, ...bootstrap({ A, B, points, over, nA, nB }, { matched, ratio, byMetric }, options) };
}

/** What the bootstrap resamples: both sides laid out, the points, and each side's replicates (at least 2). */
interface Resampled {
  A: Side;
  B: Side;
  points: readonly PointPlan[];
  over: Over;
  nA: number;
  nB: number;
}

/** Each side's resampled part of the mean signed log ratio over these points (NaN where a point failed). */
function combinedParts(
  parts: Float64Array,
  indices: readonly number[],
  signs: Float64Array,
  J: number,
  iterations: number,
): Float64Array {
  const out = new Float64Array(iterations);
  const chosen = Int32Array.from(indices);
  for (let i = 0; i < iterations; i++) {
    let s = 0;
    for (let k = 0; k < chosen.length; k++) s += signs[chosen[k]!]! * parts[i * J + chosen[k]!]!;
    out[i] = s / chosen.length;
  }
  return out;
}

/** Each uncertainty that could be computed, with its Holm-corrected p among the others. */
function holmAdjusted<K>(
  entries: readonly (readonly [K, Uncertainty | undefined])[],
): Map<K, Uncertainty & { pHolm: number }> {
  const adjusted = holm(entries.map(([, u]) => u?.p ?? NaN));
  const out = new Map<K, Uncertainty & { pHolm: number }>();
  entries.forEach(([key, u], k) => {
    if (u !== undefined) out.set(key, { ...u, pHolm: adjusted[k]! });
  });
  return out;
}

/** The intervals of the summary, of each metric and of each point, from resampling both sides. */
function bootstrap(
  { A, B, points, over, nA, nB }: Resampled,
  estimates: ReturnType<typeof pointEstimates> & { ratio: number },
  options: ModelOptions,
): Pick<ModelResult, 'uncertainty' | 'noInterval'> {
  const { matched, ratio, byMetric } = estimates;
  const iterations = options.iterations ?? iterationsFor([A, B], points);
  const seed = options.seed ?? 1;
  const random = prng(seed);
  const partsA = resampleSide(A, points, 'a', over, iterations, random);
  const partsB = resampleSide(B, points, 'b', over, iterations, random);
  const J = points.length;
  // The bootstrap's variance of a mean of n replicates is (n - 1) / n of the usual estimate's: scaled back.
  const scaleA = nA / (nA - 1);
  const scaleB = nB / (nB - 1);
  const signs = Float64Array.from(points, (p) => p.sign);
  const uncertaintyOver = (indices: readonly number[], estimate: number) => {
    // One point's resampled parts are read in place (its sign does not change a variance).
    const spread = (parts: Float64Array) =>
      indices.length === 1
        ? meanVariance(parts, indices[0]!, J, iterations)
        : meanVariance(combinedParts(parts, indices, signs, J, iterations), 0, 1, iterations);
    const va = spread(partsA);
    const vb = spread(partsB);
    // Resamples that lost a point (a unit's centre drawn to 0) are too many to trust past a tenth.
    if (va.n < iterations * 0.9 || vb.n < iterations * 0.9) return undefined;
    return uncertaintyOf(estimate, va.variance * scaleA, vb.variance * scaleB, nA - 1, nB - 1);
  };
  const summary = uncertaintyOver(matched, Math.log(ratio));
  const metricEntries = [...byMetric].map(
    ([metric, m]) => [metric, uncertaintyOver(m.indices, Math.log(m.ratio))] as const,
  );
  const pointEntries = matched.map((i) => [i, uncertaintyOver([i], Math.log(points[i]!.ratio!))] as const);
  const advice = summary === undefined ? undefined : adviseReplicates(over, summary, nA, nB);
  return {
    uncertainty: {
      over,
      iterations,
      seed,
      summary,
      byMetric: holmAdjusted(metricEntries),
      byPoint: holmAdjusted(pointEntries),
      advice,
      replicates: { a: nA, b: nB },
    },
    ...(summary === undefined
      ? { noInterval: 'too many resamples drew a centre of 0 (values at zero in many runs)' }
      : {}),
  };
}

/** Why there is no interval, and what it would take. */
function noIntervalReason(over: Over, A: Side, B: Side, points: readonly PointPlan[], nA: number, nB: number): string {
  const few = (side: Side, key: 'a' | 'b') => {
    const used = new Set(points.flatMap((p) => (p.ratio === undefined ? [] : p[key])));
    return side.units.filter((u, i) => used.has(i) && u.runs.length < 2).map((u) => u.name);
  };
  const fewA = few(A, 'a');
  const fewB = few(B, 'b');
  const runs = (n: number) => `${n} run${n === 1 ? '' : 's'}`;
  if (over === 'devices') {
    const aDevices =
      nA < 2 ? `${A.units.length} device${A.units.length === 1 ? '' : 's'}` : `${A.units.length} devices`;
    return (
      `no interval: a class comparison resamples devices (A has ${aDevices}, B has ${B.units.length}); ` +
      'each side needs at least 2 devices, or 2 runs of its one device'
    );
  }
  const sideText = (name: string, n: number, fewUnits: string[], units: number) => {
    if (units === 1) return `${name} has ${runs(n)}`;
    if (fewUnits.length === 0) return `${name}'s devices have ${runs(n)} each at least`;
    const more = fewUnits.length > 3 ? ` and ${fewUnits.length - 3} more` : '';
    return `${name}'s ${fewUnits.slice(0, 3).join(', ')}${more} ${fewUnits.length === 1 ? 'has' : 'have'} ${runs(n)}`;
  };
  return (
    'no interval: it needs at least 2 runs on each side ' +
    `(${sideText('A', nA, fewA, A.units.length)}, ${sideText('B', nB, fewB, B.units.length)}); ` +
    'with one run nothing is known of run-to-run noise'
  );
}

/**
 * About how many replicates a side would make the interval's half-width a
 * RESOLVE difference, scaling the variance seen (1 / n per side): the first n
 * with t(df(n)) x se(n) <= log(RESOLVE). null past 10,000.
 */
function adviseReplicates(
  over: Over,
  summary: Uncertainty,
  nA: number,
  nB: number,
): { per: 'runs' | 'devices'; count: number | null } {
  const target = Math.log(RESOLVE);
  // Split the variance back into sides as if equal per replicate: var = s2 (1/nA + 1/nB).
  const s2 = (summary.se * summary.se) / (1 / nA + 1 / nB);
  for (let n = 2; n <= 10_000; n = n < 64 ? n + 1 : Math.ceil(n * 1.05)) {
    const se = Math.sqrt((2 * s2) / n);
    if (tQuantile(1 - (1 - LEVEL) / 2, 2 * (n - 1)) * se <= target) return { per: over, count: n };
  }
  return { per: over, count: null };
}
