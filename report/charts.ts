/**
 * The report page's charts (uPlot): per request size a log2 chart of the
 * ratios with each point's interval and `~` where it is not significant, and
 * both sides' absolute curves; without request sizes (iostat) one bar per
 * metric drawn from 1x on a log axis, up when A is better and down when B is.
 */
import uPlot from 'uplot';
import type { Comparison, ComparisonPoint, Interval, MetricRatio } from '../shared/comparison/index.ts';
import { formatInterval, formatTimes, levelText } from '../shared/comparison/format.ts';
import { $ } from './dom.ts';

const COLORS = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#9467bd',
  '#ff7f0e',
  '#17becf',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#393b79',
  '#637939',
];
/** Bars: A better (above 1x), B better (below). */
const BETTER = { a: '#2c7fb8', b: '#e6550d' };
const CHART_IDS = ['ratio-chart', 'abs-chart', 'bar-chart'];
const charts: uPlot[] = [];

type PointAt = (metric: string, size: number) => ComparisonPoint | undefined;

/** Where the bar chart drew a bar (canvas pixels): written on its element for tests and tools. */
interface DrawnBar {
  metric: string;
  top: number;
  bottom: number;
}

const colorOf = (i: number) => COLORS[i % COLORS.length]!;

export function clearCharts(): void {
  for (const chart of charts.splice(0)) chart.destroy();
  for (const id of CHART_IDS) $(id).replaceChildren();
  const bars = $('bar-chart');
  bars.removeAttribute('role');
  bars.removeAttribute('aria-label');
  delete bars.dataset['bars'];
}

/** Per request size when the points have one (diskperf), else one bar per metric. */
export function drawCharts(c: Comparison): void {
  const sized = c.rows.filter((p) => p.req_size !== undefined);
  if (sized.length > 0) {
    ratioChart(c, sized);
    absoluteChart(c, sized);
  } else barChart(c);
}

function sizeLabel(bytes: number): string {
  return bytes >= 1048576 ? `${bytes / 1048576}M` : bytes >= 1024 ? `${bytes / 1024}K` : `${bytes}`;
}

function chartWidth(): number {
  return Math.max(360, Math.min(960, document.body.clientWidth - 48));
}

const requestSizes = (sized: readonly ComparisonPoint[]) =>
  [...new Set(sized.map((p) => p.req_size!))].sort((a, b) => a - b);

/** A log2 range that holds every value given and 1x, in whole powers of 2. */
function ratioRange(values: readonly (number | null | undefined)[]): [number, number] {
  const finite = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0);
  const lo = Math.min(1, ...finite);
  const hi = Math.max(1, ...finite);
  const [min, max] = uPlot.rangeLog(lo, hi, 2, true) as [number, number];
  return [min, max === min ? max * 2 : max];
}

/** Ticks at whole powers of 2 within the y scale (1x among them). */
function powersOf2(u: uPlot): number[] {
  const { min, max } = u.scales['y']!;
  if (min === undefined || max === undefined || !(min > 0)) return [1];
  const out: number[] = [];
  for (let e = Math.ceil(Math.log2(min) - 1e-9); e <= Math.floor(Math.log2(max) + 1e-9); e++) out.push(2 ** e);
  return out;
}

/** The y axis of both ratio charts: log2, ticks at powers of 2, 1x meaning no difference. */
function ratioAxis(): uPlot.Axis {
  return {
    label: 'A / B (log2; 1x: no difference)',
    splits: powersOf2,
    values: (_u, ticks) => ticks.map((t) => (t === null || t === undefined ? '' : formatTimes(t))),
  };
}

/** The no-difference line at 1x, dotted, across the plot. */
function drawOneX(u: uPlot): void {
  const y = u.valToPos(1, 'y', true);
  const { left, width } = u.bbox;
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = '#444';
  ctx.lineWidth = uPlot.pxRatio;
  ctx.setLineDash([3 * uPlot.pxRatio, 3 * uPlot.pxRatio]);
  ctx.beginPath();
  ctx.moveTo(left, y);
  ctx.lineTo(left + width, y);
  ctx.stroke();
  ctx.restore();
}

/** A vertical interval at x (canvas pixels) from low to high, with caps. */
function drawWhisker(u: uPlot, x: number, ci: Interval, color: string): void {
  const ctx = u.ctx;
  const y0 = u.valToPos(ci.low, 'y', true);
  const y1 = u.valToPos(ci.high, 'y', true);
  const cap = 3 * uPlot.pxRatio;
  ctx.save();
  ctx.strokeStyle = color;
  ctx.lineWidth = 1.5 * uPlot.pxRatio;
  ctx.beginPath();
  ctx.moveTo(x, y0);
  ctx.lineTo(x, y1);
  ctx.moveTo(x - cap, y0);
  ctx.lineTo(x + cap, y0);
  ctx.moveTo(x - cap, y1);
  ctx.lineTo(x + cap, y1);
  ctx.stroke();
  ctx.restore();
}

