/**
 * A comparison's answer, from two sides' observations: the model's figures
 * (model.ts) as rows, summaries and an interval labelled with what it
 * resampled, the warnings, and one plain sentence that names the faster side
 * first ("300G_10K_SGI_Indy is 2.56x scsi2sd_redux on all (65 points, ...)").
 * docs/comparisons.md says what every field means.
 */
import {
  DISKPERF_METRICS,
  FIO_METRICS,
  IOSTAT_METRICS,
  isMetric,
  METRIC_SPEC_HELP,
  METRICS,
  type Direction,
  type Metric,
  type MetricSpec,
} from '../metrics.ts';
import type { Format } from '../model.ts';
import {
  LEVEL,
  RESOLVE,
  runModel,
  type Interval,
  type ModelResult,
  type Over,
  type PointPlan,
  type SideSpread,
} from './model.ts';
import type { Observation } from './observations.ts';
import { geomean, roundTo } from './statistics.ts';
import {
  formatInterval,
  formatTimes,
  formatTimesRange,
  levelText,
  plural,
  pointName,
  RESOLUTION_STEPS,
} from './format.ts';
import { fioPointOf } from '../fio-point.ts';
import { setupsOf, type Setups } from './setups.ts';
import { comparabilityWarnings } from './warnings.ts';

export type { SideSpread } from './model.ts';

export interface ComparisonPoint {
  metric: Metric;
  req_size?: number;
  /** fio: the point's key (fio-point.ts), and the options it is made of. */
  point?: string;
  rw?: string;
  bs?: number | string;
  iodepth?: number;
  numjobs?: number;
  job?: string;
  /** Each side's centre: the median of its runs, the geometric mean over its devices; as printed for one run. */
  a?: number;
  b?: number;
  /** Each side's runs behind its centre: how many, the smallest and the largest run's value. */
  spread?: { a: SideSpread; b: SideSpread };
  /** How many times better A is at this point. */
  ratio?: number;
  /** 95% interval of the ratio (not corrected for the many points). */
  ci?: Interval;
  /** p-value corrected by Holm's method over the points shown. */
  p?: number;
  /** The corrected p-value is under 0.05; false is the `~` of benchstat. */
  significant?: boolean;
  /** A side is within a few printing steps of 0: its ratio is mostly rounding. */
  nearResolution?: true;
  /** Devices left out of this point, and why. */
  notes?: string[];
  excluded?: string;
}

export interface MetricRatio {
  ratio: number;
  points: number;
  min: number;
  max: number;
  unit: string;
  direction: Direction;
  ci: Interval | null;
  /** Holm-corrected over the metrics shown. */
  p?: number;
  significant: boolean | null;
  sentence: string;
}

export interface SideSummary {
  selector: string;
  label: string;
  runs: number;
  observations: number;
  /** The units: diskperf labels, iostat `label/native` series. */
  devices: string[];
  formats: Format[];
}

export interface ComparisonInterval extends Interval {
  level: typeof LEVEL;
  /** What was resampled: runs within each device, or devices and then their runs (a class of labels). */
  over: Over;
  /** The fewest runs of a device on each side (over runs), or the devices on each side (over devices). */
  replicates: { a: number; b: number };
  method: 'bootstrap-t';
  df: number;
  iterations: number;
  seed: number;
  /** "95% interval over 4 runs a side". */
  label: string;
}

export interface Comparison {
  a: SideSummary;
  b: SideSummary;
  metric: string;
  metrics: Metric[];
  /** Devices paired disk with disk (the same native names on both sides). */
  paired: boolean;
  /** Geometric mean of the point ratios; null when no point could be paired. */
  ratio: number | null;
  byMetric: Partial<Record<Metric, MetricRatio>>;
  points: number;
  min: number | null;
  max: number | null;
  rows: ComparisonPoint[];
  excluded: ComparisonPoint[];
  ci: ComparisonInterval | null;
  ciNote?: string;
  /** The interval excludes 1; null when there is no interval. */
  significant: boolean | null;
  /** The summary's two-sided p-value (one test: not corrected); absent without an interval. */
  p?: number;
  /** About how many runs (or devices) a side would tell a 5% difference apart, from the spread seen. */
  advice: { resolve: number; per: Over; count: number | null; note: string } | null;
  warnings: string[];
  /** Each side's runs, one setup a run, and the setup fields that differ. */
  setups: Setups;
  sentence: string;
}

