/**
 * What the report page's charts (uPlot) share: the palette, the log2 ratio
 * axis with 1x marked, intervals drawn as whiskers or shaded bands, text drawn
 * on the canvas, and the charts kept so that they follow the page's width.
 */
import uPlot from 'uplot';
import type { Interval } from '../shared/comparison/index.ts';
import { formatInterval, formatTimes } from '../shared/comparison/format.ts';

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
/** The two sides wherever a chart tells them apart: A (and bars where A is better), B. */
export const SIDE_COLORS = { a: '#2c7fb8', b: '#e6550d' } as const;
const charts: { chart: uPlot; container: HTMLElement; height: number }[] = [];

export const colorOf = (i: number) => COLORS[i % COLORS.length]!;

/** A colour with an alpha, for bands: `#1f77b4` and 0.2 -> `#1f77b433`. */
export const withAlpha = (color: string, alpha: number) =>
  `${color}${Math.round(alpha * 255)
    .toString(16)
    .padStart(2, '0')}`;

/** Keeps a chart so that it follows the page's width and goes with the next comparison. */
export function keepChart(chart: uPlot, container: HTMLElement, height: number): uPlot {
  charts.push({ chart, container, height });
  return chart;
}

/** Destroys every kept chart. */
export function dropCharts(): void {
  for (const { chart } of charts.splice(0)) chart.destroy();
}

/** Destroys one kept chart (a chart redrawn for another choice). */
export function dropChart(chart: uPlot): void {
  const at = charts.findIndex((c) => c.chart === chart);
  if (at >= 0) charts.splice(at, 1);
  chart.destroy();
}

/** The width a chart gets: its container's, so that nothing overflows a phone's screen. */
export function chartWidth(container: HTMLElement): number {
  return Math.max(240, Math.min(960, Math.floor(container.clientWidth || document.body.clientWidth)));
}

let resizing: number | undefined;
// One redraw per burst of resize events: each chart takes its container's new width.
window.addEventListener('resize', () => {
  if (resizing !== undefined) cancelAnimationFrame(resizing);
  resizing = requestAnimationFrame(() => {
    for (const { chart, container, height } of charts) chart.setSize({ width: chartWidth(container), height });
  });
});

/** A log2 range that holds every value given and 1x, in whole powers of 2. */
export function ratioRange(values: readonly (number | null | undefined)[]): [number, number] {
  const finite = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0);
  const lo = Math.min(1, ...finite);
  const hi = Math.max(1, ...finite);
  const [min, max] = uPlot.rangeLog(lo, hi, 2, true) as [number, number];
  return [min, max === min ? max * 2 : max];
}

/** Ticks at whole powers of 2 within a scale (1x among them). */
export function powersOf2(u: uPlot, scale: string): number[] {
  const { min, max } = u.scales[scale]!;
  if (min === undefined || max === undefined || !(min > 0)) return [1];
  const out: number[] = [];
  for (let e = Math.ceil(Math.log2(min) - 1e-9); e <= Math.floor(Math.log2(max) + 1e-9); e++) out.push(2 ** e);
  // A narrow scale holds one power or none: its ends say where it is.
  return out.length >= 2 ? out : [min, ...out, max];
}

/** An axis of ratios: log2, ticks at powers of 2 printed as times, 1x meaning no difference. */
export function ratioAxis(scale: string, label: string): uPlot.Axis {
  return {
    scale,
    label,
    splits: (u) => powersOf2(u, scale),
    values: (_u, ticks) => ticks.map((t) => (t === null || t === undefined ? '' : formatTimes(t))),
  };
}

/** The no-difference line at 1x of a ratio scale, dotted, across the plot. */
export function drawOneX(u: uPlot, scale: string): void {
  const at = u.valToPos(1, scale, true);
  const { left, top, width, height } = u.bbox;
  const horizontal = u.scales[scale]!.ori === 0;
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = '#444';
  ctx.lineWidth = 1.5 * uPlot.pxRatio;
  ctx.setLineDash([3 * uPlot.pxRatio, 3 * uPlot.pxRatio]);
  ctx.beginPath();
  if (horizontal) {
    ctx.moveTo(at, top);
    ctx.lineTo(at, top + height);
  } else {
    ctx.moveTo(left, at);
    ctx.lineTo(left + width, at);
  }
  ctx.stroke();
  ctx.restore();
}

