/**
 * The report page: pick two selectors and a metric, see how many times better A
 * is than B: the comparison's sentence (the faster side named first), its
 * interval and what it resampled (or why there is none), how many runs would
 * tell a 5% difference apart, and the warnings; per request size a log2 chart of
 * the ratios with each point's interval and `~` where it is not significant, and
 * both sides' absolute curves; for iostat one bar per metric drawn from 1x on a
 * log axis (a 0.2x bar goes down), with its value and interval; a table per
 * metric and one per point, `~` marking what is not significant.
 *
 * Served by the local lab at GET / (it asks the API on the same origin), it
 * starts from what the lab holds: GET /devices first, the selectors from the
 * URL's query or else two of the lab's own labels, an empty state saying how to
 * upload when there are none; a status line and aria-busy while a request is
 * out, the API's message when one fails; the labels offered in the selector
 * fields (the largest page, and a note when the lab holds more) and GET
 * /uploads' default answer, any status shown as it comes. Written whole by
 * `benchdrop compare --html` with the comparison embedded, it shows that
 * comparison alone and fetches nothing. Charts are uPlot's; nothing is fetched
 * from elsewhere.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './page.css';
import type { DeviceEntry, DevicesPage, UploadListing } from '../shared/api.ts';
import type { Comparison, ComparisonPoint, Interval } from '../shared/compare.ts';
import { formatRatio, RESOLUTION_STEPS } from '../shared/comparison/format.ts';
import { MAX_PAGE } from '../shared/store/pages.ts';

interface Embedded {
  comparison?: Comparison;
}

/** An upload as listed: any status string (new ones render as they come), and the version that replaced it if one did. */
type UploadRow = Omit<UploadListing, 'status'> & { status: string; replacedBy?: string };

