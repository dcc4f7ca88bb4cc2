/**
 * What a selector is checked against, and what it stands for once it matches:
 * a diskperf run, or one iostat series of a run, as a selector candidate
 * (shared/selectors.ts) and as an observation (shared/comparison/observations.ts),
 * built from the store's items.
 */
import {
  diskperfColumnsObservation,
  diskperfObservation,
  fioObservation,
  iostatObservation,
  type Observation,
  type RunDescription,
} from '../comparison/observations.ts';
import { nativeInLabel } from '../labels.ts';
import type { Format } from '../model.ts';
import { termMatches, type Selector, type SelectorCandidate } from '../selectors.ts';
import { unpackRows, type SeriesMeans } from '../store/packing.ts';
import type { DiskperfCandidate, FioCandidate, RunHead, StoredDescription } from '../store/session.ts';

/** A candidate a selector read, and the observation it gives when it matches (built only then). */
export interface Found {
  candidate: SelectorCandidate;
  /** An iostat series: the label of its upload, which an exact device term names too. */
  label?: string;
  observation: () => Observation;
}

/** What every entry of the store tells a selector before its run is read. */
interface Checkable {
  runId: string;
  host?: string;
  tags?: Record<string, string>;
  context?: string[];
}

/** A selector candidate: `device` is a diskperf run's label or an iostat series' `<label>/<native>`. */
export function candidateOf(device: string, format: Format, entry: Checkable): SelectorCandidate {
  return {
    device,
    runId: entry.runId,
    ...(entry.host !== undefined ? { host: entry.host } : {}),
    format,
    tags: entry.tags ?? {},
    context: entry.context ?? [],
  };
}

/**
 * Whether a candidate matches every term, an exact device term naming the
 * label an iostat series is filed under as well as the series itself: `sas10k`
 * selects `sas10k/sda` and `sas10k/sdb`, not a diskperf run labelled `sas10k/x`.
 */
export function selects(selector: Selector, candidate: SelectorCandidate, label: string | undefined): boolean {
  return selector.terms.every(
    (t) => (t.kind === 'device' && t.exact !== undefined && t.exact === label) || termMatches(t, candidate),
  );
}

/** The upload label of a series: its label less `/` and the device as labels.ts seriesLabel writes it. */
export const labelOfSeries = (series: { device: string; native: string }) =>
  series.device.slice(0, series.device.length - nativeInLabel(series.native).length - 1);

/** What a run's META says of the run beside its figures, for the setups side by side. */
export function descriptionOf(run: StoredDescription & { tags?: Record<string, string> }): RunDescription {
  const meta = run.meta ?? {};
  const version = [meta.os, meta.osRelease ?? meta.kernel].filter((p) => p !== undefined && p !== '').join(' ');
  return {
    ...(run.tags !== undefined ? { tags: run.tags } : {}),
    ...(version !== '' ? { version } : {}),
    ...(run.from !== undefined ? { from: run.from } : {}),
    ...(run.to !== undefined ? { to: run.to } : {}),
    ...(meta.command !== undefined ? { command: meta.command } : {}),
    ...(run.source?.size !== undefined ? { objectSize: run.source.size } : {}),
  };
}

export function diskperfFound(run: DiskperfCandidate): Found {
  const facts = {
    label: run.label,
    platform: run.platform,
    host: run.host,
    context: run.context,
    meta: run.meta,
    about: descriptionOf(run),
  };
  return {
    candidate: candidateOf(run.label, 'diskperf', run),
    observation: () => {
      if (run.packedRows === undefined) return diskperfObservation(run.runId, run.label, run.rows ?? [], facts);
      const { sizes, columns } = unpackRows(run.packedRows);
      return diskperfColumnsObservation(run.runId, run.label, sizes, columns, facts);
    },
  };
}

export function fioFound(run: FioCandidate): Found {
  const facts = { label: run.label, host: run.host, context: run.context, meta: run.meta, about: descriptionOf(run) };
  return {
    candidate: candidateOf(run.label, 'fio', run),
    observation: () => fioObservation(run.runId, run.label, run.points ?? [], facts),
  };
}

export function seriesFound(
  series: SeriesMeans,
  head: Pick<RunHead, 'runId' | 'label' | 'platform' | 'host' | 'tags' | 'context' | 'reports'> & StoredDescription,
  about = descriptionOf(head),
): Found {
  const facts = {
    label: head.label,
    native: series.native,
    platform: head.platform,
    host: head.host,
    context: head.context,
    about,
  };
  return {
    candidate: candidateOf(series.device, 'iostat', head),
    label: head.label,
    observation: () => iostatObservation(head.runId, series.device, series.summary, head.reports ?? 0, facts),
  };
}