/** An interval as a line with caps, from low to high along `scale`, across at `across` (canvas pixels). */
export function drawWhisker(u: uPlot, scale: string, across: number, ci: Interval, color: string): void {
  const ctx = u.ctx;
  const p0 = u.valToPos(ci.low, scale, true);
  const p1 = u.valToPos(ci.high, scale, true);
  const cap = 4 * uPlot.pxRatio;
  const horizontal = u.scales[scale]!.ori === 0;
  const line = (x0: number, y0: number, x1: number, y1: number) => {
    ctx.moveTo(horizontal ? x0 : y0, horizontal ? y0 : x0);
    ctx.lineTo(horizontal ? x1 : y1, horizontal ? y1 : x1);
  };
  ctx.save();
  ctx.strokeStyle = color;
  ctx.lineWidth = 1.5 * uPlot.pxRatio;
  ctx.beginPath();
  line(p0, across, p1, across);
  line(p0, across - cap, p0, across + cap);
  line(p1, across - cap, p1, across + cap);
  ctx.stroke();
  ctx.restore();
}

/**
 * A shaded band between two curves (canvas pixels from the x and y scales),
 * broken where either end is missing: an interval or a spread along x.
 */
export function fillBand(
  u: uPlot,
  xs: readonly number[],
  low: readonly (number | null)[],
  high: readonly (number | null)[],
  color: string,
  yScale = 'y',
): void {
  const ctx = u.ctx;
  const { left, top, width, height } = u.bbox;
  ctx.save();
  ctx.beginPath();
  ctx.rect(left, top, width, height);
  ctx.clip();
  ctx.fillStyle = color;
  let run: number[] = [];
  const flush = () => {
    if (run.length > 0) fillRun(u, run, xs, low, high, yScale);
    run = [];
  };
  xs.forEach((_, i) => {
    if (typeof low[i] === 'number' && typeof high[i] === 'number') run.push(i);
    else flush();
  });
  flush();
  ctx.restore();
}

/** One unbroken stretch of a band: along the highs, back along the lows (one point: a short bar). */
function fillRun(
  u: uPlot,
  run: readonly number[],
  xs: readonly number[],
  low: readonly (number | null)[],
  high: readonly (number | null)[],
  yScale: string,
): void {
  const ctx = u.ctx;
  const x = (i: number) => u.valToPos(xs[i]!, 'x', true);
  const y = (v: number) => u.valToPos(v, yScale, true);
  const half = run.length === 1 ? 4 * uPlot.pxRatio : 0;
  ctx.beginPath();
  run.forEach((i, k) => (k === 0 ? ctx.moveTo(x(i) - half, y(high[i]!)) : ctx.lineTo(x(i), y(high[i]!))));
  if (half) ctx.lineTo(x(run[0]!) + half, y(high[run[0]!]!));
  for (const i of [...run].reverse()) ctx.lineTo(x(i) + half, y(low[i]!));
  if (half) ctx.lineTo(x(run[0]!) - half, y(low[run[0]!]!));
  ctx.closePath();
  ctx.fill();
}

export function drawText(
  u: uPlot,
  text: string,
  x: number,
  y: number,
  color: string,
  align: { baseline: CanvasTextBaseline; side?: CanvasTextAlign },
): void {
  const ctx = u.ctx;
  ctx.save();
  ctx.fillStyle = color;
  ctx.font = `${12 * uPlot.pxRatio}px system-ui, sans-serif`;
  ctx.textAlign = align.side ?? 'center';
  ctx.textBaseline = align.baseline;
  ctx.fillText(text, x, y);
  ctx.restore();
}

/** Request sizes as people say them: 512, 4K, 1M. */
export function sizeLabel(bytes: number): string {
  return bytes >= 1048576 ? `${bytes / 1048576}M` : bytes >= 1024 ? `${bytes / 1024}K` : `${bytes}`;
}

/** Every chart's legend: the series' names and colours, values in their labels; never uPlot's `--`. */
export const STILL_LEGEND: uPlot.Legend = { live: false };

/** A ratio as the charts' legends and labels say it: `1.67x [1.50x-1.85x]`, and `~` when not significant. */
export function ratioSaid(m: { ratio: number; ci: Interval | null; significant: boolean | null }): string {
  return `${formatTimes(m.ratio)}${m.ci ? ` ${formatInterval(m.ci)}` : ''}${m.significant === false ? ' ~' : ''}`;
}
