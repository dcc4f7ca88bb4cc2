/**
 * Each compared run's samples over time, on the served page: a metric (the
 * first compared by default) and a device of each side picked, one chart with
 * every run of A and of B overlaid (A solid, B dashed), time since the run's
 * first report on x (or the report number when a log printed no times). The
 * report that counts since boot is drawn apart, as a hollow square, and not
 * joined to its run's line. Read through
 * `GET /runs/{id}/samples?series=&metric=&limit=&next=` (RunSamples), each
 * series followed through `next` up to POINTS_CAP points, said when cut. A
 * written file (no server) says the section needs the lab or the API.
 */
import uPlot from 'uplot';
import type { RunSamples } from '../shared/api.ts';
import type { Comparison, RunSetup } from '../shared/comparison/index.ts';
import { plural } from '../shared/comparison/format.ts';
import { chartWidth, dropChart, keepChart, SIDE_COLORS, STILL_LEGEND, withAlpha } from './chart-kit.ts';
import { $, el } from './dom.ts';

/** Points read per series at most: more would stall the page and say nothing more at this width. */
export const POINTS_CAP = 50_000;
/** Runs drawn a side at most. */
const RUNS_DRAWN = 8;
const HEIGHT = 300;

/** One run's series as read: its side, x values and values, and where the since-boot reports are. */
interface Track {
  side: 'a' | 'b';
  run: RunSetup;
  samples: Pick<RunSamples, 'reports' | 'times' | 'sinceBoot' | 'values' | 'unit'>;
  capped: boolean;
}

type GetJson = <T>(path: string, signal?: AbortSignal) => Promise<T>;

let chart: uPlot | undefined;
let request: AbortController | undefined;

/** The runs of a side this section can draw: iostat runs, the first RUNS_DRAWN. */
const drawable = (runs: readonly RunSetup[] | undefined) => (runs ?? []).filter((r) => r.format === 'iostat');

/** Sets the section up for a comparison: hidden when no run has samples over time, offline when there is no server. */
export function renderTimeSeries(c: Comparison, getJson: GetJson | undefined): void {
  request?.abort();
  if (chart) dropChart(chart);
  chart = undefined;
  const section = $('series-section');
  const a = drawable(c.setups.a);
  const b = drawable(c.setups.b);
  section.hidden = a.length + b.length === 0;
  if (section.hidden || getJson === undefined) return;
  const metric = $<HTMLSelectElement>('series-metric');
  metric.replaceChildren(...c.metrics.map((m) => el('option', { value: m, textContent: m })));
  // The first metric compared; one left out of every point (measured 0 on both sides) only when all are.
  metric.value = c.metrics.find((m) => c.byMetric[m] !== undefined) ?? c.metrics[0] ?? '';
  fillDevices($<HTMLSelectElement>('series-a'), a);
  fillDevices($<HTMLSelectElement>('series-b'), b);
  pairDevices();
  const redraw = () => void drawSeries(a, b, getJson);
  for (const id of ['series-metric', 'series-a', 'series-b']) $(id).onchange = redraw;
  redraw();
}

function fillDevices(select: HTMLSelectElement, runs: readonly RunSetup[]): void {
  const devices = [...new Set(runs.flatMap((r) => r.devices))];
  select.replaceChildren(...devices.map((d) => el('option', { value: d, textContent: d })));
  select.disabled = devices.length === 0;
}

/** The device's own name, after its label: a disk of `x4100` is `x4100/sda`. */
const nativeOf = (device: string) => device.slice(device.lastIndexOf('/') + 1);

/** B starts on the disk of A's name when it has one (sda with sda), as a paired comparison does. */
function pairDevices(): void {
  const a = $<HTMLSelectElement>('series-a');
  const b = $<HTMLSelectElement>('series-b');
  const same = [...b.options].find((o) => nativeOf(o.value) === nativeOf(a.value));
  if (same) b.value = same.value;
}

