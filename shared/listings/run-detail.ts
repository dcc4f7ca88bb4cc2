/**
 * GET /runs/{id}: a complete run (its META) and its series, as RunDetail
 * documents them (shared/api.ts), built field by field from the stored items.
 */
import type { RunDetail, RunInfo, SeriesInfo } from '../api.ts';
import type { RunItem, StoredSeries } from '../store/items.ts';
import { diskperfRows, storedSeriesOf } from '../store/packing.ts';
import { getRunMeta, seriesItems } from '../store/reads.ts';
import type { ReadStore } from '../store/store.ts';
import { runFacts } from './run-facts.ts';

/** SERIES items returned with one run (its META says how many there are: seriesCount). */
export const MAX_SERIES_IN_DETAIL = 1000;

/** A complete run (its META) and its series; undefined when there is no META (unknown or half-written). */
export async function getRun(store: ReadStore, runId: string): Promise<RunDetail | undefined> {
  const run = await getRunMeta(store, runId);
  if (run === undefined) return undefined;
  if (run.format !== 'iostat') return { run: runInfo(run), series: [] };
  // Packed in the META; a run of many series (or one stored before packing) has SERIES items.
  if (run.packedSeries !== undefined) return { run: runInfo(run), series: storedSeriesOf(run)!.map(seriesInfo) };
  const mounts = new Map(
    (run.series ?? []).flatMap((s) => (s.mount !== undefined ? [[s.native, s.mount] as const] : [])),
  );
  const series = await seriesItems(store, runId, MAX_SERIES_IN_DETAIL);
  return { run: runInfo(run), series: series.map((s) => seriesInfo({ ...s, mount: mounts.get(s.native) })) };
}

/**
 * A run's META as GET /runs/{id} documents it (shared/api.ts RunInfo), field
 * by field: whatever else the item holds (keys, index attributes, packed
 * columns) stays in the store, including attributes added later.
 */
function runInfo(item: RunItem): RunInfo {
  const facts = {
    ...runFacts(item),
    label: item.label,
    index: item.index,
    ...(item.platform !== undefined ? { platform: item.platform } : {}),
    dialect: item.dialect,
    startLine: item.startLine,
    endLine: item.endLine,
    warnings: item.warnings ?? [],
    ingestedAt: item.ingestedAt,
  };
  if (item.format === 'diskperf')
    return { ...facts, format: 'diskperf', meta: item.meta, columns: item.columns, rows: diskperfRows(item) };
  if (item.format === 'fio')
    return { ...facts, format: 'fio', meta: item.meta, columns: item.columns, points: item.points };
  return {
    ...facts,
    format: 'iostat',
    meta: item.meta,
    columns: item.columns,
    reports: item.reports,
    seriesCount: item.seriesCount,
  };
}

/** One series as RunDetail documents it (shared/api.ts SeriesInfo), field by field. */
function seriesInfo(series: Pick<StoredSeries, 'device' | 'native' | 'mount' | 'sampleCount' | 'summary'>): SeriesInfo {
  return {
    device: series.device,
    native: series.native,
    ...(series.mount !== undefined ? { mount: series.mount } : {}),
    sampleCount: series.sampleCount,
    summary: series.summary,
  };
}
