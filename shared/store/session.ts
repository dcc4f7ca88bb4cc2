/**
 * ReadSession, the reads of one request remembered (a run or a label both sides
 * of a comparison read is read once), and what readers read of each item: the
 * projections and the item parts they give. The readers are the use cases
 * (shared/compare/, shared/listings/); reads.ts holds the store's other reads.
 */
import { uploadLabelsOf } from '../labels.ts';
import type { DiskperfMeta, FioMeta, Format } from '../model.ts';
import { INDEXES } from './table.ts';
import { devicePk, DEVICES_PK } from './keys.ts';
import type { DiskperfRunItem, FioRunItem, IostatRunItem, ObjectRef, RunItem, SeriesItem, TagItem } from './items.ts';
import { storedSeriesOf } from './packing.ts';
import { batchGetMetas, projection, queryItems } from './queries.ts';
import type { ReadStore } from './store.ts';

/** Device labels one selector may read (the DEVICES entries it lists, or the labels it reads). */
export const MAX_LABELS = 1000;
/** Index entries one selector may read before its terms are checked. */
export const MAX_CANDIDATES = 10_000;
/** Reads in flight at once for one request (byDevice queries, series reads). */
export const CONCURRENCY = 8;

/** What a byDevice entry is: a run's META (diskperf, or iostat under its upload's label) or an iostat series. */
export type IndexedItem = DiskperfRunItem | IostatRunItem | FioRunItem | SeriesItem;

/**
 * What a diskperf observation reads of its run's header: how it ran (the
 * comparability warnings compare it), not the machine, dates and unknown fields.
 */
const SETUP_ATTRIBUTES = [
  'meta.parameters',
  'meta.fileSizeBytes',
  'meta.testType',
  'meta.requestSizes',
  // A fio run's: the options its jobs ran with.
  'meta.options',
] as const;
export type StoredSetup = {
  meta?: Pick<DiskperfMeta, 'parameters' | 'fileSizeBytes' | 'testType' | 'requestSizes'> &
    Pick<FioMeta, 'options' | 'version'>;
};

/**
 * What a comparison shows of a run beside its figures (its setups side by side):
 * the OS as the log prints it, the samples' times, the iostat command line and
 * the uploaded object's size. A few small attributes of the META read anyway.
 */
const DESCRIPTION_ATTRIBUTES = [
  'from',
  'to',
  'source.size',
  'meta.os',
  'meta.osRelease',
  'meta.kernel',
  'meta.command',
  // The fio that ran a fio output (`fio-3.33`): its setup's `fio`, as its version differs between runs.
  'meta.version',
] as const;
export interface StoredDescription {
  from?: string;
  to?: string;
  source?: { size?: number };
  meta?: { os?: string; osRelease?: string; kernel?: string; command?: string; version?: string };
}

/**
 * What a selector reads of a byDevice entry: what builds its observation and
 * the facts beside it, and what terms are checked on. A run's other metadata,
 * source and warnings stay behind: read units are the same, the answer and its
 * parsing smaller. One projection whatever the terms: a label both sides read
 * is read once.
 */
export const CANDIDATE_ATTRIBUTES = [
  'type',
  'format',
  'runId',
  'label',
  'device',
  'native',
  'platform',
  'host',
  'tags',
  'context',
  'packedRows',
  'rows',
  'points',
  'seriesMeans',
  'packedSeries',
  'seriesCount',
  'reports',
  'summary',
  // An iostat META's head too: the series it holds need no second read of it (RunHead).
  'name',
  'time',
  ...SETUP_ATTRIBUTES,
  ...DESCRIPTION_ATTRIBUTES.map((a) => (a === 'source.size' ? 'source' : a)),
];
export type DiskperfCandidate = Pick<
  DiskperfRunItem,
  'runId' | 'label' | 'platform' | 'host' | 'tags' | 'context' | 'packedRows' | 'rows'
> &
  StoredSetup &
  StoredDescription;
export type FioCandidate = Pick<FioRunItem, 'runId' | 'label' | 'host' | 'tags' | 'context' | 'points'> &
  StoredSetup &
  StoredDescription;
export type IostatRunCandidate = Pick<
  IostatRunItem,
  | 'type'
  | 'format'
  | 'runId'
  | 'label'
  | 'platform'
  | 'host'
  | 'tags'
  | 'context'
  | 'seriesMeans'
  | 'packedSeries'
  | 'seriesCount'
  | 'reports'
  | 'name'
  | 'time'
