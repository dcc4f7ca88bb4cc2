/**
 * The report page's comparison charts: points with a request size (diskperf)
 * get the ratio and absolute charts of size-charts.ts, points without one
 * (iostat) the diverging bars of bar-charts.ts.
 */
import type { Comparison } from '../shared/comparison/index.ts';
import { barCharts, clearBarCharts } from './bar-charts.ts';
import { dropCharts } from './chart-kit.ts';
import { $ } from './dom.ts';
import { absoluteChart, ratioChart, sizedPoints } from './size-charts.ts';

const CHART_IDS = ['ratio-chart', 'abs-chart', 'bar-chart', 'load-chart'];

export function clearCharts(): void {
  dropCharts();
  for (const id of CHART_IDS) $(id).replaceChildren();
  for (const id of ['ratio-note', 'abs-note']) $(id).hidden = true;
  clearBarCharts();
}

/** Per request size when the points have one (diskperf), else diverging bars per metric. */
export function drawCharts(c: Comparison): void {
  const sized = sizedPoints(c);
  if (sized.length > 0) {
    ratioChart(c, sized);
    absoluteChart(c, sized);
  } else barCharts(c);
}
