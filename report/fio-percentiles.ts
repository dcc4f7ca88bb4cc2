/**
 * fio's completion-latency percentiles, both sides side by side: a row per
 * point (and direction, where a point has reads and writes), p50 to p99.99
 * each as A beside B, the better side in bold where the difference is
 * significant. A table rather than a chart: five percentiles at every point
 * are figures to read across, the tail beside the median. Only a comparison
 * of percentile metrics has them (metric=latency, or one named); any other
 * says how to ask for them.
 */
import type { Comparison, ComparisonPoint } from '../shared/comparison/index.ts';
import { compareFioPoints, fioPointText } from '../shared/fio-point.ts';
import { FIO_PERCENTILE_MEASURES, fioPercentileName, METRICS } from '../shared/metrics.ts';
import { $, el } from './dom.ts';
import { formatValue } from './values.ts';

/** The percentiles in order: each metric's ending and its header. */
const PERCENTILES = FIO_PERCENTILE_MEASURES.map((m) => [m, fioPercentileName(m)] as const);
const PERCENTILE_METRIC = new RegExp(`^fio_([a-z]+)_(${FIO_PERCENTILE_MEASURES.join('|')})$`);
/** Rows shown at most; the comparison table holds every point. */
const MOST_ROWS = 200;

/** One row: a point and direction, and its percentiles' points by ending (`p99_9`). */
interface PercentileRow {
  point: ComparisonPoint;
  direction: string;
  at: Map<string, ComparisonPoint>;
}

export function clearPercentiles(): void {
  $('fio-pct-table').replaceChildren();
  $('fio-pct-box').hidden = true;
  $('fio-pct-note').textContent = '';
}

/** The table when the comparison holds percentiles, else a line saying how to see them. */
export function percentileView(c: Comparison, points: readonly ComparisonPoint[]): void {
  const rows = percentileRows(points);
  const shown = PERCENTILES.filter(([p]) => rows.some((r) => r.at.has(p)));
  $('fio-pct-box').hidden = rows.length === 0;
  $('fio-pct-note').textContent = rows.length === 0 ? askFor(c) : percentileNote(rows);
  if (rows.length === 0) return;
  const unit = METRICS[rows[0]!.point.metric].unit;
  const caption = `completion latency, ${unit}: A ${c.a.label}, B ${c.b.label}`;
  $('fio-pct-table').replaceChildren(
    el('caption', { textContent: caption }),
    percentileHead(shown),
    percentileBody(rows.slice(0, MOST_ROWS), shown),
  );
}

function percentileRows(points: readonly ComparisonPoint[]): PercentileRow[] {
  const rows = new Map<string, PercentileRow>();
  for (const p of points) {
    const m = PERCENTILE_METRIC.exec(p.metric);
    if (m === null || p.point === undefined) continue;
    const key = `${m[1]} ${p.point}`;
    if (!rows.has(key)) rows.set(key, { point: p, direction: m[1]!, at: new Map() });
    rows.get(key)!.at.set(m[2]!, p);
  }
  return [...rows.values()].sort(
    (x, y) => compareFioPoints(x.point, y.point) || x.direction.localeCompare(y.direction),
  );
}

function askFor(c: Comparison): string {
  if (c.metric === 'latency') return 'Latency percentiles: these runs carry none (fio prints them unless told not to).';
  return (
    `Latency percentiles: none in this comparison (metric ${c.metric}). ` +
    'Choose the latency metric to see p50 to p99.99 of both sides side by side.'
  );
}

function percentileNote(rows: readonly PercentileRow[]): string {
  const cut =
    rows.length > MOST_ROWS ? ` The first ${MOST_ROWS} of ${rows.length} rows; the table below holds all.` : '';
  return `Each side's median over its runs; bold: the better side, where the difference is significant.${cut}`;
}

/** Two header rows: each percentile over its A and B columns. */
function percentileHead(shown: readonly (typeof PERCENTILES)[number][]): HTMLTableSectionElement {
  const top = el('tr', {}, el('th', { scope: 'col', rowSpan: 2, textContent: 'point' }));
  const sides = el('tr');
  for (const [, header] of shown) {
    top.append(el('th', { scope: 'colgroup', colSpan: 2, textContent: header }));
    sides.append(el('th', { scope: 'col', textContent: 'A' }), el('th', { scope: 'col', textContent: 'B' }));
  }
  return el('thead', {}, top, sides);
}

function percentileBody(
  rows: readonly PercentileRow[],
  shown: readonly (typeof PERCENTILES)[number][],
): HTMLTableSectionElement {
  // A point with reads and writes (randrw) has a row of each: their headers say which.
  const twoWays = new Set(rows.map((r) => r.point.point)).size < rows.length;
  return el(
    'tbody',
    {},
    ...rows.map((r) => {
      const name = `${fioPointText(r.point)}${twoWays ? ` ${r.direction}` : ''}`;
      const tr = el('tr', {}, el('th', { scope: 'row', textContent: name }));
      tr.dataset['point'] = r.point.point!;
      tr.dataset['direction'] = r.direction;
      for (const [p] of shown) tr.append(...sideCells(r.at.get(p)));
      return tr;
    }),
  );
}

/** A percentile's A and B cells, the better one bold where the difference is significant. */
function sideCells(p: ComparisonPoint | undefined): HTMLTableCellElement[] {
  return (['a', 'b'] as const).map((side) => {
    const v = p?.[side];
    const cell = el('td', { className: 'num', textContent: v === undefined ? '' : formatValue(v) });
    const better = p?.ratio !== undefined && p.significant === true && (side === 'a' ? p.ratio > 1 : p.ratio < 1);
    if (better) cell.classList.add('better');
    return cell;
  });
}
