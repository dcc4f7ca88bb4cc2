/**
 * The charts of fio sweeps (points of rw, block size, queue depth and jobs),
 * one metric at a time, picked in the section's menu: how many times better A
 * is against block size (a line per rw, iodepth and numjobs) and against queue
 * depth (a line per rw, block size and numjobs), each line's interval shaded,
 * 1x dotted and `~` over a point that is not significant; then both sides'
 * values against block size, A solid and B dashed, each side's spread over
 * runs shaded. Log2 axes, as a sweep doubles its sizes and depths. One metric
 * and a few lines a chart, because every metric at every point at once is a
 * tangle: the table holds every point. What each chart drew is written on its
 * element (`data-series`) for tests and tools; the latency percentiles are
 * fio-percentiles.ts's.
 */
import uPlot from 'uplot';
import type { Comparison, ComparisonPoint } from '../shared/comparison/index.ts';
import { levelText } from '../shared/comparison/format.ts';
import { blockSizeText, compareFioPoints } from '../shared/fio-point.ts';
import { FIO_PERCENTILE_MEASURES, METRICS, type Metric } from '../shared/metrics.ts';
import {
  chartWidth,
  colorOf,
  drawOneX,
  drawText,
  dropChart,
  fillBand,
  keepChart,
  ratioAxis,
  ratioRange,
  ratioSaid,
  STILL_LEGEND,
  withAlpha,
} from './chart-kit.ts';
import { $, el } from './dom.ts';
import { clearPercentiles, percentileView } from './fio-percentiles.ts';

/** What a chart's x axis is: the block size or the queue depth. */
type Along = 'bs' | 'iodepth';

/** One line of a chart: its name and its points by x. */
interface Line {
  label: string;
  at: Map<number, ComparisonPoint>;
}

/** One metric's points along one axis: the x values, the lines drawn, and what was left out. */
interface Sweep {
  metric: Metric;
  along: Along;
  xs: number[];
  lines: Line[];
  /** Lines past the cap, not drawn. */
  more: number;
  /** Points with no value on this axis (a block size range, a job without options). */
  outside: number;
}

const HEIGHT = 300;
/** Lines a ratio chart draws at most; an absolute chart draws two a line (A and B). */
const MOST_LINES = 8;
const MOST_ABSOLUTE_LINES = 5;
/** The least room between two labels of the x axis (CSS pixels). */
const TICK_GAP = 40;
const PERCENTILE = new RegExp(`_(?:${FIO_PERCENTILE_MEASURES.join('|')})$`);

const ALONG = {
  bs: {
    chart: 'fio-bs-chart',
    note: 'fio-bs-note',
    absolute: 'fio-abs-chart',
    absoluteNote: 'fio-abs-note',
    name: 'block size',
    axis: 'block size (bytes, log2)',
    tick: (x: number) => blockSizeText(x),
    x: (p: ComparisonPoint) => (typeof p.bs === 'number' ? p.bs : undefined),
    line: (p: ComparisonPoint) => `${p.rw} qd${p.iodepth ?? '?'} nj${p.numjobs ?? '?'}`,
  },
  iodepth: {
    chart: 'fio-qd-chart',
    note: 'fio-qd-note',
    absolute: 'fio-abs-qd-chart',
    absoluteNote: 'fio-abs-qd-note',
    name: 'queue depth',
    axis: 'queue depth (iodepth, log2)',
    tick: (x: number) => String(x),
    x: (p: ComparisonPoint) => p.iodepth,
    line: (p: ComparisonPoint) => `${p.rw} ${blockSizeText(p.bs)} nj${p.numjobs ?? '?'}`,
  },
} as const;

const CHARTS = ['fio-bs-chart', 'fio-qd-chart', 'fio-abs-chart', 'fio-abs-qd-chart'];
const NOTES = ['fio-bs-note', 'fio-qd-note', 'fio-abs-note', 'fio-abs-qd-note'];