> &
  StoredDescription & { source?: ObjectRef };
export type SeriesCandidate = Pick<SeriesItem, 'type' | 'runId' | 'device' | 'native' | 'host' | 'tags' | 'summary'>;
export type CandidateItem =
  | (DiskperfCandidate & Pick<DiskperfRunItem, 'type' | 'format'>)
  | (FioCandidate & Pick<FioRunItem, 'type' | 'format'>)
  | IostatRunCandidate
  | SeriesCandidate;

/** What a selector reads of a run's META found by id or tag: matching, the observation, and an iostat run's series. */
export const RUN_CANDIDATE_ATTRIBUTES = [
  'runId',
  'format',
  'label',
  'platform',
  'host',
  'tags',
  'context',
  'packedRows',
  'rows',
  'points',
  'seriesMeans',
  'packedSeries',
  'seriesCount',
  'reports',
  ...SETUP_ATTRIBUTES,
  ...DESCRIPTION_ATTRIBUTES,
] as const;
export type RunCandidate =
  | (DiskperfCandidate & Pick<DiskperfRunItem, 'format'>)
  | (FioCandidate & Pick<FioRunItem, 'format'>)
  | (Pick<
      IostatRunItem,
      | 'runId'
      | 'format'
      | 'label'
      | 'platform'
      | 'host'
      | 'tags'
      | 'context'
      | 'seriesMeans'
      | 'packedSeries'
      | 'seriesCount'
      | 'reports'
    > &
      StoredDescription);

/** What a selector reads of a byTag entry: what it can check before the run is read. */
export const TAG_ENTRY_ATTRIBUTES = ['runId', 'format', 'label', 'host', 'tags'] as const;
export type TagEntry = Pick<TagItem, (typeof TAG_ENTRY_ATTRIBUTES)[number]>;

/** The part of a run's META the readers need beside an iostat series. */
export interface RunHead {
  runId: string;
  format: Format;
  platform?: RunItem['platform'];
  label: string;
  name: string;
  host?: string;
  tags: Record<string, string>;
  context: string[];
  source: ObjectRef;
  time: string;
  /** The samples' time range (RunItemBase.from/to): listings show it beside a series. */
  from?: string;
  to?: string;
  reports?: number;
  /** The OS and iostat command line, for a comparison's setups. */
  meta?: StoredDescription['meta'];
}

export const HEAD_ATTRIBUTES = [
  'runId',
  'format',
  'platform',
  'label',
  'name',
  'host',
  'tags',
  'context',
  'source',
  'time',
  'from',
  'to',
  'reports',
  'meta.os',
  'meta.osRelease',
  'meta.kernel',
  'meta.command',
] as const;

/**
 * The reads of one request, remembered: a run or a label both sides of a
 * comparison read is read once. Not shared between requests (data changes).
 */
export class ReadSession {
  /** By prefix. */
  private readonly labelLists = new Map<string, Promise<LabelList>>();
  private readonly byDevice = new Map<string, Promise<CandidateItem[]>>();
  private readonly withFiled = new Map<string, Promise<CandidateItem[]>>();
  private readonly filed = new Map<string, Promise<Map<string, SeriesCandidate[]>>>();
  private readonly heads = new Map<string, Promise<RunHead | undefined>>();
  private readonly candidates = new Map<string, Promise<RunCandidate | undefined>>();

  constructor(readonly store: ReadStore) {}

  /**
   * Device labels starting with `prefix` ('' for all), in label order, at most
   * MAX_LABELS + 1 of them (`complete` false: there are more than MAX_LABELS).
   * One Query of DEVICES, or none when a shorter prefix was listed whole already
   * (`x4100*` on one side holds the `x4100/` series the other side's `x4100` reads).
   */
  labels(prefix: string): Promise<LabelList> {
    let list = this.labelLists.get(prefix);
    if (list === undefined) {
      const wider = [...this.labelLists].find(([listed]) => prefix.startsWith(listed));
      list = wider
        ? wider[1].then((w) =>
            w.complete
              ? { labels: w.labels.filter((label) => label.startsWith(prefix)), complete: true }
              : listLabels(this.store, prefix),
          )
        : listLabels(this.store, prefix);
      this.labelLists.set(prefix, list);
    }
    return list;
  }

