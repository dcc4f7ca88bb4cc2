/**
 * The report page: pick two selectors and a metric, see how many times better A
 * is than B per request size (log2 axis) with the summary ratio and its interval,
 * both sides' absolute curves, iostat per-metric bars, and the uploads list with
 * failures and their reasons. Served by the local lab at GET / (it asks the API
 * on the same origin) and written whole by `benchdrop compare --html`, with the
 * comparison embedded. Charts are uPlot's; nothing is fetched from elsewhere.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './page.css';
import type { UploadListing } from '../shared/api.ts';
import type { Comparison, ComparisonPoint } from '../shared/compare.ts';

interface Embedded {
  comparison?: Comparison;
  uploads?: UploadListing[];
}

declare global {
  interface Window {
    __BENCHDROP__?: Embedded;
  }
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const fmt = (r: number) => (r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(2));
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#393b79', '#637939'];
const charts: uPlot[] = [];

function clearCharts(): void {
  for (const chart of charts.splice(0)) chart.destroy();
  for (const id of ['ratio-chart', 'abs-chart', 'bar-chart']) $(id).replaceChildren();
}

function sizeLabel(bytes: number): string {
  return bytes >= 1048576 ? `${bytes / 1048576}M` : bytes >= 1024 ? `${bytes / 1024}K` : `${bytes}`;
}

function chartWidth(): number {
  return Math.max(360, Math.min(960, document.body.clientWidth - 48));
}

/** Ratio per request size, one line per metric, with the summary ratio and its interval. */
function ratioChart(c: Comparison, sized: ComparisonPoint[]): void {
  const sizes = [...new Set(sized.map((p) => p.req_size!))].sort((a, b) => a - b);
  const metrics = c.metrics.filter((m) => sized.some((p) => p.metric === m && p.ratio !== undefined));
  const ratioAt = (metric: string, size: number) => sized.find((p) => p.metric === metric && p.req_size === size)?.ratio ?? null;
  const flat = (v: number | null) => sizes.map(() => v);
  const data: uPlot.AlignedData = [sizes, ...metrics.map((m) => sizes.map((s) => ratioAt(m, s))), flat(c.ratio), ...(c.ci ? [flat(c.ci.low), flat(c.ci.high)] : [])];
  const series: uPlot.Series[] = [
    { label: 'request size' },
    ...metrics.map((m, i) => ({ label: m, stroke: COLORS[i % COLORS.length]!, width: 2, points: { size: 6 } })),
    { label: `summary ${c.ratio === null ? '-' : fmt(c.ratio)}x`, stroke: '#000', width: 2, dash: [8, 4] },
    ...(c.ci ? [{ label: '95% low', stroke: '#999', dash: [2, 4] }, { label: '95% high', stroke: '#999', dash: [2, 4] }] : []),
  ];
  charts.push(
    new uPlot(
      {
        title: `how many times better A is, by request size (${c.metric})`,
        width: chartWidth(),
        height: 320,
        scales: { x: { distr: 3, log: 2 }, y: { distr: 3, log: 2 } },
        axes: [{ values: (_u, ticks) => ticks.map(sizeLabel), label: 'request size (bytes, log2)' }, { label: 'A / B (log2)' }],
        series,
      },
      data,
      $('ratio-chart'),
    ),
  );
}

/** Both sides' absolute values per request size: A solid, B dashed. */
function absoluteChart(c: Comparison, sized: ComparisonPoint[]): void {
  const sizes = [...new Set(sized.map((p) => p.req_size!))].sort((a, b) => a - b);
  const metrics = c.metrics.filter((m) => sized.some((p) => p.metric === m));
  const valueAt = (metric: string, size: number, side: 'a' | 'b') => sized.find((p) => p.metric === metric && p.req_size === size)?.[side] ?? null;
  const data: uPlot.AlignedData = [sizes, ...metrics.flatMap((m) => [sizes.map((s) => valueAt(m, s, 'a')), sizes.map((s) => valueAt(m, s, 'b'))])];
  const series: uPlot.Series[] = [
    { label: 'request size' },
    ...metrics.flatMap((m, i) => [
      { label: `A ${m}`, stroke: COLORS[i % COLORS.length]!, width: 2 },
      { label: `B ${m}`, stroke: COLORS[i % COLORS.length]!, width: 1.5, dash: [6, 4] },
    ]),
  ];
  charts.push(
    new uPlot(
      {
        title: `${c.a.label} (solid) and ${c.b.label} (dashed), MB/s`,
        width: chartWidth(),
        height: 320,
        scales: { x: { distr: 3, log: 2 } },
        axes: [{ values: (_u, ticks) => ticks.map(sizeLabel) }, { label: 'MB/s' }],
        series,
      },
      data,
      $('abs-chart'),
    ),
  );
}