/** The charts of the metric shown, to drop when another is picked. */
let drawn: uPlot[] = [];

/** The points at fio points (rw, bs, iodepth, numjobs, or a job's name). */
export const fioPoints = (c: Comparison): ComparisonPoint[] => c.rows.filter((p) => p.point !== undefined);

/** Empties the section; its charts are already destroyed (chart-kit.ts dropCharts). */
export function clearFioCharts(): void {
  drawn = [];
  for (const id of CHARTS) {
    $(id).replaceChildren();
    delete $(id).dataset['series'];
  }
  for (const id of NOTES) $(id).hidden = true;
  const select = $<HTMLSelectElement>('fio-metric');
  select.replaceChildren();
  select.onchange = null;
  $('fio-section').hidden = true;
  clearPercentiles();
}

/** The section for a fio comparison: the menu of its metrics, the charts of the first, the percentiles. */
export function fioCharts(c: Comparison, points: readonly ComparisonPoint[]): void {
  $('fio-section').hidden = false;
  const metrics = c.metrics.filter((m) => points.some((p) => p.metric === m));
  const select = $<HTMLSelectElement>('fio-metric');
  select.replaceChildren(...metrics.map((m) => el('option', { value: m, textContent: m })));
  select.value = firstCharted(metrics) ?? '';
  select.onchange = () => drawMetric(c, points, select.value as Metric);
  if (select.value) drawMetric(c, points, select.value as Metric);
  percentileView(c, points);
}

/** Bandwidth first, else a mean latency: a percentile shows best in the table. */
const firstCharted = (metrics: readonly Metric[]) =>
  metrics.find((m) => m.endsWith('_bw')) ?? metrics.find((m) => !PERCENTILE.test(m)) ?? metrics[0];

function drawMetric(c: Comparison, points: readonly ComparisonPoint[], metric: Metric): void {
  for (const chart of drawn.splice(0)) dropChart(chart);
  const mine = points.filter((p) => p.metric === metric && p.rw !== undefined).sort(compareFioPoints);
  ratioChart(c, sweepOf(mine, metric, 'bs', MOST_LINES));
  ratioChart(c, sweepOf(mine, metric, 'iodepth', MOST_LINES));
  absoluteChart(c, sweepOf(mine, metric, 'bs', MOST_ABSOLUTE_LINES));
  absoluteChart(c, sweepOf(mine, metric, 'iodepth', MOST_ABSOLUTE_LINES));
}

/** A metric's points (in sweep order) as lines along one axis, the first `most` of them. */
function sweepOf(points: readonly ComparisonPoint[], metric: Metric, along: Along, most: number): Sweep {
  const { x, line } = ALONG[along];
  const lines = new Map<string, Map<number, ComparisonPoint>>();
  let outside = 0;
  for (const p of points) {
    const at = x(p);
    if (at === undefined || !(at > 0)) {
      outside++;
      continue;
    }
    const label = line(p);
    if (!lines.has(label)) lines.set(label, new Map());
    lines.get(label)!.set(at, p);
  }
  const all = [...lines].map(([label, at]) => ({ label, at }));
  const kept = all.slice(0, most);
  const xs = [...new Set(kept.flatMap((l) => [...l.at.keys()]))].sort((a, b) => a - b);
  return { metric, along, xs, lines: kept, more: all.length - kept.length, outside };
}

/** A sweep's x axis: a tick at each value it holds, labelled where there is room. */
function sweepAxis(sweep: Sweep): uPlot.Axis {
  const { axis, tick } = ALONG[sweep.along];
  return {
    label: axis,
    splits: () => sweep.xs,
    filter: (u, splits) => spaced(u, splits),
    values: (_u, ticks) => ticks.map((t) => (t === null || t === undefined ? '' : tick(t))),
  };
}

/** The ticks far enough apart to be read, from the smallest. */
function spaced(u: uPlot, splits: readonly number[]): (number | null)[] {
  let last = -Infinity;
  return splits.map((v) => {
    const at = u.valToPos(v, 'x');
    if (at - last < TICK_GAP) return null;
    last = at;
    return v;
  });
}

