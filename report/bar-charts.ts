/**
 * Points without a request size (iostat): one horizontal bar per metric,
 * diverging from 1x on a log2 scale, to the right where A is better and to
 * the left where B is, each labelled with its ratio (`0.20x`, `~` when it is
 * not significant), its interval as a whisker and both sides' values beside
 * its name. The device's performance metrics (and any combined one asked for
 * by name) in one chart, the load put on it (queues, %busy) in another below.
 * Where each bar was drawn is written on its chart's element (`data-bars`)
 * for tests and tools.
 */
import uPlot from 'uplot';
import type { Comparison, ComparisonPoint, MetricRatio } from '../shared/comparison/index.ts';
import { formatTimes } from '../shared/comparison/format.ts';
import { METRICS, type Metric } from '../shared/metrics.ts';
import {
  chartWidth,
  drawOneX,
  drawText,
  drawWhisker,
  keepChart,
  ratioAxis,
  ratioRange,
  ratioSaid,
  SIDE_COLORS,
} from './chart-kit.ts';
import { $, el } from './dom.ts';
import { formatValue } from './values.ts';

/** Where a bar was drawn (canvas pixels), and 1x on the same scale: `data-bars` of its chart. */
interface DrawnBar {
  metric: string;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

interface Bar {
  metric: Metric;
  ratio: MetricRatio;
  point: ComparisonPoint | undefined;
}

const BAR_CHARTS = [
  { id: 'bar-chart', kind: 'performance', title: 'device performance' },
  { id: 'load-chart', kind: 'load', title: 'load put on the device (queues, %busy)' },
] as const;
const ROW_HEIGHT = 44;
const FRAME_HEIGHT = 96;

export function clearBarCharts(): void {
  for (const { id } of BAR_CHARTS) {
    const container = $(id);
    container.removeAttribute('role');
    container.removeAttribute('aria-label');
    delete container.dataset['bars'];
  }
}

/** The load (queues, %busy) apart from what the device does; a combined metric goes with the latter. */
const isLoad = (m: Metric) => METRICS[m].role === 'load';

/** One chart for the device's performance, one for its load, each only when it has a metric. */
export function barCharts(c: Comparison): void {
  const bars = c.metrics.flatMap((metric): Bar[] => {
    const ratio = c.byMetric[metric];
    if (ratio === undefined) return [];
    return [{ metric, ratio, point: c.rows.find((p) => p.metric === metric && p.req_size === undefined) }];
  });
  for (const chart of BAR_CHARTS) {
    const mine = bars.filter((b) => isLoad(b.metric) === (chart.kind === 'load'));
    if (mine.length > 0) barChart(c, mine, $(chart.id), chart.title);
  }
}

/** A bar's value as drawn beside it: the ratio, and `~` when it is not significant. */
const barValue = (m: MetricRatio) => `${formatTimes(m.ratio)}${m.significant === false ? ' ~' : ''}`;

/** Charts narrower than this name their bars only; the table beside them holds both sides' values. */
const VALUES_FROM_WIDTH = 600;

/** A metric's name and, under it on a wide chart, both sides' values: what the ratio was made of. */
function barName(bar: Bar, width: number): string {
  const { point, ratio } = bar;
  if (point?.a === undefined || point.b === undefined || width < VALUES_FROM_WIDTH) return bar.metric;
  return `${bar.metric}\nA ${formatValue(point.a)} B ${formatValue(point.b)} ${ratio.unit}`;
}

/** The chart said in words, for whoever cannot see it. */
function barsLabel(c: Comparison, bars: readonly Bar[]): string {
  const said = bars.map(
    ({ metric, ratio: m, point }) =>
      `${metric} ${ratioSaid(m)}` +
      (point?.a !== undefined && point.b !== undefined
        ? ` (A ${formatValue(point.a)}, B ${formatValue(point.b)} ${m.unit})`
        : ''),
  );
  const where = `right where A ${c.a.label} is better, left where B ${c.b.label} is`;
  return `bars from 1x (no difference), ${where}: ${said.join(', ')}`;
}

/** A scale even about 1x (as far each way), with room for the labels past the bars. */
function divergingRange(bars: readonly Bar[]): [number, number] {
  const [min, max] = ratioRange(bars.flatMap(({ ratio: m }) => [m.ratio, m.ci?.low, m.ci?.high]));
  const reach = Math.max(max, 1 / min) * 1.5;
  return [1 / reach, reach];
}

function barChart(c: Comparison, bars: readonly Bar[], container: HTMLElement, title: string): void {
  const drawn: DrawnBar[] = [];
  const paths = uPlot.paths.bars!({
    size: [0.55, 28],
    each: (_u, _series, i, left, top, width, height) =>
      void drawn.push({ metric: bars[i]!.metric, left, right: left + width, top, bottom: top + height }),
  });
  container.setAttribute('role', 'img');
  container.setAttribute('aria-label', barsLabel(c, bars));
  const height = FRAME_HEIGHT + ROW_HEIGHT * bars.length;
  const options = barOptions(c, bars, paths, title, chartWidth(container), height);
  options.hooks = {
    drawClear: [() => void (drawn.length = 0)],
    draw: [
      (u: uPlot) => {
        drawOneX(u, 'y');
        drawBarValues(u, bars);
        container.dataset['bars'] = JSON.stringify({ one: u.valToPos(1, 'y', true), bars: drawn });
      },
    ],
  };
  const data: uPlot.AlignedData = [
    bars.map((_, i) => i + 1),
    bars.map(({ ratio: m }) => (m.ratio >= 1 ? m.ratio : null)),
    bars.map(({ ratio: m }) => (m.ratio < 1 ? m.ratio : null)),
  ];
  keepChart(new uPlot(options, data, container), container, height);
  container.append(barKey(c));
}

/** What the two directions mean, in words beside the colours (not colour alone). */
function barKey(c: Comparison): HTMLElement {
  const swatch = (side: 'a' | 'b') => el('span', { className: `swatch swatch-${side}`, ariaHidden: 'true' });
  return el(
    'p',
    { className: 'chart-note' },
    swatch('b'),
    ` left of 1x: B ${c.b.label} better; `,
    swatch('a'),
    ` right of 1x: A ${c.a.label} better. Whiskers: the interval; ~ not significant.`,
  );
}

/** Each bar's interval, and its value past the bar's far end (or its whisker's). */
function drawBarValues(u: uPlot, bars: readonly Bar[]): void {
  bars.forEach(({ ratio: m }, i) => {
    const y = u.valToPos(i + 1, 'x', true);
    const right = m.ratio >= 1;
    if (m.ci) drawWhisker(u, 'y', y, m.ci, '#333');
    const end = right ? Math.max(m.ratio, m.ci?.high ?? m.ratio) : Math.min(m.ratio, m.ci?.low ?? m.ratio);
    const x = u.valToPos(end, 'y', true) + (right ? 6 : -6) * uPlot.pxRatio;
    const color = m.significant === false ? '#666' : '#111';
    drawText(u, barValue(m), x, y, color, { baseline: 'middle', side: right ? 'left' : 'right' });
  });
}

/** The name axis is as wide as its longest line needs, but never more than 45% of the chart. */
function nameAxisSize(bars: readonly Bar[], width: number): number {
  const longest = Math.max(
    ...bars.flatMap((b) =>
      barName(b, width)
        .split('\n')
        .map((line) => line.length),
    ),
  );
  return Math.min(Math.round(width * 0.45), 24 + longest * 7.2);
}

function barOptions(
  c: Comparison,
  bars: readonly Bar[],
  paths: uPlot.Series.PathBuilder,
  title: string,
  width: number,
  height: number,
): uPlot.Options {
  const positions = bars.map((_, i) => i + 1);
  const range = divergingRange(bars);
  const side = (label: string, color: string): uPlot.Series => ({
    label,
    stroke: color,
    fill: `${color}bb`,
    paths,
    points: { show: false },
    fillTo: 1,
  });
  return {
    title: `${title}: how many times better A is`,
    width,
    height,
    legend: { show: false },
    cursor: { show: false },
    scales: {
      x: { time: false, ori: 1, dir: -1, range: [0.4, bars.length + 0.6] },
      y: { distr: 3, log: 2, ori: 0, dir: 1, range: () => range },
    },
    axes: [
      {
        scale: 'x',
        side: 3,
        size: nameAxisSize(bars, width),
        grid: { show: false },
        splits: () => positions,
        values: (_u, ticks) =>
          ticks.map((t) => (bars[Math.round(t) - 1] ? barName(bars[Math.round(t) - 1]!, width) : '')),
      },
      { ...ratioAxis('y', 'A / B (log2)'), side: 2 },
    ],
    series: [
      { label: 'metric' },
      side(`A ${c.a.label} better`, SIDE_COLORS.a),
      side(`B ${c.b.label} better`, SIDE_COLORS.b),
    ],
  };
}
