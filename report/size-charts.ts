/**
 * The charts of points with a request size (diskperf): the ratio of A to B by
 * request size on log2 axes, each metric's interval a shaded band around its
 * line, 1x the dotted reference and `~` over a point that is not significant;
 * and both sides' absolute curves (A solid, B dashed), each with its spread
 * over runs shaded. The legends name each line with its real figure.
 */
import uPlot from 'uplot';
import type { Comparison, ComparisonPoint } from '../shared/comparison/index.ts';
import { formatInterval, formatTimes, levelText } from '../shared/comparison/format.ts';
import {
  chartWidth,
  colorOf,
  drawOneX,
  drawText,
  fillBand,
  keepChart,
  ratioAxis,
  ratioRange,
  ratioSaid,
  sizeLabel,
  STILL_LEGEND,
  withAlpha,
} from './chart-kit.ts';
import { $ } from './dom.ts';

type PointAt = (metric: string, size: number) => ComparisonPoint | undefined;

const RATIO_HEIGHT = 320;
const ABSOLUTE_HEIGHT = 320;

/** The points with a request size. */
export const sizedPoints = (c: Comparison): ComparisonPoint[] => c.rows.filter((p) => p.req_size !== undefined);

const requestSizes = (sized: readonly ComparisonPoint[]) =>
  [...new Set(sized.map((p) => p.req_size!))].sort((a, b) => a - b);

const sizeAxis: uPlot.Axis = {
  label: 'request size (bytes, log2)',
  values: (_u, ticks) => ticks.map(sizeLabel),
};

function pointLookup(sized: readonly ComparisonPoint[]): PointAt {
  const byKey = new Map(sized.map((p) => [`${p.metric} ${p.req_size}`, p]));
  return (metric, size) => byKey.get(`${metric} ${size}`);
}

/** A metric's line in the legend: its name and its geometric mean ratio, with its interval. */
function metricLabel(c: Comparison, metric: string): string {
  const m = c.byMetric[metric as keyof Comparison['byMetric']];
  if (m === undefined) return metric;
  return `${metric} ${ratioSaid(m)}`;
}

/** Ratio per request size: a line and an interval band per metric, the summary and its band, 1x and `~`. */
export function ratioChart(c: Comparison, sized: ComparisonPoint[]): void {
  const sizes = requestSizes(sized);
  const metrics = c.metrics.filter((m) => sized.some((p) => p.metric === m && p.ratio !== undefined));
  if (metrics.length === 0) return;
  const pointAt = pointLookup(sized);
  const level = c.ci ? levelText(c.ci.level) : '';
  const extent = [...sized.flatMap((p) => [p.ratio, p.ci?.low, p.ci?.high]), c.ratio, c.ci?.low, c.ci?.high];
  const container = $('ratio-chart');
  const summary = `summary ${formatTimes(c.ratio)}${c.ci ? ` ${formatInterval(c.ci)}` : ''}`;
  const options: uPlot.Options = {
    title: `how many times better A is, by request size (${c.metric})`,
    width: chartWidth(container),
    height: RATIO_HEIGHT,
    legend: STILL_LEGEND,
    scales: { x: { distr: 3, log: 2 }, y: { distr: 3, log: 2, range: () => ratioRange(extent) } },
    axes: [sizeAxis, ratioAxis('y', 'A / B (log2)')],
    series: [
      { label: 'request size' },
      ...metrics.map((m, i) => ({ label: metricLabel(c, m), stroke: colorOf(i), width: 2, points: { size: 6 } })),
      { label: summary, stroke: '#000', width: 2, dash: [8, 4], points: { show: false } },
    ],
    hooks: {
      drawAxes: [(u: uPlot) => drawIntervalBands(u, c, metrics, sizes, pointAt)],
      draw: [(u: uPlot) => drawPointMarks(u, metrics, sizes, pointAt)],
    },
  };
  const data: uPlot.AlignedData = [
    sizes,
    ...metrics.map((m) => sizes.map((s) => pointAt(m, s)?.ratio ?? null)),
    sizes.map(() => c.ratio),
  ];
  keepChart(new uPlot(options, data, container), container, RATIO_HEIGHT);
  const note = $('ratio-note');
  note.textContent = c.ci
    ? `Shaded: each metric's ${level} interval (grey: the summary's). Dotted line: 1x, no difference; ` +
      'above it A is better, below it B. ~ marks a point that is not significant.'
    : 'Dotted line: 1x, no difference; above it A is better, below it B. No interval: one run a side.';
  note.hidden = false;
}

