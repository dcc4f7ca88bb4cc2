/**
 * One comparison on the report page: its sentence (the faster side named
 * first), its interval and what it resampled (or why there is none), how many
 * runs would tell a 5% difference apart, the warnings (those about the setups
 * linking to them), the table of every point (table-view.ts), the charts, each
 * run's samples over time (served page only) and the setups side by side.
 */
import type { Comparison } from '../shared/comparison/index.ts';
import { formatInterval, formatTimes, PAIRED_NOTE, plural } from '../shared/comparison/format.ts';
import { clearCharts, drawCharts } from './charts.ts';
import { $, el } from './dom.ts';
import { renderSetups } from './setups-view.ts';
import { renderTable, setupsLink } from './table-view.ts';
import { renderTimeSeries } from './time-series.ts';

/** How the served page asks its API; a written file has none. */
export type GetJson = <T>(path: string, signal?: AbortSignal) => Promise<T>;

/** Every part of the page that shows the comparison; the caller says the page's state. */
export function renderComparison(c: Comparison, getJson?: GetJson): void {
  clearCharts();
  // Shown before drawing: uPlot lays its legend out in the live document, and charts take their box's width.
  $('results').hidden = false;
  renderSummary(c);
  renderTable(c);
  drawCharts(c);
  renderSetups(c);
  renderTimeSeries(c, getJson);
}

function renderSummary(c: Comparison): void {
  $('sentence').textContent = c.sentence;
  $('ratio').textContent = formatTimes(c.ratio);
  $('ratio').title = 'A / B: how many times better A is over all points';
  const interval = $('interval');
  interval.textContent = intervalLine(c);
  interval.dataset['significant'] = String(c.significant);
  $('advice').textContent = c.advice ? `runs needed: ${c.advice.note}` : '';
  $('paired').textContent = c.paired ? PAIRED_NOTE : '';
  $('sides').textContent =
    `A: ${c.a.selector} (${plural(c.a.runs, 'run')}) - B: ${c.b.selector} (${plural(c.b.runs, 'run')})`;
  $('warnings-title').hidden = c.warnings.length === 0;
  const aboutSetups = new Set(c.setups?.warnings ?? []);
  $('warnings').replaceChildren(
    ...c.warnings.map((w, i) =>
      el(
        'li',
        {},
        el('span', { className: 'warning-text', textContent: w }),
        ...(aboutSetups.has(i) ? [' ', setupsLink()] : []),
      ),
    ),
  );
}

function intervalLine(c: Comparison): string {
  if (!c.ci) return c.ciNote ?? '';
  const verdict = c.significant === false ? '~ not significant: it holds 1x' : 'significant';
  return (
    `${c.ci.label}: A/B ${formatInterval(c.ci)}, ${verdict} ` +
    `(bootstrap-t, df ${c.ci.df}, ${c.ci.iterations} resamples)`
  );
}
