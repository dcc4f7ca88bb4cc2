/**
 * The report page: pick two selectors and a metric, see how many times better A
 * is than B (comparison-view.ts draws the answer, charts.ts its charts).
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
import 'uplot/dist/uPlot.min.css';
import './page.css';
import type { DeviceEntry, DevicesPage, UploadListing } from '../shared/api.ts';
import type { Comparison } from '../shared/comparison/index.ts';
import { plural } from '../shared/comparison/format.ts';
import { MAX_PAGE } from '../shared/store/pages.ts';
import { renderComparison } from './comparison-view.ts';
import { $, el, row } from './dom.ts';

interface Embedded {
  comparison?: Comparison;
  /** A frozen report (POST /reports): which one, when it was frozen, and what was asked. */
  frozen?: { id: string; createdAt: string; query: { a: string; b: string; metric: string } };
}

/** Over a frozen report: it shows the lab as it was, not as it is. */
function frozenNote(frozen: NonNullable<Embedded['frozen']>): HTMLElement {
  const { id, createdAt, query } = frozen;
  const asked = `A ${query.a}, B ${query.b}, metric ${query.metric}`;
  return el(
    'p',
    { id: 'frozen' },
    `Frozen report ${id}, made ${createdAt} (${asked}): later uploads do not change it.`,
  );
}

/**
 * An upload as listed: any status string (new ones render as they come), and the version that
 * replaced it if one did.
 */
type UploadRow = Omit<UploadListing, 'status'> & { status: string; replacedBy?: string };

declare global {
  interface Window {
    __BENCHDROP__?: Embedded;
  }
}

/** What a listed upload came to: its runs, what replaced it, its message and line. */
function uploadOutcome(u: UploadRow): string {
  const parts: string[] = [];
  if (u.status === 'ready' || u.runCount > 0) parts.push(plural(u.runCount, 'run'));
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
  const count = plural(rows.length, 'upload');
  $('uploads-status').textContent =
    rows.length === 0 ? 'no uploads yet' : page.next === undefined ? count : `the first ${count}; the lab holds more`;
}

let metricMenu: HTMLOptGroupElement[] | undefined;

/**
 * The metric menu of a lab whose labels are all listed: the groups, and the
 * metrics of the formats it holds only (no fio metrics in a lab of diskperf
 * logs). A lab that holds more labels than listed keeps every metric.
 */
function offerMetrics(page: DevicesPage): void {
  const select = $<HTMLSelectElement>('metric');
  metricMenu ??= [...select.querySelectorAll('optgroup')];
  const formats = new Set(page.devices.map((d) => d.format));
  const held = (group: HTMLOptGroupElement) => {
    const format = group.dataset['format'];
    return page.next !== undefined || format === undefined || formats.has(format);
  };
  select.replaceChildren(...metricMenu.filter(held));
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
  const count = plural(page.devices.length, 'device label');
  note.textContent =
    page.next === undefined
      ? `${count} in this lab, offered as you type a selector`
      : `the first ${count} of this lab are offered as you type; it holds more: ` +
        'type the start of a label and a * (x4100/*) to take those';
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
    throw new Error('the lab did not answer: is it still running?', { cause: error });
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
  $('error').replaceChildren(
    el('strong', { textContent: title }),
    ' ',
    el('span', { id: 'error-message', textContent: message }),
  );
  $('results').hidden = true;
  setState('error');
}

/** Nested labels (x4100 and x4100/c0t0d0) are one device seen twice, not two to compare. */
const nested = (x: string, y: string) => x.startsWith(`${y}/`) || y.startsWith(`${x}/`);

/** The first two labels of one format that are not one inside the other; else the first label alone. */
function initialPair(devices: readonly DeviceEntry[]): { a: string; b?: string } | undefined {
  for (const first of devices) {
    const second = devices.find(
      (d) => d.format === first.format && d.label !== first.label && !nested(d.label, first.label),
    );
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
    if (request === inFlight) {
      renderComparison(comparison, getJson);
      setState('compared');
    }
  } catch (error) {
    if (request === inFlight && (error as Error).name !== 'AbortError')
      showError(`Could not compare ${a} with ${b}:`, (error as Error).message);
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
  const pair =
    params.get('a') || params.get('b') ? { a: params.get('a') ?? '', b: params.get('b') ?? '' } : initialPair(devices);
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
  offerMetrics(page);
  $('devices-note').hidden = page.devices.length === 0;
  if (page.devices.length === 0) setState('empty');
  else fillAndCompare(page.devices);
}

function start(): void {
  const embedded = window.__BENCHDROP__;
  if (embedded) {
    // A report written by `benchdrop compare --html`: everything is in the page.
    if (embedded.frozen) $('main').prepend(frozenNote(embedded.frozen));
    if (embedded.comparison) {
      renderComparison(embedded.comparison);
      document.body.dataset['state'] = 'compared';
    }
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
