/**
 * The read side of the store: what the API answers from. Queries and key reads
 * only, never a Scan; every read is bounded by what the request names. The
 * paged listings (GET /devices, /runs, /uploads) are listings.ts; the query
 * helpers and the reads of one request, session.ts.
 *
 * - Runs by device: the byDevice index holds run META items (written last, so
 *   always complete: diskperf runs under their label, iostat runs under their
 *   upload's label, with their series' summaries) and iostat SERIES items under
 *   `<label>/<native>` (written before their run's META): a series counts only
 *   when its run's META exists, checked with one BatchGet of the distinct runs.
 *   Half-written runs are never visible.
 * - A selector (shared/selectors.ts) is resolved from its plan: one run, one
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
 *                     ones with their series); when they hold none (a series
 *                     label, or iostat runs stored before their METAs were
 *                     indexed) also the DEVICES page under LABEL/ and the
 *                     byDevice pages of each series label listed there
 *   tag.K=V (no run=  the byTag pages of that tag + ceil(runs whose entry passes
 *   or exact device)  the other terms / 100) BatchGets of their METAs
 *   device=PRE*       one DEVICES page of the labels under that prefix (begins_with:
 *                     the partition is sorted by label) + the byDevice pages of
 *                     each label matching the pattern
 *   otherwise         one DEVICES page of the first labels + the byDevice pages
 *                     of each label the device terms allow
 *   + for iostat      ceil(distinct runs of the series that pass every term but
 *                     context~ / 100) BatchGets of their META heads
 * Unrelated devices and runs add nothing, except to the DEVICES page of a
 * selector whose device pattern starts with a wildcard, or that has no device,
 * tag or run term (only host=, format=, context~): such a selector reads the
 * labels from the first. A DEVICES page reads at most MAX_LABELS + 1 labels: a
 * selector that would read more is a ReadLimitError (a 400) saying how to narrow
 * it (literal text before the first wildcard, a tag, run=ID), after one Query
 * whatever the table holds. Index entries read (MAX_CANDIDATES) and
 * observations (MAX_OBSERVATIONS) per selector are capped the same way.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { RunDetail, RunInfo, SeriesInfo } from '../api.ts';
import { diskperfColumnsObservation, diskperfObservation, iostatObservation, type Observation } from '../comparison/observations.ts';
import type { Format } from '../model.ts';
import { nativeInLabel } from '../labels.ts';
import { exactPattern, globMatches, matches, planSelector, termMatches, type Pattern, type Selector, type SelectorCandidate, type Term } from '../selectors.ts';
import { INDEXES } from '../table.ts';
import { DEVICES_PK, runPk, RUN_META_SK, tagKey } from './keys.ts';
import { runFacts, type LabelPlan } from './listings.ts';
import { diskperfRows, unpackRows, unpackSeriesMeans, type DeviceItem, type RunItem, type SeriesItem, type SeriesMeans } from './records.ts';
import {
  batchGetItems,
  CONCURRENCY,
  mapLimit,
  MAX_CANDIDATES,
  MAX_LABELS,
  projection,
  queryItems,
  ReadSession,
  seriesItems,
  TAG_ENTRY_ATTRIBUTES,
  type CandidateItem,
  type DiskperfCandidate,
  type IostatRunCandidate,
  type ReadStore,
  type RunCandidate,
  type RunHead,
  type TagEntry,
} from './session.ts';

export { listDevices, listRuns, listUploads, pageDevices, pageRuns, pageUploads, planLabels, type LabelPlan } from './listings.ts';
export { mapLimit, MAX_CANDIDATES, MAX_LABELS, ReadSession, type ReadStore } from './session.ts';

/** Observations one side of a comparison may hold. */
export const MAX_OBSERVATIONS = 1000;
/** SERIES items returned with one run (its META says how many there are: seriesCount). */
export const MAX_SERIES_IN_DETAIL = 1000;

/** A request reads more than the API allows: a 400 telling the caller to narrow it. */
export class ReadLimitError extends Error {
  override readonly name = 'ReadLimitError';
}

/** A run's META (undefined: no complete run). */
async function getRunMeta(store: ReadStore, runId: string): Promise<RunItem | undefined> {
  const meta = await store.db.send(new GetCommand({ TableName: store.tableName, Key: { pk: runPk(runId), sk: RUN_META_SK } }));
  return meta.Item as RunItem | undefined;
}

