/**
 * The report page's comparison charts: fio points (rw, block size, queue
 * depth, jobs) get the sweep charts of fio-charts.ts, points with a request
 * size (diskperf) the ratio and absolute charts of size-charts.ts, points with
 * neither (iostat) the diverging bars of bar-charts.ts.
 */
import type { Comparison } from '../shared/comparison/index.ts';
import { barCharts, clearBarCharts } from './bar-charts.ts';
import { dropCharts } from './chart-kit.ts';
import { $ } from './dom.ts';
import { clearFioCharts, fioCharts, fioPoints } from './fio-charts.ts';
import { absoluteChart, ratioChart, sizedPoints } from './size-charts.ts';

const CHART_IDS = ['ratio-chart', 'abs-chart', 'bar-chart', 'load-chart'];

export function clearCharts(): void {
  dropCharts();
  for (const id of CHART_IDS) $(id).replaceChildren();
  for (const id of ['ratio-note', 'abs-note']) $(id).hidden = true;
  clearBarCharts();
  clearFioCharts();
}

/** By fio point, else per request size (diskperf), else diverging bars per metric. */
export function drawCharts(c: Comparison): void {
  const fio = fioPoints(c);
  const sized = sizedPoints(c);
  if (fio.length > 0) fioCharts(c, fio);
  else if (sized.length > 0) {
    ratioChart(c, sized);
    absoluteChart(c, sized);
  } else barCharts(c);
}
