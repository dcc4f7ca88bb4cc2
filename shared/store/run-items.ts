/**
 * The run items an upload writes: a run's META (diskperf or iostat), the SERIES
 * index entries of an iostat run with more series than its META holds, and
 * the time range its samples span.
 */
import { seriesLabel } from '../labels.ts';
import type { DiskperfRun, FioRun, IostatRun, Run } from '../model.ts';
import { devicePk, deviceSk, runPk, RUN_META_SK, seriesSk } from './keys.ts';
import {
  MAX_SERIES_IN_META,
  type DiskperfRunItem,
  type FioRunItem,
  type IostatRunItem,
  type RunContext,
  type RunItemBase,
  type SamplesObject,
  type SeriesItem,
  type StoredSeries,
  type TimeSpan,
} from './items.ts';
import { packRows, packSeries } from './packing.ts';

/**
 * A time of the log as a listing shows it: in UTC when the log gave a zone or
 * an offset (so times of different labs compare), else as printed, with no
 * zone (the measuring host's clock, which the log does not place).
 */
export function samplesTime(iso: string): string {
  if (!/(Z|[+-]\d{2}:\d{2})$/.test(iso)) return iso;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** The span of these times (in samplesTime form; undefined ones skipped), or undefined when there are none. */
export function spanOf(times: Iterable<string | undefined>): TimeSpan | undefined {
  let from: string | undefined;
  let to: string | undefined;
  for (const time of times) {
    if (time === undefined) continue;
    const t = samplesTime(time);
    if (from === undefined || t < from) from = t;
    if (to === undefined || t > to) to = t;
  }
  if (from === undefined) return undefined;
  return to !== from ? { from, to: to! } : { from };
}

/** The span of several (the series of one run). */
export const joinSpans = (spans: Iterable<TimeSpan | undefined>) =>
  spanOf([...spans].flatMap((s) => (s === undefined ? [] : [s.from, s.to])));

function* sampleTimes(run: IostatRun): Generator<string | undefined> {
  for (const series of run.series) for (const sample of series.samples ?? []) yield sample.time;
}

const spanFields = (span: TimeSpan | undefined) =>
  span === undefined ? {} : { from: span.from, ...(span.to !== undefined ? { to: span.to } : {}) };

function base(run: Run, ctx: RunContext): Omit<RunItemBase, 'format' | 'platform'> {
  const host = run.meta.host;
  const startedAt = run.format === 'diskperf' ? run.meta.startedAt : run.format === 'fio' ? run.meta.time : undefined;
  return {
    pk: runPk(ctx.runId),
    sk: RUN_META_SK,
    type: 'run',
    runId: ctx.runId,
    index: run.index,
    dialect: run.dialect,
    label: ctx.label,
    name: run.name,
    ...(host !== undefined ? { host } : {}),
    tags: ctx.tags,
    context: run.context,
    startLine: run.startLine,
    endLine: run.endLine,
    warnings: run.warnings,
    source: ctx.source,
    time: startedAt ?? ctx.ingestedAt,
    ...spanFields(spanOf([startedAt])),
    ingestedAt: ctx.ingestedAt,
  };
}

export function diskperfRunItem(run: DiskperfRun, ctx: RunContext): DiskperfRunItem {
  const item = base(run, ctx);
  return {
    ...item,
    format: 'diskperf',
    platform: 'irix',
    meta: run.meta,
    columns: run.columns,
    packedRows: packRows(run.rows),
    gsi1pk: devicePk(ctx.label),
    gsi1sk: deviceSk(item.time, ctx.runId),
  };
}

/** A fio run's META: its points in the item (at most MAX_FIO_POINTS: the ingest refuses more). */
export function fioRunItem(run: FioRun, ctx: RunContext): FioRunItem {
  const item = base(run, ctx);
  return {
    ...item,
    format: 'fio',
    meta: run.meta,
    columns: run.columns,
    points: run.rows,
    gsi1pk: devicePk(ctx.label),
    gsi1sk: deviceSk(item.time, ctx.runId),
  };
}

/** What a run's samples became when they streamed past instead of staying in the run. */
export interface StreamedSamples {
  /** Their time range (SamplesWriter.span of each series, joined with joinSpans). */
  span?: TimeSpan | undefined;
  /** Their object in the results bucket, when the run had samples. */
  samples?: SamplesObject | undefined;
}

/** Without `streamed`, the time range is taken from the samples the run holds. */
export function iostatRunItem(
  run: IostatRun,
  ctx: RunContext,
  streamed?: StreamedSamples,
): { run: IostatRunItem; series: SeriesItem[]; seriesLabels: string[] } {
  const span = streamed === undefined ? spanOf(sampleTimes(run)) : streamed.span;
  const samples = streamed?.samples;
  const item = base(run, ctx);
  const firstTime = run.series.find((s) => s.samples?.[0]?.time)?.samples?.[0]?.time;
  const time = firstTime ?? span?.from ?? item.time;
  const stored: StoredSeries[] = run.series.map((s) => ({
    native: s.device,
    device: seriesLabel(ctx.label, s.device),
    ...(s.mount !== undefined ? { mount: s.mount } : {}),
    sampleCount: s.sampleCount,
    summary: s.summary,
  }));
  // Series the META holds need no items of their own: readers find them through it (write cost, BENCHMARKS.md).
  const inMeta = stored.length <= MAX_SERIES_IN_META;
  const runItem: IostatRunItem = {
    ...item,
    time,
    ...spanFields(span),
    format: 'iostat',
    platform: run.platform,
    ...(samples !== undefined ? { samples } : {}),
    meta: run.meta,
    columns: run.columns,
    reports: run.reports,
    seriesCount: stored.length,
    // A file of thousands of devices would outgrow an item: its summaries stay in the SERIES items.
    ...(inMeta ? { packedSeries: packSeries(stored) } : {}),
    gsi1pk: devicePk(ctx.label),
    gsi1sk: deviceSk(time, ctx.runId),
  };
  const series = (inMeta ? [] : stored).map((s): SeriesItem => ({
    pk: runPk(ctx.runId),
    sk: seriesSk(s.native),
    type: 'series',
    runId: ctx.runId,
    device: s.device,
    native: s.native,
    format: 'iostat',
    tags: ctx.tags,
    ...(item.host !== undefined ? { host: item.host } : {}),
    time,
    sampleCount: s.sampleCount,
    summary: s.summary,
    gsi1pk: devicePk(s.device),
    gsi1sk: deviceSk(time, ctx.runId),
  }));
  return { run: runItem, series, seriesLabels: stored.map((s) => s.device) };
}