export { isMetricSpec, METRIC_SPEC_HELP, type MetricSpec } from '../metrics.ts';

export class CompareError extends Error {
  override readonly name = 'CompareError';
}

/**
 * The metrics a spec stands for, among those the formats carry. A fallback
 * metric (service_ms) joins a group only when the metrics it stands in for are
 * carried by none of `carried` (when given).
 */
export function metricsOf(spec: MetricSpec, formats: readonly Format[], carried?: ReadonlySet<Metric>): Metric[] {
  const pool: Metric[] = [
    ...(formats.includes('diskperf') ? DISKPERF_METRICS : []),
    ...(formats.includes('iostat') ? IOSTAT_METRICS : []),
    ...(formats.includes('fio') ? FIO_METRICS : []),
  ];
  if (isMetric(spec)) return pool.includes(spec) ? [spec] : [];
  const inGroup = pool.filter((m) => METRICS[m].groups.includes(spec));
  return inGroup.filter((m) => {
    const stands = METRICS[m].fallbackFor;
    if (stands === undefined || carried === undefined) return true;
    return !stands.some((other) => inGroup.includes(other) && carried.has(other));
  });
}

export interface CompareOptions {
  metric?: MetricSpec;
  labels?: { a: string; b: string };
  selectors?: { a: string; b: string };
  iterations?: number;
  seed?: number;
}

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

const describePoint = pointName;

/**
 * How two sides' formats meet: the same formats compare on their own metrics; fio against
 * diskperf on diskperf's (fio's jobs as its table); any other mix on read and write throughput.
 */
type Meeting = 'same' | 'as-diskperf' | 'throughput';

function meetingOf(sideA: SideSummary, sideB: SideSummary): Meeting {
  const same =
    sideA.formats.every((f) => sideB.formats.includes(f)) && sideB.formats.every((f) => sideA.formats.includes(f));
  if (same) return 'same';
  const formats = new Set([...sideA.formats, ...sideB.formats]);
  return formats.size === 2 && formats.has('fio') && formats.has('diskperf') ? 'as-diskperf' : 'throughput';
}

/**
 * The metrics compared: those the spec names that some run carries. Across
 * formats (diskperf or fio against iostat) only throughput, and fio against
 * diskperf diskperf's own columns, said in `warnings`.
 */
function chooseMetrics(
  spec: MetricSpec,
  sideA: SideSummary,
  sideB: SideSummary,
  sides: readonly (readonly Observation[])[],
  warnings: string[],
): { metrics: Metric[]; meeting: Meeting } {
  const formats = [...new Set([...sideA.formats, ...sideB.formats])];
  const meeting = meetingOf(sideA, sideB);
  const crossFormat = meeting !== 'same';
  const carried = new Set<Metric>();
  for (const o of sides.flat()) for (const m of Object.keys(o.values) as Metric[]) carried.add(m);
  let metrics = metricsOf(spec, formats, carried);
  if (meeting === 'as-diskperf') {
    metrics = metricsOf(spec, ['diskperf']);
    warnings.push(
      `A is ${sideA.formats.join('+')} and B is ${sideB.formats.join('+')}: compared on diskperf's sequential and ` +
        "random read and write MB/s at equal request sizes, from fio's jobs of rw read, write, randread and " +
        'randwrite at iodepth 1 and numjobs 1 (diskperf has one request in flight), its MiB/s as MB/s; ' +
        'the tools measure differently',
    );
  } else if (crossFormat) {
    // diskperf and iostat share no metric names: compare what both can say, throughput.
    metrics = (isMetric(spec) ? [spec] : metricsOf(spec, ['iostat'])).filter(
      (m) => m === 'read_kBps' || m === 'write_kBps',
    );
    warnings.push(
      `A is ${sideA.formats.join('+')} and B is ${sideB.formats.join('+')}: only read and write throughput are ` +
        "compared, from diskperf's MB/s and fio's MiB/s (x1024) against iostat's kB/s; the tools measure differently",
    );
  }
  if (metrics.length === 0)
    throw new CompareError(
      `metric "${spec}" is not carried by ${formats.join(' and ')} runs; expected ${METRIC_SPEC_HELP}`,
    );
  // Only the metrics some run carries: a group names what the formats can carry.
  if (!crossFormat && metrics.some((m) => carried.has(m))) metrics = metrics.filter((m) => carried.has(m));
  return { metrics, meeting };
}