/** A complete run (its META) and its series; undefined when there is no META (unknown or half-written). */
export async function getRun(store: ReadStore, runId: string): Promise<RunDetail | undefined> {
  const run = await getRunMeta(store, runId);
  if (run === undefined) return undefined;
  if (run.format !== 'iostat') return { run: runInfo(run), series: [] };
  const mounts = new Map((run.series ?? []).flatMap((s) => (s.mount !== undefined ? [[s.native, s.mount] as const] : [])));
  const series = await seriesItems(store, runId, MAX_SERIES_IN_DETAIL);
  return { run: runInfo(run), series: series.map((s) => seriesInfo(s, mounts.get(s.native))) };
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
    platform: item.platform,
    dialect: item.dialect,
    startLine: item.startLine,
    endLine: item.endLine,
    warnings: item.warnings ?? [],
    ingestedAt: item.ingestedAt,
  };
  if (item.format === 'diskperf') return { ...facts, format: 'diskperf', meta: item.meta, columns: item.columns, rows: diskperfRows(item) };
  return { ...facts, format: 'iostat', meta: item.meta, columns: item.columns, reports: item.reports, seriesCount: item.seriesCount };
}

/** One SERIES item as RunDetail documents it (shared/api.ts SeriesInfo), field by field. */
function seriesInfo(item: SeriesItem, mount: string | undefined): SeriesInfo {
  return { device: item.device, native: item.native, ...(mount !== undefined ? { mount } : {}), sampleCount: item.sampleCount, summary: item.summary };
}

/**
 * The change stamps of these device labels (DeviceItem.changed), read strongly
 * consistent: one BatchGet per 100 labels, one read unit per label. A label that
 * is not listed (no complete run, or an upload that died before listing it, or
 * iostat runs stored before their upload's label was listed) has none.
 */
export async function labelStamps(store: ReadStore, labels: readonly string[]): Promise<Map<string, string | undefined>> {
  const items = await batchGetItems<Pick<DeviceItem, 'sk' | 'changed'>>(store, labels.map((label) => ({ pk: DEVICES_PK, sk: label })), ['sk', 'changed'], { consistent: true });
  const found = new Map(items.map((item) => [item.sk, item.changed]));
  return new Map(labels.map((label) => [label, found.get(label)]));
}

// ---------------------------------------------------------------- the labels a selector reads

/**
 * The labels a plan reaches that every pattern may name; a plan that would read
 * more than MAX_LABELS labels is a ReadLimitError saying how to narrow it.
 */
async function labelsOf(session: ReadSession, selector: Selector, plan: LabelPlan, patterns: readonly Pattern[]): Promise<string[]> {
  if (plan.by === 'device') return patterns.every((p) => globMatches(p.glob, plan.exact)) ? [plan.exact] : [];
  const listed = await session.labels(plan.by === 'devicePrefix' ? plan.prefix : '');
  if (!listed.complete) throw new ReadLimitError(narrowing(selector, plan));
  return listed.labels.filter((label) => patterns.every((p) => mayName(p, label)));
}

/**
 * What a selector's exact device label reads: the label itself, read whether or
 * not it is listed (an upload that died before listing its labels is still found
 * by exact device), and the labels listed under `label/`, its iostat series
 * (such an upload's series join it once a retry lists them); each only when
 * every device term may name it. The label's own entries are read while the
 * others are listed: a diskperf label costs one round trip, as before series
 * were looked for.
 */
async function labelAndSeries(session: ReadSession, selector: Selector, label: string, patterns: readonly Pattern[]): Promise<string[]> {
  if (patterns.every((p) => mayName(p, label))) {
    // Awaited by the caller; not an unhandled rejection should the listing fail first.
    session.indexed(label).catch(() => undefined);
  }
  const series = await session.labels(`${label}/`);
  if (!series.complete) throw new ReadLimitError(narrowing(selector, { by: 'device', exact: label }));
  return [label, ...series.labels].filter((l) => patterns.every((p) => mayName(p, l)));
}

/** How a selector that reaches too many labels can be narrowed, by what made it read them. */
function narrowing(selector: Selector, plan: LabelPlan): string {
  const what = `"${selector.text}"`;
  const others = 'or add tag.KEY=VALUE (the tag index finds its runs) or run=ID';
  if (plan.by === 'device') {
    const named = exactPattern(plan.exact);
    return `${what} has more than ${MAX_LABELS} series labels under "${plan.exact}/": name one (${named}/sda), or the ones starting alike (${named}/sd*), ${others}`;
  }
  if (plan.by === 'devicePrefix') {
    return `${what} reaches more than ${MAX_LABELS} device labels starting "${plan.prefix}": make the literal text before its first wildcard longer, ${others}`;
  }
  const hasDevice = selector.terms.some((t) => t.kind === 'device');
  return hasDevice
    ? `${what} starts its device pattern with a wildcard, so it would read every device label, and there are more than ${MAX_LABELS}: start the pattern with literal text (sas10k*, x4100/*), ${others}`
    : `${what} names no device, tag or run, so it would read every device label, and there are more than ${MAX_LABELS}: add a device pattern starting with literal text (sas10k*, x4100/*), ${others}`;
}