/** A line's values along the sweep, null where it has no point. */
const valuesOf = (sweep: Sweep, line: Line, value: (p: ComparisonPoint) => number | undefined) =>
  sweep.xs.map((x) => {
    const p = line.at.get(x);
    const v = p && value(p);
    return v !== undefined && v > 0 ? v : null;
  });

/** How many times better A is along the sweep: a line and its interval band per line, 1x and `~`. */
function ratioChart(c: Comparison, sweep: Sweep): void {
  const { chart: id, note, name } = ALONG[sweep.along];
  const container = $(id);
  container.replaceChildren();
  if (sweep.xs.length < 2) return say(note, noCurve(sweep));
  const extent = sweep.lines.flatMap((l) => [...l.at.values()].flatMap((p) => [p.ratio, p.ci?.low, p.ci?.high]));
  const summary = c.byMetric[sweep.metric];
  const options: uPlot.Options = {
    title: `how many times better A is, by ${name}: ${sweep.metric}${summary ? ` ${ratioSaid(summary)}` : ''}`,
    width: chartWidth(container),
    height: HEIGHT,
    legend: STILL_LEGEND,
    scales: { x: { distr: 3, log: 2 }, y: { distr: 3, log: 2, range: () => ratioRange(extent) } },
    axes: [sweepAxis(sweep), ratioAxis('y', 'A / B (log2)')],
    series: [
      { label: name },
      ...sweep.lines.map((l, i) => ({ label: l.label, stroke: colorOf(i), width: 2, spanGaps: true })),
    ],
    hooks: { drawAxes: [(u: uPlot) => intervalBands(u, sweep)], draw: [(u: uPlot) => ratioMarks(u, sweep)] },
  };
  const data = [sweep.xs, ...sweep.lines.map((l) => valuesOf(sweep, l, (p) => p.ratio))];
  show(options, data, container, sweep);
  say(note, ratioNote(c, sweep));
}

function intervalBands(u: uPlot, sweep: Sweep): void {
  sweep.lines.forEach((l, i) => {
    const low = valuesOf(sweep, l, (p) => p.ci?.low);
    const high = valuesOf(sweep, l, (p) => p.ci?.high);
    fillBand(u, sweep.xs, low, high, withAlpha(colorOf(i), 0.15));
  });
}

/** Over the lines: 1x, and `~` over each point that is not significant. */
function ratioMarks(u: uPlot, sweep: Sweep): void {
  drawOneX(u, 'y');
  sweep.lines.forEach((l, i) => {
    for (const [x, p] of l.at) {
      if (p.ratio === undefined || p.significant !== false) continue;
      const above = u.valToPos(p.ci?.high ?? p.ratio, 'y', true) - 3 * uPlot.pxRatio;
      drawText(u, '~', u.valToPos(x, 'x', true), above, colorOf(i), { baseline: 'bottom' });
    }
  });
}

/** Both sides' values along block size, A solid and B dashed, each side's spread over runs shaded. */
function absoluteChart(c: Comparison, sweep: Sweep): void {
  const along = ALONG[sweep.along];
  const container = $(along.absolute);
  container.replaceChildren();
  if (sweep.xs.length < 2) return say(along.absoluteNote, noCurve(sweep));
  const { unit, direction } = METRICS[sweep.metric];
  const options: uPlot.Options = {
    title: `A ${c.a.label} (solid) and B ${c.b.label} (dashed): ${sweep.metric} by ${along.name}, ${unit}`,
    width: chartWidth(container),
    height: HEIGHT,
    legend: STILL_LEGEND,
    scales: { x: { distr: 3, log: 2 }, y: { distr: 3, log: 10 } },
    axes: [sweepAxis(sweep), { label: `${unit} (log)` }],
    series: [
      { label: along.name },
      ...sweep.lines.flatMap((l, i) => [
        { label: `A ${l.label}`, stroke: colorOf(i), width: 2, spanGaps: true },
        { label: `B ${l.label}`, stroke: colorOf(i), width: 1.5, dash: [6, 4], spanGaps: true },
      ]),
    ],
    hooks: { drawAxes: [(u: uPlot) => spreadBands(u, sweep)] },
  };
  const data = [
    sweep.xs,
    ...sweep.lines.flatMap((l) => [valuesOf(sweep, l, (p) => p.a), valuesOf(sweep, l, (p) => p.b)]),
  ];
  show(options, data, container, sweep);
  const better = direction === 'higher-better' ? 'higher is better' : 'lower is better';
  say(
    along.absoluteNote,
    `Each line: a side's median over its runs (${better}); ${spreadSaid(sweep)}${capSaid(sweep)}`,
  );
}

