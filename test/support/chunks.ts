/**
 * The samples of a stored chunk, with canonical values from the run's columns:
 * what tests read back to check that chunking loses nothing (the product never
 * reads samples back).
 */
import type { IostatColumn, IostatSample } from '../../shared/model.ts';
import { metricValues } from '../../shared/model.ts';
import type { ChunkItem } from '../../shared/store/items.ts';
import { unpackValues } from '../../shared/store/packing.ts';

/** The samples of a stored chunk, with canonical values from the run's columns. */
export function chunkSamples(chunk: ChunkItem, columns: readonly IostatColumn[]): IostatSample[] {
  const reports = unpackValues(chunk.reports);
  const lines = unpackValues(chunk.lines);
  const times = chunk.times === undefined ? undefined : (JSON.parse(chunk.times) as (string | null)[]);
  const raw = Object.entries(chunk.raw).map(([name, packed]) => [name, unpackValues(packed)] as const);
  return reports.map((report, i) => {
    const printed: Record<string, number> = {};
    for (const [name, values] of raw) if (values[i] !== undefined) printed[name] = values[i]!;
    const sample: IostatSample = {
      report: report!,
      line: lines[i]!,
      sinceBoot: i === 0 && chunk.sinceBootFirst,
      values: metricValues(columns, printed),
      raw: printed,
    };
    const time = times?.[i];
    if (time) sample.time = time;
    return sample;
  });
}
