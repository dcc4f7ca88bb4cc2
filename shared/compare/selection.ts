/**
 * Selection: the observations a selector stands for, read from the store.
 * Queries and key reads only, never a Scan; every read is bounded by what the
 * request names.
 *
 * - Runs by device: the byDevice index holds run META items (written last, so
 *   always complete: diskperf runs under their label, iostat runs under their
 *   upload's label, with their series' summaries) and iostat SERIES items under
 *   `<label>/<native>` (written before their run's META): a series counts only
 *   when its run's META exists, checked with one BatchGet of the distinct runs.
 *   Half-written runs are never visible.
 * - A selector is resolved from its plan (shared/label-plans.ts): one run, one
 *   exact device label (with the iostat series filed under it), the runs
 *   carrying a tag (byTag), the labels with a literal prefix, or all labels,
 *   each label read through byDevice; the terms are then checked on every
 *   candidate. An exact device term names a label's units: its diskperf runs
 *   and every iostat series of an upload filed under it (`sas10k` names
 *   `sas10k/sda`, `sas10k/sdb` ...; `sas10k/sda` names that series alone).
 *
 * Reads per selector (what GET /compare costs, per side; a run or a label both
 * sides read is read once):
 *   run=ID            1 BatchGet of its META (+ SERIES pages for an iostat run
 *                     of more than MAX_SERIES_IN_META series)
 *   device=LABEL      the byDevice pages of LABEL, which hold its runs (iostat
 *                     ones with their series), and of each upload label LABEL
 *                     starts with (`x4100` for `x4100/sda`: its METAs hold the
 *                     series filed under LABEL); when they hold none (iostat
 *                     runs stored before their METAs were indexed) also the
 *                     DEVICES page under LABEL/ and the byDevice pages of each
 *                     series label listed there
 *   tag.K=V (no run=  the byTag pages of that tag + ceil(runs whose entry passes
 *   or exact device)  the other terms / 100) BatchGets of their METAs
 *   device=PRE*       one DEVICES page of the labels under that prefix (begins_with:
 *                     the partition is sorted by label) + the byDevice pages of
 *                     each label matching the pattern
 *   otherwise         one DEVICES page of the first labels + the byDevice pages
 *                     of each label the device terms allow
 *   + for iostat      ceil(distinct runs of the SERIES items that pass every
 *                     term but context~ / 100) BatchGets of their META heads
 *                     (series a META holds come with their head)
 * Unrelated devices and runs add nothing, except to the DEVICES page of a
 * selector whose device pattern starts with a wildcard, or that has no device,
 * tag or run term (only host=, format=, context~): such a selector reads the
 * labels from the first. A DEVICES page reads at most MAX_LABELS + 1 labels: a
 * selector that would read more is a ReadLimitError (a 400) saying how to narrow
 * it (literal text before the first wildcard, a tag, run=ID), after one Query
 * whatever the table holds. Index entries read (MAX_CANDIDATES) and
 * observations (MAX_OBSERVATIONS) per selector are capped the same way.
 */
import type { Observation } from '../comparison/observations.ts';
import { planSelector, type LabelPlan } from '../label-plans.ts';
import type { Format } from '../model.ts';
import { matches, type Selector, type Term } from '../selectors.ts';
import { mapLimit } from '../store/store.ts';
import { tagKey } from '../store/keys.ts';
import { seriesMeansOf, type SeriesMeans } from '../store/packing.ts';
import { seriesItems, tagEntries } from '../store/reads.ts';
import {
  CONCURRENCY,
  MAX_CANDIDATES,
  ReadSession,
  type CandidateItem,
  type IostatRunCandidate,
  type RunCandidate,
} from '../store/session.ts';
import type { ReadStore } from '../store/store.ts';
import {
  candidateOf,
  descriptionOf,
  diskperfFound,
  fioFound,
  labelOfSeries,
  selects,
  seriesFound,
  type Found,
} from './candidates.ts';
import { labelAndSeries, labelsOf, mayName, ReadLimitError } from './reach.ts';

export { ReadLimitError } from './reach.ts';

/** Observations one side of a comparison may hold. */
export const MAX_OBSERVATIONS = 1000;

/**
 * The observations a selector stands for: diskperf runs (rows per request size)
 * and iostat series (summary means) whose candidate matches every term.
 */
export async function resolveSelector(
  store: ReadStore,
  selector: Selector,
  session = new ReadSession(store),
): Promise<Observation[]> {
  const plan = planSelector(selector);
  const found =
    plan.by === 'run'
      ? await runCandidates(session, plan.runId)
      : plan.by === 'tag'
        ? await tagCandidates(session, selector, tagKey(plan.key, plan.value))
        : await deviceCandidates(session, selector, plan);
  const observations = found.filter((f) => selects(selector, f.candidate, f.label)).map((f) => f.observation());
  if (observations.length > MAX_OBSERVATIONS) {
    throw new ReadLimitError(
      `"${selector.text}" matches ${observations.length} runs and series, more than ${MAX_OBSERVATIONS}; ` +
        'narrow it with more terms',
    );
  }
  return observations;
}

async function runCandidates(session: ReadSession, runId: string): Promise<Found[]> {
  const run = (await session.runs([runId])).get(runId);
  return run === undefined ? [] : candidatesOfRun(session, run);
}

/**
 * A diskperf run, or each series of an iostat run (from its META, or its SERIES items when the META
 * has too many to hold).
 */