function spreadBands(u: uPlot, sweep: Sweep): void {
  sweep.lines.forEach((l, i) => {
    for (const side of ['a', 'b'] as const) {
      const spread = (p: ComparisonPoint) => p.spread?.[side];
      const low = valuesOf(sweep, l, (p) => ((spread(p)?.runs ?? 0) > 1 ? spread(p)!.low : undefined));
      const high = valuesOf(sweep, l, (p) => ((spread(p)?.runs ?? 0) > 1 ? spread(p)!.high : undefined));
      fillBand(u, sweep.xs, low, high, withAlpha(colorOf(i), side === 'a' ? 0.2 : 0.1));
    }
  });
}

/** Draws and keeps a chart, and writes what it drew on its element. */
function show(options: uPlot.Options, data: (number | null)[][], container: HTMLElement, sweep: Sweep): void {
  drawn.push(keepChart(new uPlot(options, data as uPlot.AlignedData, container), container, HEIGHT));
  container.dataset['series'] = JSON.stringify({
    metric: sweep.metric,
    xs: sweep.xs,
    lines: sweep.lines.map((l) => ({ label: l.label, points: l.at.size })),
  });
}

function say(id: string, text: string): void {
  const note = $(id);
  note.textContent = text;
  note.hidden = false;
}

/** Why a chart is not drawn: one value or none along its axis. */
function noCurve(sweep: Sweep): string {
  const { name, tick } = ALONG[sweep.along];
  if (sweep.xs.length === 0) return `No ${name} to chart ${sweep.metric} by: its points are in the table.`;
  return `One ${name} (${tick(sweep.xs[0]!)}) in this sweep of ${sweep.metric}: no curve by ${name}.`;
}

function ratioNote(c: Comparison, sweep: Sweep): string {
  const withIntervals = sweep.lines.some((l) => [...l.at.values()].some((p) => p.ci !== undefined));
  const level = c.ci ? `${levelText(c.ci.level)} ` : '';
  const bands = withIntervals ? `Shaded: each line's ${level}interval. ` : 'No interval: one run a side. ';
  return (
    `${bands}Dotted line: 1x, no difference; above it A is better, below it B. ` +
    `~ marks a point that is not significant.${capSaid(sweep)}`
  );
}

const spreadSaid = (sweep: Sweep) =>
  sweep.lines.some((l) => [...l.at.values()].some((p) => (p.spread?.a.runs ?? 0) > 1 || (p.spread?.b.runs ?? 0) > 1))
    ? 'shaded: from its lowest run to its highest.'
    : 'no spread to shade (one run a side).';

/** What the chart leaves to the table: lines past the cap, points off its axis. */
function capSaid(sweep: Sweep): string {
  const total = sweep.lines.length + sweep.more;
  const more = sweep.more > 0 ? ` The first ${sweep.lines.length} of ${total} lines are drawn.` : '';
  const outside = sweep.outside > 0 ? ` ${sweep.outside} points have no ${ALONG[sweep.along].name}.` : '';
  return more || outside ? `${more}${outside} The table below holds every point.` : '';
}