/** Whether a device term may name what a listed label holds: by pattern, or (an exact label) a series filed under it. */
const mayName = (p: Pattern, label: string) => globMatches(p.glob, label) || (p.exact !== undefined && label.startsWith(`${p.exact}/`));

// ---------------------------------------------------------------- selectors

/**
 * The observations a selector stands for: diskperf runs (rows per request size)
 * and iostat series (summary means) whose candidate matches every term.
 */
export async function resolveSelector(store: ReadStore, selector: Selector, session = new ReadSession(store)): Promise<Observation[]> {
  const plan = planSelector(selector);
  const found =
    plan.by === 'run' ? await runCandidates(session, plan.runId) : plan.by === 'tag' ? await tagCandidates(session, selector, tagKey(plan.key, plan.value)) : await deviceCandidates(session, selector, plan);
  const observations = found.filter((f) => selects(selector, f.candidate, f.label)).map((f) => f.observation());
  if (observations.length > MAX_OBSERVATIONS) {
    throw new ReadLimitError(`"${selector.text}" matches ${observations.length} runs and series, more than ${MAX_OBSERVATIONS}; narrow it with more terms`);
  }
  return observations;
}

interface Found {
  candidate: SelectorCandidate;
  /** An iostat series: the label of its upload, which an exact device term names too. */
  label?: string;
  observation: () => Observation;
}

/**
 * Whether a candidate matches every term, an exact device term naming the
 * label an iostat series is filed under as well as the series itself: `sas10k`
 * selects `sas10k/sda` and `sas10k/sdb`, not a diskperf run labelled `sas10k/x`.
 */
function selects(selector: Selector, candidate: SelectorCandidate, label: string | undefined): boolean {
  return selector.terms.every((t) => (t.kind === 'device' && t.exact !== undefined && t.exact === label) || termMatches(t, candidate));
}

/** The label an iostat series is filed under: its device is `<label>/<native>` (shared/labels.ts seriesLabel). */
/** The upload label of a series: its label less `/` and the device as labels.ts seriesLabel writes it. */
const labelOfSeries = (series: Pick<SeriesItem, 'device' | 'native'>) => series.device.slice(0, series.device.length - nativeInLabel(series.native).length - 1);

function diskperfFound(run: DiskperfCandidate): Found {
  const facts = { label: run.label, platform: run.platform, host: run.host, context: run.context, meta: run.meta };
  return {
    candidate: { device: run.label, runId: run.runId, ...(run.host !== undefined ? { host: run.host } : {}), format: 'diskperf', tags: run.tags ?? {}, context: run.context ?? [] },
    observation: () => {
      if (run.packedRows === undefined) return diskperfObservation(run.runId, run.label, run.rows ?? [], facts);
      const { sizes, columns } = unpackRows(run.packedRows);
      return diskperfColumnsObservation(run.runId, run.label, sizes, columns, facts);
    },
  };
}

function seriesFound(series: SeriesMeans, head: Pick<RunHead, 'runId' | 'label' | 'platform' | 'host' | 'tags' | 'context' | 'reports'>): Found {
  return {
    candidate: { device: series.device, runId: head.runId, ...(head.host !== undefined ? { host: head.host } : {}), format: 'iostat', tags: head.tags ?? {}, context: head.context ?? [] },
    label: head.label,
    observation: () =>
      iostatObservation(head.runId, series.device, series.summary, head.reports ?? 0, { label: head.label, native: series.native, platform: head.platform, host: head.host, context: head.context }),
  };
}

async function runCandidates(session: ReadSession, runId: string): Promise<Found[]> {
  const run = (await session.runs([runId])).get(runId);
  return run === undefined ? [] : candidatesOfRun(session, run);
}

/** A diskperf run, or each series of an iostat run (from its META, or its SERIES items when the META has too many to hold). */
async function candidatesOfRun(session: ReadSession, run: RunCandidate): Promise<Found[]> {
  if (run.format === 'diskperf') return [diskperfFound(run)];
  // The packed means in the META; a run of many series (or one stored before they were packed) has them in its SERIES items.
  const series: SeriesMeans[] =
    run.seriesMeans !== undefined ? unpackSeriesMeans(run.seriesMeans, run.label) : await seriesItems(session.store, run.runId, MAX_CANDIDATES + 1);
  if (series.length > MAX_CANDIDATES) throw new ReadLimitError(`run ${run.runId} has more than ${MAX_CANDIDATES} series; add a device term`);
  return series.map((s) => seriesFound(s, run));
}