async function drawSeries(a: readonly RunSetup[], b: readonly RunSetup[], getJson: GetJson): Promise<void> {
  request?.abort();
  const mine = (request = new AbortController());
  const metric = $<HTMLSelectElement>('series-metric').value;
  const device = { a: $<HTMLSelectElement>('series-a').value, b: $<HTMLSelectElement>('series-b').value };
  const wanted = (['a', 'b'] as const).flatMap((side) =>
    (side === 'a' ? a : b)
      .filter((r) => r.devices.includes(device[side]))
      .slice(0, RUNS_DRAWN)
      .map((run) => ({ side, run })),
  );
  const section = $('series-section');
  const status = $('series-status');
  section.setAttribute('aria-busy', 'true');
  status.textContent = `reading ${metric} of ${plural(wanted.length, 'run')}...`;
  try {
    const tracks = await Promise.all(
      wanted.map(({ side, run }) => readTrack(side, run, device[side], metric, getJson, mine.signal)),
    );
    if (mine !== request) return;
    plot(tracks, metric, device);
    status.textContent = seriesStatus(tracks, a, b, device);
  } catch (error) {
    if (mine !== request || (error as Error).name === 'AbortError') return;
    if (chart) dropChart(chart);
    chart = undefined;
    $('series-chart').replaceChildren();
    $('series-note').hidden = true;
    status.textContent = `could not read the samples: ${(error as Error).message}`;
  } finally {
    if (mine === request) section.setAttribute('aria-busy', 'false');
  }
}

/** One run's series, page after page through `next`, up to POINTS_CAP points. */
async function readTrack(
  side: 'a' | 'b',
  run: RunSetup,
  series: string,
  metric: string,
  getJson: GetJson,
  signal: AbortSignal,
): Promise<Track> {
  const samples: Track['samples'] = { reports: [], times: [], sinceBoot: [], values: [], unit: '' };
  let next: string | undefined;
  do {
    const limit = POINTS_CAP - samples.values.length;
    const query = new URLSearchParams({ series, metric, limit: String(limit), ...(next ? { next } : {}) });
    const page = await getJson<RunSamples>(`runs/${encodeURIComponent(run.runId)}/samples?${query}`, signal);
    samples.unit = page.unit;
    samples.reports.push(...page.reports);
    samples.times.push(...page.times);
    samples.sinceBoot.push(...page.sinceBoot);
    samples.values.push(...page.values);
    next = page.next;
  } while (next !== undefined && samples.values.length < POINTS_CAP);
  return { side, run, samples, capped: next !== undefined };
}

/** Seconds since each run's first report when every report has a time, else the report number. */
function useTimes(tracks: readonly Track[]): boolean {
  return tracks.length > 0 && tracks.every((t) => t.samples.times.every((x) => x !== null && !isNaN(Date.parse(x))));
}

function xsOf(track: Track, timed: boolean): number[] {
  if (!timed) return track.samples.reports;
  const times = track.samples.times.map((t) => Date.parse(t!) / 1000);
  return times.map((t) => t - times[0]!);
}