async function candidatesOfRun(session: ReadSession, run: RunCandidate): Promise<Found[]> {
  if (run.format === 'diskperf') return [diskperfFound(run)];
  if (run.format === 'fio') return [fioFound(run)];
  // The series in the META; a run of many series has them in its SERIES items.
  const series: SeriesMeans[] = seriesMeansOf(run) ?? (await seriesItems(session.store, run.runId, MAX_CANDIDATES + 1));
  if (series.length > MAX_CANDIDATES)
    throw new ReadLimitError(`run ${run.runId} has more than ${MAX_CANDIDATES} series; add a device term`);
  const about = descriptionOf(run);
  return series.map((s) => seriesFound(s, run, about));
}

/**
 * The selector without its context~ terms (and, for iostat entries, its device terms): what an
 * index entry can be checked on.
 */
const checkableOn = (selector: Selector, keep: (t: Term) => boolean): Selector => ({
  text: selector.text,
  terms: selector.terms.filter(keep),
});

/**
 * The runs carrying one tag (byTag), narrowed by what their entries tell (the
 * other tags, format, host, run id; a diskperf run's device is its label) before
 * their METAs are read: one Query and one BatchGet per 100 runs, whatever else
 * the table holds.
 */
async function tagCandidates(session: ReadSession, selector: Selector, tag: string): Promise<Found[]> {
  const entries = await tagEntries(session.store, tag, MAX_CANDIDATES + 1);
  if (entries.length > MAX_CANDIDATES)
    throw new ReadLimitError(`"${selector.text}" reaches more than ${MAX_CANDIDATES} runs; narrow it (device, run=ID)`);
  const checkable = (format: Format) =>
    checkableOn(selector, (t) => t.kind !== 'context' && (t.kind !== 'device' || format !== 'iostat'));
  const early = { diskperf: checkable('diskperf'), iostat: checkable('iostat'), fio: checkable('fio') };
  const survivors = entries.filter((e) => matches(early[e.format], candidateOf(e.label, e.format, e)));
  const runs = await session.runs(survivors.map((e) => e.runId));
  // No META: the run is half-written (or half-deleted) and must not count.
  const perRun = await mapLimit([...runs.values()], CONCURRENCY, (run) => candidatesOfRun(session, run));
  return perRun.flat();
}

/** The labels a device plan reads (module comment) and each one's byDevice entries, at most MAX_CANDIDATES in all. */
async function indexedEntries(
  session: ReadSession,
  selector: Selector,
  plan: LabelPlan,
): Promise<{ item: CandidateItem; label: string }[]> {
  const patterns = selector.terms.filter((t): t is Extract<Term, { kind: 'device' }> => t.kind === 'device');
  // An exact label whose own entries hold its runs (diskperf METAs, and iostat METAs filed under
  // their upload's label) needs nothing else: one Query. Otherwise (a series label, or iostat runs
  // stored before their METAs were indexed) its series labels are listed and read too.
  const own =
    plan.by === 'device' && patterns.every((p) => mayName(p, plan.exact)) ? await session.indexed(plan.exact) : [];
  const labels =
    plan.by !== 'device'
      ? await labelsOf(session, selector, plan, patterns)
      : own.some((i) => i.type === 'run')
        ? [plan.exact]
        : await labelAndSeries(session, selector, plan.exact, patterns);
  let total = 0;
  const perLabel = await mapLimit(labels, CONCURRENCY, async (label) => {
    const items = await session.indexed(label);
    total += items.length;
    if (total > MAX_CANDIDATES)
      throw new ReadLimitError(
        `"${selector.text}" reaches more than ${MAX_CANDIDATES} runs and series; narrow it (device, run=ID)`,
      );
    return items.map((item) => ({ item, label }));
  });
  return perLabel.flat();
}

async function deviceCandidates(session: ReadSession, selector: Selector, plan: LabelPlan): Promise<Found[]> {
  // Terms other than context~ are checked before the runs' METAs are read, so only survivors cost a read.
  const early = checkableOn(selector, (t) => t.kind !== 'context');
  const found: Found[] = [];
  const series: Extract<CandidateItem, { type: 'series' }>[] = [];
  const iostatRuns: IostatRunCandidate[] = [];
  for (const { item, label } of await indexedEntries(session, selector, plan)) {
    if (item.type === 'series') {
      if (
        selects(
          early,
          candidateOf(item.device, 'iostat', { runId: item.runId, host: item.host, tags: item.tags }),
          labelOfSeries(item),
        )
      )
        series.push(item);
    } else if (item.format === 'diskperf') found.push(diskperfFound(item));
    else if (item.format === 'fio') found.push(fioFound(item));
    // An iostat run under its upload's label: its series, when that label was named exactly (a
    // pattern reaches them through their own labels, listed beside it).
    else if (plan.by === 'device' && label === plan.exact) iostatRuns.push(item);
  }
  const heads = await session.runHeads(series.map((s) => s.runId));
  for (const s of series) {
    const head = heads.get(s.runId);
    // No META: the run is half-written (or half-deleted) and must not count.
    if (head) found.push(seriesFound(s, { ...head, tags: s.tags ?? head.tags }));
  }
  const fromRuns = await mapLimit(iostatRuns, CONCURRENCY, (run) => candidatesOfRun(session, run));
  return [...found, ...fromRuns.flat()];
}
