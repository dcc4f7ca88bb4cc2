/**
 * The read side of the store: what the API answers from. Queries and key reads
 * only, never a Scan; every read is bounded by what the request names.
 *
 * - Devices: the DEVICES partition (one Query, paged).
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
 *                     indexed) also the DEVICES pages under LABEL/ and the
 *                     byDevice pages of each series label listed there
 *   tag.K=V (no run=  the byTag pages of that tag + ceil(runs whose entry passes
 *   or exact device)  the other terms / 100) BatchGets of their METAs
 *   device=PRE*       the DEVICES pages under that prefix + the byDevice pages of
 *                     each label matching the pattern
 *   otherwise         the DEVICES pages (one page holds thousands of labels) +
 *                     the byDevice pages of each label the device terms allow
 *   + for iostat      ceil(distinct runs of the series that pass every term but
 *                     context~ / 100) BatchGets of their META heads
 * Unrelated devices and runs add nothing, except to the DEVICES pages of a
 * selector whose device pattern starts with a wildcard; a selector with no
 * device, tag or run term (only host=, format=, context~) reads every label.
 * Labels (MAX_LABELS), index entries read (MAX_CANDIDATES) and observations
 * (MAX_OBSERVATIONS) per selector are capped: a ReadLimitError.
 *
 * GET /runs reads the labels its device pattern matches (an exact label: that
 * label alone, its diskperf runs, or an iostat upload's runs whole, one entry a
 * run; a pattern: an entry per diskperf run and per iostat series), at most `limit` entries of each (newest
 * first, merged), then one BatchGet per 100 iostat runs among the answer; a
 * label whose newest entries belong to runs still being written reads on.
 */