function plot(tracks: readonly Track[], metric: string, device: { a: string; b: string }): void {
  if (chart) dropChart(chart);
  chart = undefined;
  const container = $('series-chart');
  container.replaceChildren();
  const note = $('series-note');
  if (tracks.length === 0) {
    note.hidden = true;
    return;
  }
  const timed = useTimes(tracks);
  const xs = tracks.map((t) => xsOf(t, timed));
  // The since-boot report is not an interval's figure: off the line, drawn as its own mark.
  const lines = tracks.map((t, i): uPlot.AlignedData => [
    xs[i]!,
    t.samples.values.map((v, k) => (t.samples.sinceBoot[k] ? null : v)),
  ]);
  const data = uPlot.join(lines as [number[], (number | null)[]][]);
  const unit = tracks.find((t) => t.samples.unit)?.samples.unit ?? '';
  const options: uPlot.Options = {
    title: `${metric} over time: A ${device.a} (solid), B ${device.b} (dashed)`,
    width: chartWidth(container),
    height: HEIGHT,
    legend: STILL_LEGEND,
    // The since-boot marks count too: a run of one report has nothing else to scale by.
    scales: { x: { time: false }, y: { range: () => valueRange(tracks) } },
    axes: [{ label: timed ? "seconds since the run's first report" : 'report number' }, { label: unit }],
    series: [
      { label: timed ? 'seconds' : 'report' },
      ...tracks.map((t, i) => trackSeries(t, tracks.slice(0, i).filter((u) => u.side === t.side).length)),
    ],
    hooks: { draw: [(u: uPlot) => drawSinceBoot(u, tracks, xs)] },
  };
  chart = keepChart(new uPlot(options, data, container), container, HEIGHT);
  container.dataset['tracks'] = JSON.stringify(
    tracks.map((t) => ({ side: t.side, run: t.run.runId, points: t.samples.values.length, capped: t.capped })),
  );
  const boot = tracks.some((t) => t.samples.sinceBoot.includes(true));
  note.textContent =
    (boot
      ? "□ a run's since-boot report: iostat's first figures average everything since the machine started, " +
        'so it is drawn apart and not joined to the line. '
      : '') + 'Each line is one run; A solid, B dashed.';
  note.hidden = false;
}

/** From 0 (or the lowest value) to the highest value of any report, since-boot ones included. */
function valueRange(tracks: readonly Track[]): [number, number] {
  const values = tracks.flatMap((t) => t.samples.values.filter((v): v is number => v !== null && Number.isFinite(v)));
  const low = Math.min(0, ...values);
  const high = Math.max(...values, low + 1);
  return [low, high + (high - low) * 0.05];
}

function trackSeries(t: Track, nth: number): uPlot.Series {
  const base = SIDE_COLORS[t.side];
  return {
    label: `${t.side.toUpperCase()} ${t.run.label} ${t.run.runId.slice(-8)}`,
    stroke: nth === 0 ? base : withAlpha(base, Math.max(0.35, 1 - nth * 0.15)),
    width: t.side === 'a' ? 1.75 : 1.5,
    spanGaps: true,
    points: { show: false },
    ...(t.side === 'b' ? { dash: [6, 3] } : {}),
  };
}

/** A hollow square at each since-boot report. */
function drawSinceBoot(u: uPlot, tracks: readonly Track[], xs: readonly number[][]): void {
  const ctx = u.ctx;
  const half = 4 * uPlot.pxRatio;
  ctx.save();
  ctx.lineWidth = 1.5 * uPlot.pxRatio;
  tracks.forEach((t, i) =>
    t.samples.sinceBoot.forEach((boot, k) => {
      const v = t.samples.values[k];
      if (!boot || v === null || v === undefined) return;
      ctx.strokeStyle = SIDE_COLORS[t.side];
      const x = u.valToPos(xs[i]![k]!, 'x', true);
      const y = u.valToPos(v, 'y', true);
      ctx.strokeRect(x - half, y - half, 2 * half, 2 * half);
    }),
  );
  ctx.restore();
}

function seriesStatus(
  tracks: readonly Track[],
  a: readonly RunSetup[],
  b: readonly RunSetup[],
  device: { a: string; b: string },
): string {
  const drawn = plural(tracks.length, 'run');
  const capped = tracks.filter((t) => t.capped).map((t) => t.run.runId);
  const more = (['a', 'b'] as const).filter(
    (side) => (side === 'a' ? a : b).filter((r) => r.devices.includes(device[side])).length > RUNS_DRAWN,
  );
  return [
    tracks.length === 0 ? 'no run has samples of these devices' : `${drawn} drawn`,
    more.length > 0 ? `the first ${RUNS_DRAWN} runs of ${more.map((s) => s.toUpperCase()).join(' and ')}` : '',
    capped.length > 0 ? `cut at ${POINTS_CAP.toLocaleString('en')} points: ${capped.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}