/** Under the lines: the summary's interval across the chart, then each metric's interval by size. */
function drawIntervalBands(
  u: uPlot,
  c: Comparison,
  metrics: readonly string[],
  sizes: readonly number[],
  pointAt: PointAt,
): void {
  if (c.ci) {
    const ends = [sizes[0]!, sizes[sizes.length - 1]!];
    fillBand(u, ends, [c.ci.low, c.ci.low], [c.ci.high, c.ci.high], 'rgba(0,0,0,0.08)');
  }
  metrics.forEach((m, i) => {
    const low = sizes.map((s) => pointAt(m, s)?.ci?.low ?? null);
    const high = sizes.map((s) => pointAt(m, s)?.ci?.high ?? null);
    fillBand(u, sizes, low, high, withAlpha(colorOf(i), 0.18));
  });
}

/** Over the lines: 1x, and `~` over each point that is not significant. */
function drawPointMarks(u: uPlot, metrics: readonly string[], sizes: readonly number[], pointAt: PointAt): void {
  drawOneX(u, 'y');
  metrics.forEach((m, i) => {
    for (const size of sizes) {
      const p = pointAt(m, size);
      if (p?.ratio === undefined || p.significant !== false) continue;
      const x = u.valToPos(size, 'x', true);
      const above = u.valToPos(p.ci?.high ?? p.ratio, 'y', true) - 3 * uPlot.pxRatio;
      drawText(u, '~', x, above, colorOf(i), { baseline: 'bottom' });
    }
  });
}

/** The unit the absolute chart's metrics share (diskperf's MB/s), from the answer. */
function absoluteUnit(c: Comparison, metrics: readonly string[]): string {
  const units = new Set(metrics.map((m) => c.byMetric[m as keyof Comparison['byMetric']]?.unit).filter(Boolean));
  return units.size === 1 ? [...units][0]! : 'value';
}

/** Both sides' values per request size, A solid and B dashed, each side's spread over runs shaded. */
export function absoluteChart(c: Comparison, sized: ComparisonPoint[]): void {
  const sizes = requestSizes(sized);
  const metrics = c.metrics.filter((m) => sized.some((p) => p.metric === m));
  if (metrics.length === 0) return;
  const pointAt = pointLookup(sized);
  const value = (m: string, s: number, side: 'a' | 'b') => pointAt(m, s)?.[side] ?? null;
  const unit = absoluteUnit(c, metrics);
  const container = $('abs-chart');
  const options: uPlot.Options = {
    title: `A ${c.a.label} (solid) and B ${c.b.label} (dashed), ${unit}`,
    width: chartWidth(container),
    height: ABSOLUTE_HEIGHT,
    legend: STILL_LEGEND,
    scales: { x: { distr: 3, log: 2 } },
    axes: [sizeAxis, { label: unit }],
    series: [
      { label: 'request size' },
      ...metrics.flatMap((m, i) => [
        { label: `A ${m}`, stroke: colorOf(i), width: 2 },
        { label: `B ${m}`, stroke: colorOf(i), width: 1.5, dash: [6, 4] },
      ]),
    ],
    hooks: { drawAxes: [(u: uPlot) => drawSpreadBands(u, metrics, sizes, pointAt)] },
  };
  const data: uPlot.AlignedData = [
    sizes,
    ...metrics.flatMap((m) => [sizes.map((s) => value(m, s, 'a')), sizes.map((s) => value(m, s, 'b'))]),
  ];
  keepChart(new uPlot(options, data, container), container, ABSOLUTE_HEIGHT);
  const note = $('abs-note');
  const withSpread = sized.some((p) => p.spread !== undefined && (p.spread.a.runs > 1 || p.spread.b.runs > 1));
  note.textContent = withSpread
    ? "Each line: a side's median over its runs; shaded: from its lowest run to its highest."
    : "Each line: a side's value; no spread to shade (one run a side).";
  note.hidden = false;
}

function drawSpreadBands(u: uPlot, metrics: readonly string[], sizes: readonly number[], pointAt: PointAt): void {
  metrics.forEach((m, i) => {
    for (const side of ['a', 'b'] as const) {
      const spread = sizes.map((s) => pointAt(m, s)?.spread?.[side]);
      const low = spread.map((x) => (x && x.runs > 1 ? x.low : null));
      const high = spread.map((x) => (x && x.runs > 1 ? x.high : null));
      fillBand(u, sizes, low, high, withAlpha(colorOf(i), side === 'a' ? 0.2 : 0.1));
    }
  });
}
