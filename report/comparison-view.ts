/**
 * One comparison on the report page: its sentence (the faster side named
 * first), its interval and what it resampled (or why there is none), how many
 * runs would tell a 5% difference apart, the warnings, a table per metric and
 * one per point (`~` marking what is not significant), and the charts.
 */
import type { Comparison, ComparisonPoint } from '../shared/comparison/index.ts';
import {
  formatInterval,
  formatP,
  formatTimes,
  insignificantMark,
  PAIRED_NOTE,
  plural,
  pointName,
  RESOLUTION_STEPS,
} from '../shared/comparison/format.ts';
import { clearCharts, drawCharts } from './charts.ts';
import { $, el, row } from './dom.ts';

/** Every part of the page that shows the comparison; the caller says the page's state. */
export function renderComparison(c: Comparison): void {
  clearCharts();
  // Shown before drawing: uPlot lays its legend out in the live document.
  $('results').hidden = false;
  renderSummary(c);
  renderMetrics(c);
  renderPoints(c);
  drawCharts(c);
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
  $('warnings').replaceChildren(...c.warnings.map((w) => el('li', { textContent: w })));
  $('excluded').replaceChildren(...c.excluded.map((p) => el('li', { textContent: `${pointName(p)}: ${p.excluded}` })));
}

function intervalLine(c: Comparison): string {
  if (!c.ci) return c.ciNote ?? '';
  const verdict = c.significant === false ? '~ not significant: it holds 1x' : 'significant';
  return (
    `${c.ci.label}: A/B ${formatInterval(c.ci)}, ${verdict} ` +
    `(bootstrap-t, df ${c.ci.df}, ${c.ci.iterations} resamples)`
  );
}

function renderMetrics(c: Comparison): void {
  const rows = c.metrics.flatMap((metric) => {
    const m = c.byMetric[metric];
    if (m === undefined) return [];
    const cells = [
      metric,
      formatTimes(m.ratio),
      formatInterval(m.ci),
      formatP(m.p),
      insignificantMark(m.significant),
      m.sentence,
    ];
    const tr = row('td', cells, m.significant === false ? 'insignificant' : '');
    tr.dataset['metric'] = metric;
    return [tr];
  });
  const withInterval = c.metrics.some((m) => c.byMetric[m] !== undefined && c.byMetric[m].ci !== null);
  $('metrics').replaceChildren(...rows);
  $('metrics-table').classList.toggle('no-interval', !withInterval);
  $('metrics-section').hidden = rows.length === 0;
}

function pointNotes(p: ComparisonPoint): string {
  const near = p.nearResolution
    ? [`a side is within ${RESOLUTION_STEPS} printing steps of 0: the ratio is mostly rounding`]
    : [];
  return [...near, ...(p.notes ?? [])].join('; ');
}

function pointRow(p: ComparisonPoint): HTMLTableRowElement {
  const size = p.req_size === undefined ? '' : String(p.req_size);
  const cells = [
    p.metric,
    size,
    String(p.a ?? ''),
    String(p.b ?? ''),
    formatTimes(p.ratio),
    formatInterval(p.ci),
    formatP(p.p),
    insignificantMark(p.significant),
    pointNotes(p),
  ];
  const classes = [p.significant === false ? 'insignificant' : '', p.nearResolution ? 'near-resolution' : ''];
  return row('td', cells, classes.filter(Boolean).join(' '));
}

function renderPoints(c: Comparison): void {
  const paired = c.rows.filter((p) => p.ratio !== undefined);
  const rows = paired.map(pointRow);
  $('points').replaceChildren(...rows);
  $('points-table').classList.toggle('no-interval', !paired.some((p) => p.ci !== undefined));
  const insignificant = paired.filter((p) => p.significant === false).length;
  const withInterval = paired.filter((p) => p.ci !== undefined).length;
  $('points-title').textContent =
    `points (${paired.length}${withInterval > 0 ? `; ${insignificant} not significant, marked ~` : ''})`;
  $('points-section').hidden = rows.length === 0;
}
