/**
 * GET /runs/{id}/samples: one series' time series of one metric, read from the
 * run's samples object (shared/store/samples-schema.ts) in the results bucket,
 * a page of at most `limit` samples in report order:
 *
 *   { run, series: 'sda', metric: 'util_pct', unit: '%', reports: [0, 1, ...],
 *     times: ['2026-11-02T10:00:00', ...], sinceBoot: [true, false, ...], values: [1.2, 99, ...], next? }
 *
 * What cannot be answered says why: an unknown run, a diskperf run, a run
 * stored before samples objects were written, a series the run does not have
 * (naming the ones it has), a metric that is not an iostat one (listing them).
 * `next` is a cursor as the listings' are (shared/store/cursors.ts): made for
 * this run, series and metric, holding the next page's first report.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { RunSamples } from '../api.ts';
import { IOSTAT_METRICS, METRICS, type IostatMetric } from '../metrics.ts';
import { decodeCursor, encodeCursor } from '../store/cursors.ts';
import type { IostatRunItem } from '../store/items.ts';
import { getRunMeta } from '../store/reads.ts';
import { openSamples, readSeries, seriesNames, type SamplesFile } from '../store/sample-reader.ts';
import type { ReadStore } from '../store/store.ts';

export interface SamplesDeps extends ReadStore {
  s3: S3Client;
  /** The lab's results bucket, where samples objects are (ENV.resultsBucket). */
  resultsBucket: string;
}

export interface SamplesRequest {
  runId: string;
  series: string;
  metric: string;
  limit: number;
  next?: string;
}

/** A request this route cannot answer: `missing` is a 404 (no such run, series or samples), else a 400. */
export class SamplesError extends Error {
  override readonly name = 'SamplesError';
  constructor(
    message: string,
    readonly missing: boolean,
  ) {
    super(message);
  }
}

/** Series named in a 404 at most; a run may have thousands. */
const SERIES_NAMED = 20;

export const SAMPLE_METRIC_HELP = `one iostat metric: ${IOSTAT_METRICS.join(', ')}`;

export async function getSamples(deps: SamplesDeps, request: SamplesRequest): Promise<RunSamples> {
  const metric = iostatMetric(request.metric);
  const run = await iostatRun(deps, request.runId);
  const file = await samplesFile(deps, run);
  const series = seriesOf(file, run, request.series);
  // Checked for the series as the object names it, whichever way the request named it.
  const start = request.next === undefined ? 0 : decodeSamplesCursor({ ...request, series }, request.next);
  const page = await readSeries(deps.s3, file, series, metric, { start, limit: request.limit });
  const { next, ...columns } = page!;
  return {
    run: run.runId,
    series,
    metric,
    unit: METRICS[metric].unit,
    ...columns,
    ...(next !== undefined ? { next: encodeSamplesCursor({ ...request, series }, next) } : {}),
  };
}

function iostatMetric(name: string): IostatMetric {
  if ((IOSTAT_METRICS as readonly string[]).includes(name)) return name as IostatMetric;
  throw new SamplesError(`metric: expected ${SAMPLE_METRIC_HELP} (got ${JSON.stringify(name.slice(0, 60))})`, false);
}

async function iostatRun(deps: SamplesDeps, runId: string): Promise<IostatRunItem> {
  const run = await getRunMeta(deps, runId);
  if (run === undefined) throw new SamplesError(`run ${runId} does not exist (or is still being written)`, true);
  if (run.format !== 'iostat')
    throw new SamplesError(
      `run ${runId} is a ${run.format} run: only iostat runs have samples (GET /runs/${runId} gives its table)`,
      true,
    );
  return run;
}

async function samplesFile(deps: SamplesDeps, run: IostatRunItem): Promise<SamplesFile> {
  // The META names the object and its size (no HeadObject); a run stored before has neither.
  const stored = run.samples;
  const file = stored && (await openSamples(deps.s3, deps.resultsBucket, stored.key, stored.bytes));
  if (file) return file;
  if (stored === undefined && run.seriesCount === 0)
    throw new SamplesError(`run ${run.runId} has no samples: its log printed no disk lines`, true);
  throw new SamplesError(
    `run ${run.runId} was stored before samples were kept: upload ${run.source.key} again ` +
      '(to the same key) to keep its samples',
    true,
  );
}

/**
 * The series as the object names it: its native name (`sda`), or its label as
 * GET /runs/{id} lists it (`<label>/sda`).
 */
function seriesOf(file: SamplesFile, run: IostatRunItem, asked: string): string {
  if (file.groups.has(asked)) return asked;
  const prefix = `${run.label}/`;
  if (asked.startsWith(prefix) && file.groups.has(asked.slice(prefix.length))) return asked.slice(prefix.length);
  const names = seriesNames(file);
  const listed = names.slice(0, SERIES_NAMED).join(', ');
  const more = names.length > SERIES_NAMED ? ` and ${names.length - SERIES_NAMED} more` : '';
  throw new SamplesError(
    `series: run ${run.runId} has no series ${JSON.stringify(asked.slice(0, 100))}; ` +
      `it has ${names.length === 0 ? 'none' : `${listed}${more}`}`,
    true,
  );
}

/** What a cursor is good for: the same run, series and metric (any limit). */
const cursorQuery = (request: SamplesRequest) => ({
  run: request.runId,
  series: request.series,
  metric: request.metric,
});

/** The next page's first report, as a cursor of this run, series and metric. */
export function encodeSamplesCursor(request: SamplesRequest, report: number): string {
  return encodeCursor('samples', cursorQuery(request), report);
}

/** The report a cursor of this run, series and metric starts at; anything else is a CursorError. */
export function decodeSamplesCursor(request: SamplesRequest, text: string): number {
  return decodeCursor('samples', cursorQuery(request), text, (position) =>
    Number.isSafeInteger(position) && (position as number) >= 0 ? (position as number) : undefined,
  );
}