  /**
   * Every byDevice entry of a label (at most MAX_CANDIDATES + 1: more is an error for the caller)
   * and, for a series label, the series its upload label's runs hold in their METAs (they have no
   * entries of their own), as series entries.
   */
  indexed(label: string): Promise<CandidateItem[]> {
    let items = this.withFiled.get(label);
    if (items === undefined) {
      const uploads = uploadLabelsOf(label);
      items = Promise.all([this.entries(label), ...uploads.map((u) => this.filedSeries(u))]).then(([own, ...filed]) => {
        const indexed = new Set(own!.flatMap((i) => (i.type === 'series' ? [i.runId] : [])));
        const more = filed.flatMap((byLabel) => (byLabel as Map<string, SeriesCandidate[]>).get(label) ?? []);
        return [...own!, ...more.filter((s) => !indexed.has(s.runId))] as CandidateItem[];
      });
      this.withFiled.set(label, items);
    }
    return items;
  }

  /** The series the METAs under an upload label hold, by series label: read once per request. */
  private filedSeries(label: string): Promise<Map<string, SeriesCandidate[]>> {
    let filed = this.filed.get(label);
    if (filed === undefined) {
      filed = this.entries(label).then((items) => {
        const byLabel = new Map<string, SeriesCandidate[]>();
        for (const item of items) {
          if (item.type !== 'run' || item.format !== 'iostat' || item.packedSeries === undefined) continue;
          const head = headOf(item);
          if (head !== undefined && !this.heads.has(item.runId)) this.heads.set(item.runId, Promise.resolve(head));
          for (const s of storedSeriesOf(item) ?? []) {
            const entry: SeriesCandidate = {
              type: 'series',
              runId: item.runId,
              device: s.device,
              native: s.native,
              ...(item.host !== undefined ? { host: item.host } : {}),
              tags: item.tags,
              summary: s.summary,
            };
            byLabel.set(s.device, [...(byLabel.get(s.device) ?? []), entry]);
          }
        }
        return byLabel;
      });
      this.filed.set(label, filed);
    }
    return filed;
  }

  /** A label's own byDevice entries. */
  private entries(label: string): Promise<CandidateItem[]> {
    let items = this.byDevice.get(label);
    if (items === undefined) {
      items = queryItems<CandidateItem>(
        this.store,
        {
          IndexName: INDEXES.byDevice.name,
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': devicePk(label) },
          ...projection(CANDIDATE_ATTRIBUTES),
          ScanIndexForward: false,
        },
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

  private async metas<T extends { runId: string }>(
    cache: Map<string, Promise<T | undefined>>,
    runIds: Iterable<string>,
    attributes: readonly string[],
  ): Promise<Map<string, T>> {
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

/** The head of an iostat run read as a candidate, when the read held all of it. */
function headOf(run: IostatRunCandidate): RunHead | undefined {
  if (run.name === undefined || run.time === undefined || run.source?.key === undefined) return undefined;
  const head: RunHead = {
    runId: run.runId,
    format: run.format,
    platform: run.platform,
    label: run.label,
    name: run.name,
    tags: run.tags,
    context: run.context,
    source: run.source,
    time: run.time,
    ...(run.host !== undefined ? { host: run.host } : {}),
    ...(run.from !== undefined ? { from: run.from } : {}),
    ...(run.to !== undefined ? { to: run.to } : {}),
    ...(run.reports !== undefined ? { reports: run.reports } : {}),
    ...(run.meta !== undefined ? { meta: run.meta } : {}),
  };
  return head;
}

/** Labels under a prefix, and whether they are all of them (at most MAX_LABELS). */
export interface LabelList {
  labels: string[];
  complete: boolean;
}

/** At most MAX_LABELS + 1 labels of DEVICES under `prefix`, in label order: the one more says there are too many. */
async function listLabels(store: ReadStore, prefix: string): Promise<LabelList> {
  const items = await queryItems<{ sk: string }>(
    store,
    {
      KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
      ExpressionAttributeValues: { ':pk': DEVICES_PK, ...(prefix ? { ':prefix': prefix } : {}) },
      ProjectionExpression: 'sk',
      Limit: MAX_LABELS + 1,
    },
    MAX_LABELS + 1,
  );
  return { labels: items.map((i) => i.sk), complete: items.length <= MAX_LABELS };
}