/** A warning when some (not all) paired points are within RESOLUTION_STEPS printing steps of 0. */
function resolutionWarnings(paired: readonly ComparisonPoint[]): string[] {
  const nearResolution = paired.filter((r) => r.nearResolution);
  if (nearResolution.length === 0 || nearResolution.length >= paired.length) return [];
  const rest = paired.filter((r) => !r.nearResolution).map((r) => r.ratio!);
  const shown = nearResolution
    .slice(0, 3)
    .map((r) => `${describePoint(r)}: A ${r.a}, B ${r.b} ${METRICS[r.metric].unit}`)
    .join('; ');
  return [
    `${nearResolution.length} point(s) within ${RESOLUTION_STEPS} printing steps of 0 ` +
      `(${shown}${nearResolution.length > 3 ? '; ...' : ''}): their ratios are mostly rounding; ` +
      `without them the summary is ${formatTimes(geomean(rest))}`,
  ];
}

export function compareObservations(
  a: readonly Observation[],
  b: readonly Observation[],
  options: CompareOptions = {},
): Comparison {
  const spec = options.metric ?? 'all';
  const labels = options.labels ?? { a: options.selectors?.a ?? 'A', b: options.selectors?.b ?? 'B' };
  const sideA = side(a, labels.a, options.selectors?.a ?? labels.a);
  const sideB = side(b, labels.b, options.selectors?.b ?? labels.b);
  if (a.length === 0) throw new CompareError(`A (${sideA.selector}) matches no run`);
  if (b.length === 0) throw new CompareError(`B (${sideB.selector}) matches no run`);
  const warnings: string[] = [];
  const { metrics, meeting } = chooseMetrics(spec, sideA, sideB, [a, b], warnings);
  const met = MEETINGS[meeting];
  const oa = a.map(met);
  const ob = b.map(met);

  const model = runModel(oa, ob, metrics, {
    ...(options.iterations !== undefined ? { iterations: options.iterations } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
  });
  const rows = model.points.map((plan, j) => pointRow(plan, j, model));
  const paired = rows.filter((r) => r.ratio !== undefined);
  const excluded = rows.filter((r) => r.excluded !== undefined);
  const ratios = paired.map((r) => r.ratio!);
  const ci = intervalOf(model);
  const significant = ci === null ? null : ci.low > 1 || ci.high < 1;
  const byMetric = metricRatios(model, labels);

  warnings.push(...comparabilityWarnings(a, b));
  // The across-formats warning and those of warnings.ts are about how the runs differ.
  const setupWarnings = warnings.map((_, i) => i);
  warnings.push(...dataWarnings(rows, model, a, b));
  warnings.push(...resolutionWarnings(paired));

  const ratio = model.ratio === null ? null : roundTo(model.ratio);
  const comparison: Comparison = {
    a: sideA,
    b: sideB,
    metric: spec,
    metrics,
    paired: model.paired,
    ratio,
    byMetric,
    points: paired.length,
    min: ratios.length > 0 ? Math.min(...ratios) : null,
    max: ratios.length > 0 ? Math.max(...ratios) : null,
    rows,
    excluded,
    ci,
    ...(model.noInterval !== undefined ? { ciNote: model.noInterval } : {}),
    significant,
    ...(model.uncertainty?.summary ? { p: roundTo(model.uncertainty.summary.p, 3) } : {}),
    advice: adviceOf(model),
    warnings,
    setups: setupsOf(a, b, setupWarnings),
    sentence: '',
  };
  comparison.sentence = sentenceOf(comparison, labels, spec);
  return comparison;
}

/** The summary of each compared metric over its own points, with its Holm-corrected p. */
function metricRatios(model: ModelResult, labels: { a: string; b: string }): Partial<Record<Metric, MetricRatio>> {
  const byMetric: Partial<Record<Metric, MetricRatio>> = {};
  for (const [metric, m] of model.byMetric) {
    const mine = m.indices.map((i) => model.points[i]!.ratio!);
    const u = model.uncertainty?.byMetric.get(metric);
    byMetric[metric] = {
      ratio: roundTo(m.ratio),
      points: mine.length,
      min: roundTo(Math.min(...mine)),
      max: roundTo(Math.max(...mine)),
      unit: METRICS[metric].unit,
      direction: METRICS[metric].direction,
      ci: u ? { low: roundTo(u.interval.low), high: roundTo(u.interval.high) } : null,
      ...(u ? { p: roundTo(u.pHolm, 3) } : {}),
      significant: u ? u.pHolm < 1 - LEVEL : null,
      sentence: metricSentence(metric, m.ratio, labels),
    };
  }
  return byMetric;
}

function pointRow(plan: PointPlan, j: number, model: ModelResult): ComparisonPoint {
  const { column } = plan;
  const row: ComparisonPoint = {
    metric: column.metric,
    ...(column.req_size !== undefined ? { req_size: column.req_size } : {}),
    ...(column.point !== undefined ? { point: column.point, ...fioPointOf(column.point) } : {}),
  };
  if (plan.valueA !== undefined) row.a = roundTo(plan.valueA);
  if (plan.valueB !== undefined) row.b = roundTo(plan.valueB);
  if (plan.excluded !== undefined) row.excluded = plan.excluded;
  else {
    row.ratio = roundTo(plan.ratio!);
    if (plan.spread) row.spread = { a: roundedSpread(plan.spread.a), b: roundedSpread(plan.spread.b) };
    const u = model.uncertainty?.byPoint.get(j);
    if (u) {
      row.ci = { low: roundTo(u.interval.low), high: roundTo(u.interval.high) };
      row.p = roundTo(u.pHolm, 3);
      row.significant = u.pHolm < 1 - LEVEL;
    }
    const floor = RESOLUTION_STEPS * METRICS[column.metric].resolution;
    if (plan.valueA! < floor || plan.valueB! < floor) row.nearResolution = true;
  }
  if (plan.notes.length > 0) row.notes = plan.notes;
  return row;
}

const roundedSpread = (s: SideSpread): SideSpread => ({ runs: s.runs, low: roundTo(s.low), high: roundTo(s.high) });

function intervalOf(model: ModelResult): ComparisonInterval | null {
  const u = model.uncertainty;
  if (u === null || u.summary === undefined) return null;
  return {
    level: LEVEL,
    low: roundTo(u.summary.interval.low),
    high: roundTo(u.summary.interval.high),
    over: u.over,
    replicates: u.replicates,
    method: 'bootstrap-t',
    df: roundTo(u.summary.df, 3),
    iterations: u.iterations,
    seed: u.seed,
    label: intervalLabel(u.over, u.replicates),
  };
}

function intervalLabel(over: Over, n: { a: number; b: number }): string {
  const level = levelText(LEVEL);
  if (over === 'devices') return `${level} interval over devices (${n.a} on A, ${n.b} on B) and their runs`;
  return n.a === n.b
    ? `${level} interval over ${n.a} runs a side`
    : `${level} interval over ${n.a} runs of A and ${n.b} of B`;
}

function adviceOf(model: ModelResult): Comparison['advice'] {
  const advice = model.uncertainty?.advice;
  const percent = Math.round((RESOLVE - 1) * 100);
  if (model.ratio === null) return null;
  if (advice === undefined) {
    return {
      resolve: RESOLVE,
      per: model.uncertainty?.over ?? 'runs',
      count: null,
      note:
        'run each device at least twice on each side: ' +
        `the spread between runs says how many runs would tell a ${percent}% difference apart`,
    };
  }
  const per = advice.per === 'runs' ? 'runs' : 'devices';
  const note =
    advice.count === null
      ? `the spread seen is too wide to tell a ${percent}% difference apart with up to 10,000 ${per} a side`
      : `from the spread seen, about ${advice.count} ${per} a side would tell a ${percent}% difference apart ` +
        `(an interval of about ±${percent}%)`;
  return { resolve: RESOLVE, per: advice.per, count: advice.count, note };
}

/** Zeros, idle devices, since-boot-only series, runs of very different sizes. */
function dataWarnings(
  rows: readonly ComparisonPoint[],
  model: ModelResult,
  a: readonly Observation[],
  b: readonly Observation[],
): string[] {
  const out: string[] = [];
  const zeros = rows.filter((r) => r.excluded?.startsWith('zero'));
  if (zeros.length > 0)
    out.push(
      `${zeros.length} point(s) excluded because a side measured 0 ` +
        `(${zeros.slice(0, 3).map(describePoint).join(', ')}${zeros.length > 3 ? ', ...' : ''})`,
    );
  const idle = new Map<string, string[]>();
  for (const plan of model.points) {
    if (plan.excluded !== undefined) continue;
    for (const [who, names] of [
      ['on both sides', plan.idle.both],
      ['on A', plan.idle.a],
      ['on B', plan.idle.b],
    ] as const)
      for (const n of names) {
        const key = `${n} measured 0 ${who}`;
        const points = idle.get(key);
        if (points) points.push(describePoint(plan.column));
        else idle.set(key, [describePoint(plan.column)]);
      }
  }
  for (const [what, points] of idle)
    out.push(
      `${what} for ${points.slice(0, 4).join(', ')}${points.length > 4 ? `, +${points.length - 4} more` : ''}: ` +
        'left out of those points, the other devices still count',
    );
  for (const [name, obs] of [
    ['A', a],
    ['B', b],
  ] as const) {
    const boot = obs.filter((o) => o.sinceBootOnly);
    if (boot.length > 0)
      out.push(
        `${name}: ${boot.length} iostat series hold only their since-boot report (averages since boot, ` +
          'not over the benchmark)',
      );
    const sizes = obs.map((o) => o.samples ?? 0).filter((n) => n > 0);
    if (sizes.length > 1 && Math.max(...sizes) > 10 * Math.min(...sizes))
      out.push(
        `${name}: runs of very different sizes (${Math.min(...sizes)} to ${Math.max(...sizes)} samples) ` +
          'are weighted equally',
      );
  }
  return out;
}

function metricSentence(metric: Metric, ratio: number, labels: { a: string; b: string }): string {
  const info = METRICS[metric];
  const [faster, slower, r] = ratio >= 1 ? [labels.a, labels.b, ratio] : [labels.b, labels.a, 1 / ratio];
  const better = info.direction === 'higher-better' ? 'higher is better' : 'lower is better';
  const how =
    info.direction === 'higher-better'
      ? `${faster}'s ${info.unit} over ${slower}'s`
      : `${slower}'s ${info.unit} over ${faster}'s`;
  return `${metric} (${info.description}; ${info.unit}, ${better}): ${faster} is ${formatTimes(r)} ${slower} (${how})`;
}

function sentenceOf(c: Comparison, labels: { a: string; b: string }, spec: string): string {
  if (c.ratio === null) return `${labels.a} and ${labels.b} share no ${spec} measurement to compare`;
  const points = plural(c.points, 'point');
  if (c.significant === false) {
    return (
      `~ no significant difference between ${labels.a} and ${labels.b} ` +
      `on ${spec}: ${formatTimes(c.ratio)} ${formatInterval(c.ci)}, ${c.ci!.label} (${points})`
    );
  }
  const flip = c.ratio < 1;
  const [faster, slower] = flip ? [labels.b, labels.a] : [labels.a, labels.b];
  const r = flip ? 1 / c.ratio : c.ratio;
  const [min, max] = flip ? [1 / c.max!, 1 / c.min!] : [c.min!, c.max!];
  const range = c.points > 1 ? `, ${formatTimesRange(min, max)}` : '';
  let sentence = `${faster} is ${formatTimes(r)} ${slower} on ${spec} (${points}${range})`;
  if (c.ci) {
    const [low, high] = flip ? [1 / c.ci.high, 1 / c.ci.low] : [c.ci.low, c.ci.high];
    sentence += `: ${formatTimes(r)} ${formatInterval({ low, high })}, ${c.ci.label}`;
  }
  return sentence;
}

/** The diskperf column each fio rw measures, and the fio metric it is read from. */
const DISKPERF_OF_RW: Record<string, { column: Metric; from: Metric }> = {
  read: { column: 'fwd_rd', from: 'fio_read_bw' },
  write: { column: 'fwd_wt', from: 'fio_write_bw' },
  randread: { column: 'rnd_rd', from: 'fio_read_bw' },
  randwrite: { column: 'rnd_wt', from: 'fio_write_bw' },
};

/**
 * A fio observation as a diskperf table: the bandwidth of its one-request-at-a-time jobs of
 * plain reads and writes (iodepth 1, numjobs 1, one block size), by block size.
 */
function asDiskperf(o: Observation): Observation {
  if (o.format !== 'fio') return o;
  const values: Partial<Record<Metric, Map<number, number>>> = {};
  for (const [rw, { column, from }] of Object.entries(DISKPERF_OF_RW)) {
    const byKey = o.values[from];
    if (byKey === undefined || typeof byKey === 'number') continue;
    for (const [key, v] of byKey as ReadonlyMap<string, number>) {
      const p = fioPointOf(key);
      if (p.rw !== rw || p.iodepth !== 1 || p.numjobs !== 1 || typeof p.bs !== 'number') continue;
      (values[column] ??= new Map()).set(p.bs, v);
    }
  }
  return { ...o, values };
}

const MEETINGS: Record<Meeting, (o: Observation) => Observation> = {
  same: (o) => o,
  'as-diskperf': asDiskperf,
  throughput: asThroughput,
};

/**
 * An observation as read/write throughput in kB/s, for comparing across formats:
 * diskperf's MB/s and fio's MiB/s averaged (geometric mean) over points and directions.
 */
function asThroughput(o: Observation): Observation {
  if (o.format === 'iostat')
    return {
      ...o,
      values: {
        ...(o.values.read_kBps !== undefined ? { read_kBps: o.values.read_kBps } : {}),
        ...(o.values.write_kBps !== undefined ? { write_kBps: o.values.write_kBps } : {}),
      },
    };
  const collect = (metrics: readonly Metric[]) =>
    metrics.flatMap((m) => {
      const v = o.values[m];
      return v === undefined || typeof v === 'number' || v === null ? [] : [...v.values()].filter((x) => x > 0);
    });
  const reads = collect(['fwd_rd', 'bwd_rd', 'rnd_rd', 'fio_read_bw']);
  const writes = collect(['fwd_wt', 'bwd_wt', 'rnd_wt', 'fio_write_bw']);
  return {
    ...o,
    values: {
      ...(reads.length ? { read_kBps: geomean(reads) * 1024 } : {}),
      ...(writes.length ? { write_kBps: geomean(writes) * 1024 } : {}),
    },
  };
}