function drawText(u: uPlot, text: string, x: number, y: number, color: string, baseline: CanvasTextBaseline): void {
  const ctx = u.ctx;
  ctx.save();
  ctx.fillStyle = color;
  ctx.font = `${12 * uPlot.pxRatio}px system-ui, sans-serif`;
  ctx.textAlign = 'center';
  ctx.textBaseline = baseline;
  ctx.fillText(text, x, y);
  ctx.restore();
}

/** Ratio per request size, one line per metric, each point's interval and `~`, the summary ratio and its interval. */
function ratioChart(c: Comparison, sized: ComparisonPoint[]): void {
  const sizes = requestSizes(sized);
  const metrics = c.metrics.filter((m) => sized.some((p) => p.metric === m && p.ratio !== undefined));
  const pointAt: PointAt = (metric, size) =>
    sized.find((p) => p.metric === metric && p.req_size === size && p.ratio !== undefined);
  const level = c.ci ? levelText(c.ci.level) : '';
  const extent = [...sized.flatMap((p) => [p.ratio, p.ci?.low, p.ci?.high]), c.ratio, c.ci?.low, c.ci?.high];
  const options: uPlot.Options = {
    title:
      'how many times better A is, by request size ' +
      `(${c.metric}${c.ci ? `; bars: each point's ${level} interval, ~ not significant` : ''})`,
    width: chartWidth(),
    height: 320,
    scales: { x: { distr: 3, log: 2 }, y: { distr: 3, log: 2, range: () => ratioRange(extent) } },
    axes: [{ values: (_u, ticks) => ticks.map(sizeLabel), label: 'request size (bytes, log2)' }, ratioAxis()],
    series: ratioSeries(c, metrics, level),
    hooks: { draw: [(u: uPlot) => drawPointMarks(u, metrics, sizes, pointAt)] },
  };
  charts.push(new uPlot(options, ratioData(c, metrics, sizes, pointAt), $('ratio-chart')));
}

/** Each metric's ratio per size, then the summary and its interval's ends as flat lines. */
function ratioData(c: Comparison, metrics: readonly string[], sizes: number[], pointAt: PointAt): uPlot.AlignedData {
  const flat = (v: number | null) => sizes.map(() => v);
  const perMetric = metrics.map((m) => sizes.map((s) => pointAt(m, s)?.ratio ?? null));
  return [sizes, ...perMetric, flat(c.ratio), ...(c.ci ? [flat(c.ci.low), flat(c.ci.high)] : [])];
}

function ratioSeries(c: Comparison, metrics: readonly string[], level: string): uPlot.Series[] {
  return [
    { label: 'request size' },
    ...metrics.map((m, i) => ({ label: m, stroke: colorOf(i), width: 2, points: { size: 6 } })),
    { label: `summary ${formatTimes(c.ratio)}`, stroke: '#000', width: 2, dash: [8, 4] },
    ...(c.ci
      ? [
          { label: `${level} low`, stroke: '#999', dash: [2, 4] },
          { label: `${level} high`, stroke: '#999', dash: [2, 4] },
        ]
      : []),
  ];
}

/** Over the ratio lines: 1x, each point's interval, and `~` over a point that is not significant. */
function drawPointMarks(u: uPlot, metrics: readonly string[], sizes: readonly number[], pointAt: PointAt): void {
  drawOneX(u);
  metrics.forEach((m, i) => {
    const color = colorOf(i);
    for (const size of sizes) {
      const p = pointAt(m, size);
      if (p === undefined) continue;
      const x = u.valToPos(size, 'x', true);
      if (p.ci) drawWhisker(u, x, p.ci, `${color}99`);
      const above = u.valToPos(p.ci?.high ?? p.ratio!, 'y', true) - 4 * uPlot.pxRatio;
      if (p.significant === false) drawText(u, '~', x, above, color, 'bottom');
    }
  });
}

/** Both sides' absolute values per request size: A solid, B dashed. */
function absoluteChart(c: Comparison, sized: ComparisonPoint[]): void {
  const sizes = requestSizes(sized);
  const metrics = c.metrics.filter((m) => sized.some((p) => p.metric === m));
  const valueAt = (metric: string, size: number, side: 'a' | 'b') =>
    sized.find((p) => p.metric === metric && p.req_size === size)?.[side] ?? null;
  const data: uPlot.AlignedData = [
    sizes,
    ...metrics.flatMap((m) => [sizes.map((s) => valueAt(m, s, 'a')), sizes.map((s) => valueAt(m, s, 'b'))]),
  ];
  const series: uPlot.Series[] = [
    { label: 'request size' },
    ...metrics.flatMap((m, i) => [
      { label: `A ${m}`, stroke: colorOf(i), width: 2 },
      { label: `B ${m}`, stroke: colorOf(i), width: 1.5, dash: [6, 4] },
    ]),
  ];
  const options: uPlot.Options = {
    title: `${c.a.label} (solid) and ${c.b.label} (dashed), MB/s`,
    width: chartWidth(),
    height: 320,
    scales: { x: { distr: 3, log: 2 } },
    axes: [{ values: (_u, ticks) => ticks.map(sizeLabel) }, { label: 'MB/s' }],
    series,
  };
  charts.push(new uPlot(options, data, $('abs-chart')));
}