declare global {
  interface Window {
    __BENCHDROP__?: Embedded;
  }
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const fmt = formatRatio;
const times = (r: number | null | undefined) => `${fmt(r)}x`;
const intervalText = (ci: Interval | null | undefined) => (ci ? `[${times(ci.low)}-${times(ci.high)}]` : '');
const pText = (p: number | undefined) => (p === undefined ? '' : p < 0.001 ? '<0.001' : String(p));
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#393b79', '#637939'];
/** Bars: A better (above 1x), B better (below). */
const BETTER = { a: '#2c7fb8', b: '#e6550d' };
const charts: uPlot[] = [];

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function row(cell: 'td' | 'th', texts: readonly string[], className?: string): HTMLTableRowElement {
  const tr = el('tr', className ? { className } : {});
  tr.append(...texts.map((text) => el(cell, { textContent: text })));
  return tr;
}

function clearCharts(): void {
  for (const chart of charts.splice(0)) chart.destroy();
  for (const id of ['ratio-chart', 'abs-chart', 'bar-chart']) $(id).replaceChildren();
  const bars = $('bar-chart');
  bars.removeAttribute('role');
  bars.removeAttribute('aria-label');
  delete bars.dataset['bars'];
}

function sizeLabel(bytes: number): string {
  return bytes >= 1048576 ? `${bytes / 1048576}M` : bytes >= 1024 ? `${bytes / 1024}K` : `${bytes}`;
}

function chartWidth(): number {
  return Math.max(360, Math.min(960, document.body.clientWidth - 48));
}

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
  const sizes = [...new Set(sized.map((p) => p.req_size!))].sort((a, b) => a - b);
  const metrics = c.metrics.filter((m) => sized.some((p) => p.metric === m && p.ratio !== undefined));
  const pointAt = (metric: string, size: number) => sized.find((p) => p.metric === metric && p.req_size === size && p.ratio !== undefined);
  const flat = (v: number | null) => sizes.map(() => v);
  const data: uPlot.AlignedData = [sizes, ...metrics.map((m) => sizes.map((s) => pointAt(m, s)?.ratio ?? null)), flat(c.ratio), ...(c.ci ? [flat(c.ci.low), flat(c.ci.high)] : [])];
  const level = c.ci ? `${Math.round(c.ci.level * 100)}%` : '';
  const series: uPlot.Series[] = [
    { label: 'request size' },
    ...metrics.map((m, i) => ({ label: m, stroke: COLORS[i % COLORS.length]!, width: 2, points: { size: 6 } })),
    { label: `summary ${times(c.ratio)}`, stroke: '#000', width: 2, dash: [8, 4] },
    ...(c.ci ? [{ label: `${level} low`, stroke: '#999', dash: [2, 4] }, { label: `${level} high`, stroke: '#999', dash: [2, 4] }] : []),
  ];
  const extent = [...sized.flatMap((p) => [p.ratio, p.ci?.low, p.ci?.high]), c.ratio, c.ci?.low, c.ci?.high];
  const draw = (u: uPlot) => {
    drawOneX(u);
    metrics.forEach((m, i) => {
      const color = COLORS[i % COLORS.length]!;
      for (const size of sizes) {
        const p = pointAt(m, size);
        if (p === undefined) continue;
        const x = u.valToPos(size, 'x', true);
        if (p.ci) drawWhisker(u, x, p.ci, `${color}99`);
        if (p.significant === false) drawText(u, '~', x, u.valToPos(p.ci?.high ?? p.ratio!, 'y', true) - 4 * uPlot.pxRatio, color, 'bottom');
      }
    });
  };
  charts.push(
    new uPlot(
      {
        title: `how many times better A is, by request size (${c.metric}${c.ci ? `; bars: each point's ${level} interval, ~ not significant` : ''})`,
        width: chartWidth(),
        height: 320,
        scales: { x: { distr: 3, log: 2 }, y: { distr: 3, log: 2, range: () => ratioRange(extent) } },
        axes: [{ values: (_u, ticks) => ticks.map(sizeLabel), label: 'request size (bytes, log2)' }, { label: 'A / B (log2; 1x: no difference)', splits: powersOf2, values: (_u, ticks) => ticks.map((t) => (t === null || t === undefined ? '' : times(t))) }],
        series,
        hooks: { draw: [draw] },
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

/**
 * iostat (and any point without a request size): one bar per metric, drawn
 * from 1x on a log2 axis, up when A is better and down when B is, with its
 * value, its interval and `~` when it is not significant.
 */
function barChart(c: Comparison): void {
  const metrics = c.metrics.filter((m) => c.byMetric[m] !== undefined);
  if (metrics.length === 0) return;
  const entries = metrics.map((m) => c.byMetric[m]!);
  const xs = metrics.map((_, i) => i + 1);
  // Where each bar was drawn (canvas pixels), beside where 1x is: written on the chart's element for tests and tools.
  const drawn: { metric: string; top: number; bottom: number }[] = [];
  const bars = uPlot.paths.bars!({ size: [0.6, 80], each: (_u, _series, i, _left, top, _width, height) => void drawn.push({ metric: metrics[i]!, top, bottom: top + height }) });
  const container = $('bar-chart');
  container.setAttribute('role', 'img');
  container.setAttribute('aria-label', `bars from 1x (no difference), up where ${c.a.label} is better, down where ${c.b.label} is: ${entries.map((m, i) => `${metrics[i]} ${times(m.ratio)}${m.ci ? ` ${intervalText(m.ci)}` : ''}${m.significant === false ? ' ~' : ''}`).join(', ')}`);
  const extent = entries.flatMap((m) => [m.ratio, m.ci?.low, m.ci?.high]);
  // Room for the value labels past the longest bar: a quarter of a power of 2 more each way.
  const range = (): [number, number] => {
    const [min, max] = ratioRange(extent);
    return [min / 1.4, max * 1.4];
  };
  const draw = (u: uPlot) => {
    drawOneX(u);
    container.dataset['bars'] = JSON.stringify({ one: u.valToPos(1, 'y', true), bars: drawn });
    entries.forEach((m, i) => {
      const x = u.valToPos(i + 1, 'x', true);
      const up = m.ratio >= 1;
      if (m.ci) drawWhisker(u, x, m.ci, '#333');
      const end = up ? Math.max(m.ratio, m.ci?.high ?? m.ratio) : Math.min(m.ratio, m.ci?.low ?? m.ratio);
      const y = u.valToPos(end, 'y', true) + (up ? -4 : 4) * uPlot.pxRatio;
      drawText(u, `${times(m.ratio)}${m.significant === false ? ' ~' : ''}`, x, y, '#222', up ? 'bottom' : 'top');
    });
  };
  charts.push(
    new uPlot(
      {
        title: `how many times better A is, per metric (${c.a.devices.join(', ')} vs ${c.b.devices.join(', ')})`,
        width: chartWidth(),
        height: 300,
        scales: { x: { time: false, range: [0.4, metrics.length + 0.6] }, y: { distr: 3, log: 2, range } },
        axes: [{ splits: () => xs, values: (_u, ticks) => ticks.map((t) => metrics[Math.round(t) - 1] ?? '') }, { label: 'A / B (log2; 1x: no difference)', splits: powersOf2, values: (_u, ticks) => ticks.map((t) => (t === null || t === undefined ? '' : times(t))) }],
        series: [
          { label: 'metric' },
          { label: `${c.a.label} better`, stroke: BETTER.a, fill: `${BETTER.a}aa`, paths: bars, points: { show: false }, fillTo: 1 },
          { label: `${c.b.label} better`, stroke: BETTER.b, fill: `${BETTER.b}aa`, paths: bars, points: { show: false }, fillTo: 1 },
        ],
        hooks: { drawClear: [() => void (drawn.length = 0)], draw: [draw] },
      },
      [xs, entries.map((m) => (m.ratio >= 1 ? m.ratio : null)), entries.map((m) => (m.ratio < 1 ? m.ratio : null))],
      container,
    ),
  );
}

const metricRatios = (c: Comparison) => c.metrics.flatMap((m) => (c.byMetric[m] ? [c.byMetric[m]!] : []));

function renderMetrics(c: Comparison): void {
  const rows = c.metrics.flatMap((metric) => {
    const m = c.byMetric[metric];
    if (m === undefined) return [];
    const tr = row('td', [metric, times(m.ratio), intervalText(m.ci), pText(m.p), m.significant === false ? '~' : '', m.sentence], m.significant === false ? 'insignificant' : '');
    tr.dataset['metric'] = metric;
    return [tr];
  });
  $('metrics').replaceChildren(...rows);
  $('metrics-table').classList.toggle('no-interval', !metricRatios(c).some((m) => m.ci !== null));
  $('metrics-section').hidden = rows.length === 0;
}

function pointNotes(p: ComparisonPoint): string {
  return [...(p.nearResolution ? [`a side is within ${RESOLUTION_STEPS} printing steps of 0: the ratio is mostly rounding`] : []), ...(p.notes ?? [])].join('; ');
}

function renderPoints(c: Comparison): void {
  const paired = c.rows.filter((p) => p.ratio !== undefined);
  const rows = paired.map((p) => {
    const tr = row(
      'td',
      [p.metric, p.req_size === undefined ? '' : String(p.req_size), String(p.a ?? ''), String(p.b ?? ''), times(p.ratio), intervalText(p.ci), pText(p.p), p.significant === false ? '~' : '', pointNotes(p)],
      [p.significant === false ? 'insignificant' : '', p.nearResolution ? 'near-resolution' : ''].filter(Boolean).join(' '),
    );
    return tr;
  });
  $('points').replaceChildren(...rows);
  $('points-table').classList.toggle('no-interval', !paired.some((p) => p.ci !== undefined));
  const insignificant = paired.filter((p) => p.significant === false).length;
  const withInterval = paired.filter((p) => p.ci !== undefined).length;
  $('points-title').textContent = `points (${paired.length}${withInterval > 0 ? `; ${insignificant} not significant, marked ~` : ''})`;
  $('points-section').hidden = rows.length === 0;
}

function intervalLine(c: Comparison): string {
  if (!c.ci) return c.ciNote ?? '';
  const verdict = c.significant === false ? '~ not significant: it holds 1x' : 'significant';
  return `${c.ci.label}: A/B ${intervalText(c.ci)}, ${verdict} (bootstrap-t, df ${c.ci.df}, ${c.ci.iterations} resamples)`;
}

function renderComparison(c: Comparison): void {
  clearCharts();
  // Shown before drawing: uPlot lays its legend out in the live document.
  $('results').hidden = false;
  $('sentence').textContent = c.sentence;
  $('ratio').textContent = times(c.ratio);
  $('ratio').title = 'A / B: how many times better A is over all points';
  const interval = $('interval');
  interval.textContent = intervalLine(c);
  interval.dataset['significant'] = String(c.significant);
  $('advice').textContent = c.advice ? `runs needed: ${c.advice.note}` : '';
  $('paired').textContent = c.paired ? 'devices paired disk with disk: each device of A with the device of the same name on B' : '';
  $('sides').textContent = `A: ${c.a.selector} (${c.a.runs} run${c.a.runs === 1 ? '' : 's'}) - B: ${c.b.selector} (${c.b.runs} run${c.b.runs === 1 ? '' : 's'})`;
  $('warnings-title').hidden = c.warnings.length === 0;
  $('warnings').replaceChildren(...c.warnings.map((w) => el('li', { textContent: w })));
  $('excluded').replaceChildren(...c.excluded.map((p) => el('li', { textContent: `${p.metric}${p.req_size === undefined ? '' : ` at ${p.req_size}`}: ${p.excluded}` })));
  renderMetrics(c);
  renderPoints(c);
  const sized = c.rows.filter((p) => p.req_size !== undefined);
  if (sized.length > 0) {
    ratioChart(c, sized);
    absoluteChart(c, sized);
  } else barChart(c);
  if (window.__BENCHDROP__) document.body.dataset['state'] = 'compared';
  else setState('compared');
}

/** What a listed upload came to: its runs, what replaced it, its message and line. */
function uploadOutcome(u: UploadRow): string {
  const parts: string[] = [];
  if (u.status === 'ready' || u.runCount > 0) parts.push(`${u.runCount} run${u.runCount === 1 ? '' : 's'}`);
  if (u.replacedBy) parts.push(`replaced by version ${u.replacedBy}`);
  if (u.message) parts.push(`${u.message}${u.line ? ` (line ${u.line})` : ''}`);
  return parts.join('; ');
}

function renderUploads(page: { uploads: UploadRow[]; next?: string }): void {
  const rows = page.uploads.map((u) => {
    const tr = row('td', [u.key, u.status, u.device ?? '', uploadOutcome(u), u.updatedAt]);
    tr.dataset['status'] = u.status;
    return tr;
  });
  $('uploads').replaceChildren(...rows);
  $('uploads-table').hidden = rows.length === 0;
  const count = `${rows.length} upload${rows.length === 1 ? '' : 's'}`;
  $('uploads-status').textContent = rows.length === 0 ? 'no uploads yet' : page.next === undefined ? count : `the first ${count}; the lab holds more`;
}

/**
 * The lab's device labels as suggestions in the selector fields: one page of
 * the largest size (a datalist of hundreds of thousands would stall the page),
 * and a note saying how many are offered and, when the lab holds more, how to
 * reach the others.
 */
function renderDevices(page: DevicesPage): void {
  $('device-labels').replaceChildren(...page.devices.map((d) => el('option', { value: d.label })));
  const note = $('devices-note');
  const count = `${page.devices.length} device label${page.devices.length === 1 ? '' : 's'}`;
  note.textContent =
    page.next === undefined
      ? `${count} in this lab, offered as you type a selector`
      : `the first ${count} of this lab are offered as you type; it holds more: type the start of a label and a * (x4100/*) to take those`;
  note.dataset['more'] = String(page.next !== undefined);
  note.hidden = false;
}

/** An API answer, or an error carrying the API's own message (or what went wrong on the way). */
async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, { signal: signal ?? null });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new Error('the lab did not answer: is it still running?');
  }
  const body = (await response.json().catch(() => ({}))) as T & { error?: { message?: string } };
  if (!response.ok) throw new Error(body.error?.message ?? `${response.status} ${response.statusText}`);
  return body;
}

type PageState = 'loading' | 'empty' | 'idle' | 'compared' | 'error';

/** One state at a time: the status line says what is under way, the main region is busy while it is. */
function setState(state: PageState, status = ''): void {
  document.body.dataset['state'] = state;
  $('main').setAttribute('aria-busy', String(state === 'loading'));
  $('status').textContent = status;
  $('error').hidden = state !== 'error';
  $('empty').hidden = state !== 'empty';
  $('controls').hidden = state === 'empty';
}

function showError(title: string, message: string): void {
  $('error').replaceChildren(el('strong', { textContent: title }), ' ', el('span', { id: 'error-message', textContent: message }));
  $('results').hidden = true;
  setState('error');
}

/** Nested labels (x4100 and x4100/c0t0d0) are one device seen twice, not two to compare. */
const nested = (x: string, y: string) => x.startsWith(`${y}/`) || y.startsWith(`${x}/`);

/** The first two labels of one format that are not one inside the other; else the first label alone. */
function initialPair(devices: readonly DeviceEntry[]): { a: string; b?: string } | undefined {
  for (const first of devices) {
    const second = devices.find((d) => d.format === first.format && d.label !== first.label && !nested(d.label, first.label));
    if (second) return { a: first.label, b: second.label };
  }
  return devices[0] && { a: devices[0].label };
}

let inFlight: AbortController | undefined;

async function compareFromForm(): Promise<void> {
  const a = $<HTMLInputElement>('a').value.trim();
  const b = $<HTMLInputElement>('b').value.trim();
  const metric = $<HTMLSelectElement>('metric').value;
  const query = new URLSearchParams({ a, b, metric });
  history.replaceState(null, '', `?${query}`);
  inFlight?.abort();
  const request = (inFlight = new AbortController());
  setState('loading', `comparing ${a} with ${b} (${metric})...`);
  try {
    const comparison = await getJson<Comparison>(`compare?${query}`, request.signal);
    if (request === inFlight) renderComparison(comparison);
  } catch (error) {
    if (request === inFlight && (error as Error).name !== 'AbortError') showError(`Could not compare ${a} with ${b}:`, (error as Error).message);
  }
}

function loadUploads(): void {
  const section = $('uploads-section');
  section.setAttribute('aria-busy', 'true');
  $('uploads-status').textContent = 'loading uploads...';
  getJson<{ uploads: UploadRow[]; next?: string }>('uploads')
    .then(renderUploads, (error: Error) => {
      $('uploads-table').hidden = true;
      $('uploads-status').textContent = `could not list uploads: ${error.message}`;
    })
    .finally(() => section.setAttribute('aria-busy', 'false'));
}

/** Fills the form from the URL's query, else from the lab's labels; compares when both sides are known. */
function fillAndCompare(devices: readonly DeviceEntry[]): void {
  const params = new URLSearchParams(location.search);
  const pair = params.get('a') || params.get('b') ? { a: params.get('a') ?? '', b: params.get('b') ?? '' } : initialPair(devices);
  $<HTMLInputElement>('a').value = pair?.a ?? '';
  $<HTMLInputElement>('b').value = pair?.b ?? '';
  const select = $<HTMLSelectElement>('metric');
  select.value = params.get('metric') ?? 'all';
  if (select.selectedIndex < 0) select.value = 'all';
  if (pair?.a && pair.b) void compareFromForm();
  else setState('idle', 'this lab holds one device label: type a selector for the other side and press Compare');
}

/** Starts from what the lab holds: its labels decide between the empty state and a first comparison. */
async function loadLab(): Promise<void> {
  setState('loading', "loading the lab's devices...");
  loadUploads();
  let page: DevicesPage;
  try {
    page = await getJson<DevicesPage>(`devices?limit=${MAX_PAGE}`);
  } catch (error) {
    showError("Could not read the lab's devices:", (error as Error).message);
    return;
  }
  renderDevices(page);
  $('devices-note').hidden = page.devices.length === 0;
  if (page.devices.length === 0) setState('empty');
  else fillAndCompare(page.devices);
}

function start(): void {
  const embedded = window.__BENCHDROP__;
  if (embedded) {
    // A report written by `benchdrop compare --html`: everything is in the page.
    if (embedded.comparison) renderComparison(embedded.comparison);
    return;
  }
  $('controls').addEventListener('submit', (event) => {
    event.preventDefault();
    void compareFromForm();
  });
  $('recheck').addEventListener('click', () => void loadLab());
  void loadLab();
}

start();