import { BatchGetCommand, GetCommand, QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { DeviceEntry, RunDetail, RunListing, UploadListing } from '../api.ts';
import { diskperfColumnsObservation, diskperfObservation, iostatObservation, type DiskperfSetupSource, type Observation } from '../comparison/observations.ts';
import type { Format } from '../model.ts';
import { globMatches, matches, planSelector, termMatches, type Selector, type SelectorCandidate, type Term } from '../selectors.ts';
import { INDEXES } from '../table.ts';
import { devicePk, DEVICES_PK, runPk, RUN_META_SK, seriesSk, tagKey } from './keys.ts';
import { runRecord, unpackRows, unpackSeriesMeans, type SeriesMeans, UPLOAD_STATUSES, type DeviceItem, type DiskperfRunItem, type IostatRunItem, type ObjectRef, type RunItem, type SeriesItem, type TagItem, type UploadRecord, type UploadStatus } from './records.ts';

export interface ReadStore {
  db: DynamoDBDocumentClient;
  tableName: string;
}

/** Device labels one selector (or one `device=` filter) may reach. */
export const MAX_LABELS = 1000;
/** Index entries one selector may read before its terms are checked. */
export const MAX_CANDIDATES = 10_000;
/** Observations one side of a comparison may hold. */
export const MAX_OBSERVATIONS = 1000;
/** SERIES items returned with one run (its META says how many there are: seriesCount). */
export const MAX_SERIES_IN_DETAIL = 1000;
/** byDevice queries in flight at once. */
const CONCURRENCY = 8;
const BATCH_GET_SIZE = 100;
const MAX_BATCH_ATTEMPTS = 8;

/** A request reads more than the API allows: a 400 telling the caller to narrow it. */
export class ReadLimitError extends Error {
  override readonly name = 'ReadLimitError';
}

/** What a byDevice entry is: a run's META (diskperf, or iostat under its upload's label) or an iostat series. */
type IndexedItem = DiskperfRunItem | IostatRunItem | SeriesItem;

/**
 * What a diskperf observation reads of its run's header: how it ran (the
 * comparability warnings compare it), not the machine, dates and unknown fields.
 */
const SETUP_ATTRIBUTES = ['meta.parameters', 'meta.fileSizeBytes', 'meta.testType', 'meta.requestSizes'] as const;
type StoredSetup = { meta?: DiskperfSetupSource };

/**
 * What a selector reads of a byDevice entry: what builds its observation and
 * the facts beside it, and what terms are checked on. A run's other metadata,
 * source and warnings stay behind: read units are the same, the answer and its
 * parsing smaller. One projection whatever the terms: a label both sides read
 * is read once.
 */
const CANDIDATE_ATTRIBUTES = ['type', 'format', 'runId', 'label', 'device', 'native', 'platform', 'host', 'tags', 'context', 'packedRows', 'rows', 'seriesMeans', 'seriesCount', 'reports', 'summary', ...SETUP_ATTRIBUTES];
type DiskperfCandidate = Pick<DiskperfRunItem, 'runId' | 'label' | 'platform' | 'host' | 'tags' | 'context' | 'packedRows' | 'rows'> & StoredSetup;
type IostatRunCandidate = Pick<IostatRunItem, 'type' | 'format' | 'runId' | 'label' | 'platform' | 'host' | 'tags' | 'context' | 'seriesMeans' | 'seriesCount' | 'reports'>;
type CandidateItem = (DiskperfCandidate & Pick<DiskperfRunItem, 'type' | 'format'>) | IostatRunCandidate | Pick<SeriesItem, 'type' | 'runId' | 'device' | 'native' | 'host' | 'tags' | 'summary'>;

/** What a selector reads of a run's META found by id or tag: matching, the observation, and an iostat run's series. */
const RUN_CANDIDATE_ATTRIBUTES = ['runId', 'format', 'label', 'platform', 'host', 'tags', 'context', 'packedRows', 'rows', 'seriesMeans', 'seriesCount', 'reports', ...SETUP_ATTRIBUTES] as const;
type RunCandidate =
  | (DiskperfCandidate & Pick<DiskperfRunItem, 'format'>)
  | Pick<IostatRunItem, 'runId' | 'format' | 'label' | 'platform' | 'host' | 'tags' | 'context' | 'seriesMeans' | 'seriesCount' | 'reports'>;

/** What a selector reads of a byTag entry: what it can check before the run is read. */
const TAG_ENTRY_ATTRIBUTES = ['runId', 'format', 'label', 'host', 'tags'] as const;
type TagEntry = Pick<TagItem, (typeof TAG_ENTRY_ATTRIBUTES)[number]>;

/**
 * A ProjectionExpression of these attributes, or nested ones (`meta.parameters`),
 * every name aliased (some are reserved words: `meta.parameters` is `#p0.#p1`).
 */
function projection(paths: readonly string[]): { ProjectionExpression: string; ExpressionAttributeNames: Record<string, string> } {
  const aliases = new Map<string, string>();
  const alias = (name: string) => {
    let a = aliases.get(name);
    if (a === undefined) aliases.set(name, (a = `#p${aliases.size}`));
    return a;
  };
  const ProjectionExpression = paths.map((path) => path.split('.').map(alias).join('.')).join(', ');
  return { ProjectionExpression, ExpressionAttributeNames: Object.fromEntries([...aliases].map(([name, a]) => [a, name])) };
}

/** The part of a run's META the readers need beside an iostat series. */
interface RunHead {
  runId: string;
  format: Format;
  platform: RunItem['platform'];
  label: string;
  name: string;
  host?: string;
  tags: Record<string, string>;
  context: string[];
  source: ObjectRef;
  time: string;
  reports?: number;
}

const HEAD_ATTRIBUTES = ['runId', 'format', 'platform', 'label', 'name', 'host', 'tags', 'context', 'source', 'time', 'reports'] as const;

// ---------------------------------------------------------------- low level

/** Every page of a query, or the first `max` items (more pages are read only while needed). */
async function queryItems<T>(store: ReadStore, input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>, max = Infinity): Promise<T[]> {
  const items: T[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.db.send(new QueryCommand({ ...input, TableName: store.tableName, ...(start ? { ExclusiveStartKey: start } : {}) }));
    items.push(...((page.Items ?? []) as T[]));
    start = page.LastEvaluatedKey;
  } while (start && items.length < max);
  return items.length > max ? items.slice(0, max) : items;
}

/** Items by key, these attributes of each (a key with no item is left out), in BatchGets of 100 with UnprocessedKeys retried. */
async function batchGetItems<T>(
  store: ReadStore,
  keys: readonly { pk: string; sk: string }[],
  attributes: readonly string[],
  options: { consistent?: boolean } = {},
): Promise<T[]> {
  const out: T[] = [];
  const { ProjectionExpression, ExpressionAttributeNames } = projection(attributes);
  for (let i = 0; i < keys.length; i += BATCH_GET_SIZE) {
    let batch: Record<string, unknown>[] = keys.slice(i, i + BATCH_GET_SIZE);
    for (let attempt = 1; batch.length > 0; attempt++) {
      const request = { Keys: batch, ProjectionExpression, ExpressionAttributeNames, ...(options.consistent ? { ConsistentRead: true } : {}) };
      const result = await store.db.send(new BatchGetCommand({ RequestItems: { [store.tableName]: request } }));
      out.push(...((result.Responses?.[store.tableName] ?? []) as T[]));
      batch = (result.UnprocessedKeys?.[store.tableName]?.Keys ?? []) as Record<string, unknown>[];
      if (batch.length === 0) break;
      if (attempt >= MAX_BATCH_ATTEMPTS) throw new Error(`DynamoDB left ${batch.length} keys unprocessed after ${MAX_BATCH_ATTEMPTS} attempts (throttled)`);
      await new Promise((r) => setTimeout(r, Math.min(2000, 25 * 2 ** attempt) * (0.5 + Math.random())));
    }
  }
  return out;
}

/** Run METAs by id, these attributes of each (absent: no META, so no complete run). */
async function batchGetMetas<T extends { runId: string }>(store: ReadStore, runIds: readonly string[], attributes: readonly string[]): Promise<Map<string, T>> {
  const items = await batchGetItems<T>(store, runIds.map((id) => ({ pk: runPk(id), sk: RUN_META_SK })), attributes);
  return new Map(items.map((item) => [item.runId, item]));
}

/** A run's META (undefined: no complete run). */
async function getRunMeta(store: ReadStore, runId: string): Promise<RunItem | undefined> {
  const meta = await store.db.send(new GetCommand({ TableName: store.tableName, Key: { pk: runPk(runId), sk: RUN_META_SK } }));
  return meta.Item as RunItem | undefined;
}

/** The SERIES items of an iostat run, at most `max`. */
function seriesItems(store: ReadStore, runId: string, max: number): Promise<SeriesItem[]> {
  return queryItems<SeriesItem>(store, { KeyConditionExpression: 'pk = :pk AND begins_with(sk, :series)', ExpressionAttributeValues: { ':pk': runPk(runId), ':series': seriesSk('') } }, max);
}

/** fn over items, `limit` at a time; after a failure no new item is started. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * The reads of one request, remembered: a run or a label both sides of a
 * comparison read is read once. Not shared between requests (data changes).
 */
export class ReadSession {
  /** By prefix. */
  private readonly labelLists = new Map<string, Promise<string[]>>();
  private readonly byDevice = new Map<string, Promise<CandidateItem[]>>();
  private readonly heads = new Map<string, Promise<RunHead | undefined>>();
  private readonly candidates = new Map<string, Promise<RunCandidate | undefined>>();

  constructor(readonly store: ReadStore) {}

  /**
   * Device labels starting with `prefix` ('' for all), in label order: one Query
   * of DEVICES, or none when a shorter prefix was listed already (`x4100*` on one
   * side holds the `x4100/` series the other side's `x4100` reads).
   */
  labels(prefix: string): Promise<string[]> {
    let list = this.labelLists.get(prefix);
    if (list === undefined) {
      const wider = [...this.labelLists].find(([listed]) => prefix.startsWith(listed));
      list = wider
        ? wider[1].then((labels) => labels.filter((label) => label.startsWith(prefix)))
        : queryItems<{ sk: string }>(this.store, {
            KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
            ExpressionAttributeValues: { ':pk': DEVICES_PK, ...(prefix ? { ':prefix': prefix } : {}) },
            ProjectionExpression: 'sk',
          }).then((items) => items.map((i) => i.sk));
      this.labelLists.set(prefix, list);
    }
    return list;
  }

  /** Every byDevice entry of a label (at most MAX_CANDIDATES + 1: more is an error for the caller). */
  indexed(label: string): Promise<CandidateItem[]> {
    let items = this.byDevice.get(label);
    if (items === undefined) {
      items = queryItems<CandidateItem>(
        this.store,
        { IndexName: INDEXES.byDevice.name, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': devicePk(label) }, ...projection(CANDIDATE_ATTRIBUTES), ScanIndexForward: false },
        MAX_CANDIDATES + 1,
      );
      this.byDevice.set(label, items);
    }
    return items;
  }

  /** Run heads (META exists) of these runs; one BatchGet per 100 runs not read yet. */
  runHeads(runIds: Iterable<string>): Promise<Map<string, RunHead>> {
    return this.metas(this.heads, runIds, HEAD_ATTRIBUTES);
  }

  /** What a selector needs of these runs' METAs (absent: no complete run); one BatchGet per 100 runs not read yet. */
  runs(runIds: Iterable<string>): Promise<Map<string, RunCandidate>> {
    return this.metas(this.candidates, runIds, RUN_CANDIDATE_ATTRIBUTES);
  }

  private async metas<T extends { runId: string }>(cache: Map<string, Promise<T | undefined>>, runIds: Iterable<string>, attributes: readonly string[]): Promise<Map<string, T>> {
    const wanted = [...new Set(runIds)];
    const missing = wanted.filter((id) => !cache.has(id));
    if (missing.length > 0) {
      const batch = batchGetMetas<T>(this.store, missing, attributes);
      for (const id of missing) {
        const meta = batch.then((found) => found.get(id));
        // Awaited below one by one: the others must not be unhandled rejections when the read fails.
        meta.catch(() => undefined);
        cache.set(id, meta);
      }
    }
    const out = new Map<string, T>();
    for (const id of wanted) {
      const meta = await cache.get(id)!;
      if (meta) out.set(id, meta);
    }
    return out;
  }
}

// ---------------------------------------------------------------- devices

export async function listDevices(store: ReadStore): Promise<DeviceEntry[]> {
  const items = await queryItems<{ sk: string; label?: string; format?: string; lastSeen?: string }>(store, {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': DEVICES_PK },
  });
  return items.map((i) => ({ label: i.label ?? i.sk, format: i.format ?? 'unknown', lastSeen: i.lastSeen ?? '' }));
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

/** Where a device pattern's labels are: itself, under its literal prefix, or anywhere. */
export type LabelPlan = { by: 'device'; exact: string } | { by: 'devicePrefix'; prefix: string } | { by: 'allDevices' };

export function planLabels(glob: string | undefined): LabelPlan {
  if (glob === undefined) return { by: 'allDevices' };
  const wildcard = glob.search(/[*?]/);
  if (wildcard === -1) return { by: 'device', exact: glob };
  if (wildcard > 0) return { by: 'devicePrefix', prefix: glob.slice(0, wildcard) };
  return { by: 'allDevices' };
}

/** The labels a plan reaches that every pattern may name; more than MAX_LABELS is a ReadLimitError. */
async function labelsOf(session: ReadSession, plan: LabelPlan, globs: readonly string[], what: string): Promise<string[]> {
  if (plan.by === 'device') return globs.every((g) => globMatches(g, plan.exact)) ? [plan.exact] : [];
  const all = await session.labels(plan.by === 'devicePrefix' ? plan.prefix : '');
  return capped(
    all.filter((label) => globs.every((g) => mayName(g, label))),
    what,
  );
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
async function labelAndSeries(session: ReadSession, label: string, globs: readonly string[], what: string): Promise<string[]> {
  if (globs.every((g) => mayName(g, label))) {
    // Awaited by the caller; not an unhandled rejection should the listing fail first.
    session.indexed(label).catch(() => undefined);
  }
  const series = await session.labels(`${label}/`);
  return capped(
    [label, ...series].filter((l) => globs.every((g) => mayName(g, l))),
    what,
  );
}

function capped(labels: string[], what: string): string[] {
  if (labels.length > MAX_LABELS) throw new ReadLimitError(`${what} matches ${labels.length} device labels, more than ${MAX_LABELS}; narrow it (a longer literal prefix, or run=ID)`);
  return labels;
}

/** Whether a device term may name what a listed label holds: by pattern, or (the term as a label) a series filed under it. */
const mayName = (glob: string, label: string) => globMatches(glob, label) || label.startsWith(`${glob}/`);

// ---------------------------------------------------------------- runs

export interface ListRunsOptions {
  device?: string;
  format?: Format;
  limit: number;
}

/**
 * Runs of the devices a pattern matches, newest first: one entry per diskperf
 * run and per iostat series (what a selector matches), at most `limit`.
 *
 * An iostat series counts only when its run's META exists, and the newest
 * entries of a label may well be those of a run still being written: they must
 * not take the place of older complete runs. So a label whose page lost entries
 * that way, and whose next page could still make the list, is read on (all such
 * labels together, a page each per round). Usually there is one round.
 */
export async function listRuns(store: ReadStore, options: ListRunsOptions): Promise<RunListing[]> {
  const session = new ReadSession(store);
  const globs = options.device !== undefined ? [options.device] : [];
  const plan = planLabels(options.device);
  const labels = await labelsOf(session, plan, globs, `device "${options.device ?? '*'}"`);
  const page = (label: string, start: Record<string, unknown> | undefined) =>
    store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        IndexName: INDEXES.byDevice.name,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': devicePk(label), ...(options.format ? { ':format': options.format } : {}) },
        // A listing needs neither rows nor summaries.
        ProjectionExpression: LISTING_ATTRIBUTES.map((_, i) => `#l${i}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(LISTING_ATTRIBUTES.map((a, i) => [`#l${i}`, a])),
        ...(options.format ? { FilterExpression: '#l3 = :format' } : {}),
        ScanIndexForward: false,
        Limit: options.limit,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
  const read = new Map<string, { items: IndexedItem[]; next?: Record<string, unknown> }>();
  /** Runs whose series showed up without a META. */
  const incomplete = new Set<string>();
  // An entry per diskperf run and per iostat series (what a selector matches); an exact upload label
  // also lists its iostat runs (their METAs are indexed under it), which a pattern reaches as series.
  const exact = plan.by === 'device';
  const usable = (item: IndexedItem) => (item.type === 'run' ? item.format === 'diskperf' || exact : !incomplete.has(item.runId));
  let toRead: { label: string; start?: Record<string, unknown> }[] = labels.map((label) => ({ label }));
  let top: IndexedItem[] = [];
  while (toRead.length > 0) {
    const pages = await mapLimit(toRead, CONCURRENCY, async ({ label, start }) => ({ label, result: await page(label, start) }));
    for (const { label, result } of pages) {
      const entry = read.get(label) ?? { items: [] };
      entry.items.push(...((result.Items ?? []) as IndexedItem[]));
      entry.next = result.LastEvaluatedKey;
      read.set(label, entry);
    }
    // The newest `limit` usable entries, their runs' METAs checked (each run once per request).
    for (;;) {
      top = [...read.values()].flatMap((e) => e.items.filter(usable)).sort(newestFirst).slice(0, options.limit);
      const heads = await session.runHeads(top.filter((i) => i.type === 'series').map((i) => i.runId));
      const missing = top.filter((i) => i.type === 'series' && !heads.has(i.runId));
      if (missing.length === 0) break;
      for (const item of missing) incomplete.add(item.runId);
    }
    // A label's unread entries are older than its read ones: needed only if it holds fewer than
    // `limit` usable entries and its oldest read one still makes the list.
    const last = top.length === options.limit ? top[top.length - 1] : undefined;
    toRead = [];
    for (const [label, entry] of read) {
      const oldest = entry.items[entry.items.length - 1];
      if (entry.next && entry.items.filter(usable).length < options.limit && (last === undefined || oldest === undefined || newestFirst(oldest, last) <= 0)) {
        toRead.push({ label, start: entry.next });
      }
    }
  }
  const heads = await session.runHeads(top.filter((i) => i.type === 'series').map((i) => i.runId));
  return top.map((item) => (item.type === 'run' ? listing(item, item.label, item.time) : listing(heads.get(item.runId)!, item.device, item.time)));
}

/** Index entries newest first (then by device): the order of GET /runs. */
const newestFirst = (x: IndexedItem, y: IndexedItem) => compareText(y.gsi1sk ?? '', x.gsi1sk ?? '') || deviceOf(x).localeCompare(deviceOf(y));
const compareText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

/** What a listing reads of an index entry (#l3 is format, used by the filter). */
const LISTING_ATTRIBUTES = ['type', 'runId', 'label', 'format', 'device', 'name', 'host', 'tags', 'context', 'source', 'time', 'gsi1sk'] as const;

const deviceOf = (item: IndexedItem) => (item.type === 'run' ? item.label : item.device);

function listing(run: RunHead | DiskperfRunItem, device: string, time: string): RunListing {
  return {
    runId: run.runId,
    device,
    format: run.format,
    name: run.name,
    ...(run.host !== undefined ? { host: run.host } : {}),
    time,
    tags: run.tags ?? {},
    context: run.context ?? [],
    source: { bucket: run.source.bucket, key: run.source.key, version: run.source.version },
  };
}

/** A complete run (its META) and its series; undefined when there is no META (unknown or half-written). */
export async function getRun(store: ReadStore, runId: string): Promise<RunDetail | undefined> {
  const run = await getRunMeta(store, runId);
  if (run === undefined) return undefined;
  if (run.format !== 'iostat') return { run: runRecord(run), series: [] };
  return { run, series: await seriesItems(store, runId, MAX_SERIES_IN_DETAIL) };
}

// ---------------------------------------------------------------- uploads

export interface ListUploadsOptions {
  status?: UploadStatus;
  limit: number;
}

/** Upload records, most recently updated first; without a status, every status merged. */
export async function listUploads(store: ReadStore, options: ListUploadsOptions): Promise<UploadListing[]> {
  const statuses = options.status ? [options.status] : [...UPLOAD_STATUSES];
  const perStatus = await Promise.all(
    statuses.map((status) =>
      queryItems<UploadRecord>(
        store,
        { IndexName: INDEXES.byStatus.name, KeyConditionExpression: 'gsi2pk = :pk', ExpressionAttributeValues: { ':pk': `STATUS#${status}` }, ScanIndexForward: false, Limit: options.limit },
        options.limit,
      ),
    ),
  );
  return perStatus
    .flat()
    .sort((x, y) => (x.gsi2sk < y.gsi2sk ? 1 : x.gsi2sk > y.gsi2sk ? -1 : 0))
    .slice(0, options.limit)
    .map((r) => ({
      bucket: r.bucket,
      key: r.key,
      version: r.version,
      status: r.status,
      runCount: r.runCount ?? 0,
      runIds: r.runIds ?? [],
      ...(r.message !== undefined ? { message: r.message } : {}),
      ...(r.line !== undefined ? { line: r.line } : {}),
      ...(r.device !== undefined ? { device: r.device } : {}),
      ...(r.format !== undefined ? { format: r.format } : {}),
      updatedAt: r.updatedAt,
    }));
}

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
  return selector.terms.every((t) => (t.kind === 'device' && t.glob === label) || termMatches(t, candidate));
}

/** The label an iostat series is filed under: its device is `<label>/<native>` (shared/labels.ts seriesLabel). */
const labelOfSeries = (series: Pick<SeriesItem, 'device' | 'native'>) => series.device.slice(0, series.device.length - series.native.length - 1);

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
  const globs = selector.terms.flatMap((t) => (t.kind === 'device' ? [t.glob] : []));
  const what = `"${selector.text}"`;
  // An exact label whose own entries hold its runs (diskperf METAs, and iostat METAs filed under
  // their upload's label) needs nothing else: one Query. Otherwise (a series label, or iostat runs
  // stored before their METAs were indexed) its series labels are listed and read too.
  const own = plan.by === 'device' && globs.every((g) => mayName(g, plan.exact)) ? await session.indexed(plan.exact) : [];
  const labels = plan.by !== 'device' ? await labelsOf(session, plan, globs, what) : own.some((i) => i.type === 'run') ? [plan.exact] : await labelAndSeries(session, plan.exact, globs, what);
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