/** A bar's value as drawn over it: the ratio, and `~` when it is not significant. */
const barValue = (m: MetricRatio) => `${formatTimes(m.ratio)}${m.significant === false ? ' ~' : ''}`;

/** The bar chart said in words, for whoever cannot see it. */
function barsLabel(c: Comparison, metrics: readonly string[], entries: readonly MetricRatio[]): string {
  const said = entries.map(
    (m, i) =>
      `${metrics[i]} ${formatTimes(m.ratio)}${m.ci ? ` ${formatInterval(m.ci)}` : ''}` +
      `${m.significant === false ? ' ~' : ''}`,
  );
  const where = `up where ${c.a.label} is better, down where ${c.b.label} is`;
  return `bars from 1x (no difference), ${where}: ${said.join(', ')}`;
}

/**
 * iostat (and any point without a request size): one bar per metric, drawn
 * from 1x on a log2 axis, up when A is better and down when B is, with its
 * value, its interval and `~` when it is not significant.
 */
function barChart(c: Comparison): void {
  const metrics = c.metrics.filter((m) => c.byMetric[m] !== undefined);
  if (metrics.length === 0) return;
  const entries = metrics.map((m) => c.byMetric[m]!);
  const drawn: DrawnBar[] = [];
  const bars = uPlot.paths.bars!({
    size: [0.6, 80],
    each: (_u, _series, i, _left, top, _width, height) =>
      void drawn.push({ metric: metrics[i]!, top, bottom: top + height }),
  });
  const container = $('bar-chart');
  container.setAttribute('role', 'img');
  container.setAttribute('aria-label', barsLabel(c, metrics, entries));
  const draw = (u: uPlot) => {
    drawOneX(u);
    container.dataset['bars'] = JSON.stringify({ one: u.valToPos(1, 'y', true), bars: drawn });
    drawBarValues(u, entries);
  };
  const options = barOptions(c, metrics, entries, bars);
  options.hooks = { drawClear: [() => void (drawn.length = 0)], draw: [draw] };
  const data: uPlot.AlignedData = [
    metrics.map((_, i) => i + 1),
    entries.map((m) => (m.ratio >= 1 ? m.ratio : null)),
    entries.map((m) => (m.ratio < 1 ? m.ratio : null)),
  ];
  charts.push(new uPlot(options, data, container));
}

/** Each bar's interval and value, past its far end. */
function drawBarValues(u: uPlot, entries: readonly MetricRatio[]): void {
  entries.forEach((m, i) => {
    const x = u.valToPos(i + 1, 'x', true);
    const up = m.ratio >= 1;
    if (m.ci) drawWhisker(u, x, m.ci, '#333');
    const end = up ? Math.max(m.ratio, m.ci?.high ?? m.ratio) : Math.min(m.ratio, m.ci?.low ?? m.ratio);
    const y = u.valToPos(end, 'y', true) + (up ? -4 : 4) * uPlot.pxRatio;
    drawText(u, barValue(m), x, y, '#222', up ? 'bottom' : 'top');
  });
}

function barOptions(
  c: Comparison,
  metrics: readonly string[],
  entries: readonly MetricRatio[],
  bars: uPlot.Series.PathBuilder,
): uPlot.Options {
  const xs = metrics.map((_, i) => i + 1);
  const extent = entries.flatMap((m) => [m.ratio, m.ci?.low, m.ci?.high]);
  // Room for the value labels past the longest bar: a quarter of a power of 2 more each way.
  const range = (): [number, number] => {
    const [min, max] = ratioRange(extent);
    return [min / 1.4, max * 1.4];
  };
  return {
    title: `how many times better A is, per metric (${c.a.devices.join(', ')} vs ${c.b.devices.join(', ')})`,
    width: chartWidth(),
    height: 300,
    scales: { x: { time: false, range: [0.4, metrics.length + 0.6] }, y: { distr: 3, log: 2, range } },
    axes: [
      { splits: () => xs, values: (_u, ticks) => ticks.map((t) => metrics[Math.round(t) - 1] ?? '') },
      ratioAxis(),
    ],
    series: [
      { label: 'metric' },
      {
        label: `${c.a.label} better`,
        stroke: BETTER.a,
        fill: `${BETTER.a}aa`,
        paths: bars,
        points: { show: false },
        fillTo: 1,
      },
      {
        label: `${c.b.label} better`,
        stroke: BETTER.b,
        fill: `${BETTER.b}aa`,
        paths: bars,
        points: { show: false },
        fillTo: 1,
      },
    ],
  };
}