/** iostat (and any point without a request size): one bar per metric, its ratio. */
function barChart(c: Comparison): void {
  const metrics = Object.keys(c.byMetric) as (keyof Comparison['byMetric'])[];
  if (metrics.length === 0) return;
  const xs = metrics.map((_, i) => i + 1);
  const bars = uPlot.paths.bars!({ size: [0.6, 80] });
  charts.push(
    new uPlot(
      {
        title: `how many times better A is, per metric (${c.a.devices.join(', ')} vs ${c.b.devices.join(', ')})`,
        width: chartWidth(),
        height: 280,
        scales: { x: { time: false, range: [0.4, metrics.length + 0.6] }, y: { distr: 3, log: 2 } },
        axes: [{ splits: () => xs, values: (_u, ticks) => ticks.map((t) => metrics[Math.round(t) - 1] ?? '') }, { label: 'A / B (log2)' }],
        series: [{ label: 'metric' }, { label: 'ratio', stroke: COLORS[0]!, fill: `${COLORS[0]!}88`, paths: bars, points: { show: false } }],
      },
      [xs, metrics.map((m) => c.byMetric[m]!.ratio)],
      $('bar-chart'),
    ),
  );
}

function renderComparison(c: Comparison): void {
  clearCharts();
  $('sentence').textContent = c.sentence;
  $('ratio').textContent = c.ratio === null ? '-' : `${fmt(c.ratio)}x`;
  $('interval').textContent = c.ci ? `95% interval ${fmt(c.ci.low)}x-${fmt(c.ci.high)}x (${c.significant ? 'significant' : '~ not significant'})` : (c.ciNote ?? '');
  $('sides').textContent = `A: ${c.a.selector} (${c.a.runs} run${c.a.runs === 1 ? '' : 's'}) - B: ${c.b.selector} (${c.b.runs} run${c.b.runs === 1 ? '' : 's'})`;
  const warnings = $('warnings');
  warnings.replaceChildren(...c.warnings.map((w) => Object.assign(document.createElement('li'), { textContent: w })));
  const excluded = $('excluded');
  excluded.replaceChildren(
    ...c.excluded.map((p) => Object.assign(document.createElement('li'), { textContent: `${p.metric}${p.req_size === undefined ? '' : ` at ${p.req_size}`}: ${p.excluded}` })),
  );
  const sized = c.rows.filter((p) => p.req_size !== undefined);
  if (sized.length > 0) {
    ratioChart(c, sized);
    absoluteChart(c, sized);
  } else barChart(c);
  document.body.dataset['state'] = 'compared';
}

function renderUploads(uploads: readonly UploadListing[]): void {
  const rows = uploads.map((u) => {
    const tr = document.createElement('tr');
    tr.className = u.status;
    const reason = u.status === 'failed' ? `${u.message ?? ''}${u.line ? ` (line ${u.line})` : ''}` : u.status === 'ready' ? `${u.runCount} run${u.runCount === 1 ? '' : 's'}` : (u.message ?? '');
    for (const text of [u.key, u.status, u.device ?? '', reason, u.updatedAt]) tr.append(Object.assign(document.createElement('td'), { textContent: text }));
    return tr;
  });
  $('uploads').replaceChildren(...rows);
}

function showError(message: string): void {
  $('error').textContent = message;
  document.body.dataset['state'] = 'error';
}

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path);
  const body = (await response.json()) as T & { error?: { message: string } };
  if (!response.ok) throw new Error(body.error?.message ?? `${response.status} ${response.statusText}`);
  return body;
}

async function compareFromForm(): Promise<void> {
  const a = $<HTMLInputElement>('a').value.trim();
  const b = $<HTMLInputElement>('b').value.trim();
  const metric = $<HTMLSelectElement>('metric').value;
  $('error').textContent = '';
  const query = new URLSearchParams({ a, b, metric });
  history.replaceState(null, '', `?${query}`);
  try {
    renderComparison(await getJson<Comparison>(`compare?${query}`));
  } catch (error) {
    showError((error as Error).message);
  }
}

function start(): void {
  const embedded = window.__BENCHDROP__;
  if (embedded) {
    // A report written by `benchdrop compare --html`: everything is in the page.
    $('controls').hidden = true;
    if (embedded.comparison) renderComparison(embedded.comparison);
    if (embedded.uploads) renderUploads(embedded.uploads);
    else $('uploads-section').hidden = true;
    return;
  }
  const params = new URLSearchParams(location.search);
  $<HTMLInputElement>('a').value = params.get('a') ?? 'scsi2sd_redux';
  $<HTMLInputElement>('b').value = params.get('b') ?? 'scsi2sd_10M_Sync';
  $<HTMLSelectElement>('metric').value = params.get('metric') ?? 'all';
  $('controls').addEventListener('submit', (event) => {
    event.preventDefault();
    void compareFromForm();
  });
  void compareFromForm();
  getJson<{ uploads: UploadListing[] }>('uploads').then(
    (r) => renderUploads(r.uploads),
    (error: Error) => showError(`uploads: ${error.message}`),
  );
}

start();