/**
 * The runs carrying one tag (byTag), narrowed by what their entries tell (the
 * other tags, format, host, run id; a diskperf run's device is its label) before
 * their METAs are read: one Query and one BatchGet per 100 runs, whatever else
 * the table holds.
 */
async function tagCandidates(session: ReadSession, selector: Selector, tag: string): Promise<Found[]> {
  const entries = await queryItems<TagEntry>(
    session.store,
    { IndexName: INDEXES.byTag.name, KeyConditionExpression: 'gsi3pk = :pk', ExpressionAttributeValues: { ':pk': tag }, ...projection(TAG_ENTRY_ATTRIBUTES), ScanIndexForward: false },
    MAX_CANDIDATES + 1,
  ).catch((error: unknown) => {
    // A table made before the tag index (a local lab's data folder): say so in the log, not just "internal error".
    if ((error as { name?: string }).name === 'ValidationException' && /specified index/.test((error as Error).message)) {
      throw new Error(`table ${session.store.tableName} has no ${INDEXES.byTag.name} index (it was created before tag lookups existed): recreate it from shared/table.ts (the local lab: npm start -- --fresh)`, { cause: error });
    }
    throw error;
  });
  if (entries.length > MAX_CANDIDATES) throw new ReadLimitError(`"${selector.text}" reaches more than ${MAX_CANDIDATES} runs; narrow it (device, run=ID)`);
  const checkable = (format: Format): Selector => ({ text: selector.text, terms: selector.terms.filter((t) => t.kind !== 'context' && (t.kind !== 'device' || format === 'diskperf')) });
  const early = { diskperf: checkable('diskperf'), iostat: checkable('iostat') };
  const survivors = entries.filter((e) => matches(early[e.format], { device: e.label, runId: e.runId, ...(e.host !== undefined ? { host: e.host } : {}), format: e.format, tags: e.tags ?? {}, context: [] }));
  const runs = await session.runs(survivors.map((e) => e.runId));
  // No META: the run is half-written (or half-deleted) and must not count.
  const perRun = await mapLimit([...runs.values()], CONCURRENCY, (run) => candidatesOfRun(session, run));
  return perRun.flat();
}

async function deviceCandidates(session: ReadSession, selector: Selector, plan: LabelPlan): Promise<Found[]> {
  const patterns = selector.terms.filter((t): t is Extract<Term, { kind: 'device' }> => t.kind === 'device');
  const what = `"${selector.text}"`;
  // An exact label whose own entries hold its runs (diskperf METAs, and iostat METAs filed under
  // their upload's label) needs nothing else: one Query. Otherwise (a series label, or iostat runs
  // stored before their METAs were indexed) its series labels are listed and read too.
  const own = plan.by === 'device' && patterns.every((p) => mayName(p, plan.exact)) ? await session.indexed(plan.exact) : [];
  const labels =
    plan.by !== 'device' ? await labelsOf(session, selector, plan, patterns) : own.some((i) => i.type === 'run') ? [plan.exact] : await labelAndSeries(session, selector, plan.exact, patterns);
  let total = 0;
  const perLabel = await mapLimit(labels, CONCURRENCY, async (label) => {
    const items = await session.indexed(label);
    total += items.length;
    if (total > MAX_CANDIDATES) throw new ReadLimitError(`${what} reaches more than ${MAX_CANDIDATES} runs and series; narrow it (device, run=ID)`);
    return items.map((item) => ({ item, label }));
  });

  // Terms other than context~ are checked before the runs' METAs are read, so only survivors cost a read.
  const early: Selector = { text: selector.text, terms: selector.terms.filter((t: Term) => t.kind !== 'context') };
  const found: Found[] = [];
  const series: Extract<CandidateItem, { type: 'series' }>[] = [];
  const iostatRuns: IostatRunCandidate[] = [];
  for (const { item, label } of perLabel.flat()) {
    if (item.type === 'series') {
      if (selects(early, { device: item.device, runId: item.runId, ...(item.host !== undefined ? { host: item.host } : {}), format: 'iostat', tags: item.tags ?? {}, context: [] }, labelOfSeries(item))) series.push(item);
    } else if (item.format !== 'iostat') found.push(diskperfFound(item));
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
