/**
 * ReadSession, the reads of one request remembered (a run or a label both sides
 * of a comparison read is read once), and what readers read of each item: the
 * projections and the item parts they give. The readers are the use cases
 * (shared/compare/, shared/listings/); reads.ts holds the store's other reads.
 */
import type { DiskperfMeta, Format } from '../model.ts';
import { INDEXES } from './table.ts';
import { devicePk, DEVICES_PK } from './keys.ts';
import type { DiskperfRunItem, IostatRunItem, ObjectRef, RunItem, SeriesItem, TagItem } from './items.ts';
import { batchGetMetas, projection, queryItems } from './queries.ts';
import type { ReadStore } from './store.ts';

/** Device labels one selector may read (the DEVICES entries it lists, or the labels it reads). */
export const MAX_LABELS = 1000;
/** Index entries one selector may read before its terms are checked. */
export const MAX_CANDIDATES = 10_000;
/** Reads in flight at once for one request (byDevice queries, series reads). */
export const CONCURRENCY = 8;

/** What a byDevice entry is: a run's META (diskperf, or iostat under its upload's label) or an iostat series. */
export type IndexedItem = DiskperfRunItem | IostatRunItem | SeriesItem;

/**
 * What a diskperf observation reads of its run's header: how it ran (the
 * comparability warnings compare it), not the machine, dates and unknown fields.
 */
const SETUP_ATTRIBUTES = ['meta.parameters', 'meta.fileSizeBytes', 'meta.testType', 'meta.requestSizes'] as const;
export type StoredSetup = { meta?: Pick<DiskperfMeta, 'parameters' | 'fileSizeBytes' | 'testType' | 'requestSizes'> };

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
] as const;
export interface StoredDescription {
  from?: string;
  to?: string;
  source?: { size?: number };
  meta?: { os?: string; osRelease?: string; kernel?: string; command?: string };
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
  'seriesMeans',
  'seriesCount',
  'reports',
  'summary',
  ...SETUP_ATTRIBUTES,
  ...DESCRIPTION_ATTRIBUTES,
];
export type DiskperfCandidate = Pick<
  DiskperfRunItem,
  'runId' | 'label' | 'platform' | 'host' | 'tags' | 'context' | 'packedRows' | 'rows'
> &
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
  | 'seriesCount'
  | 'reports'
> &
  StoredDescription;
export type CandidateItem =
  | (DiskperfCandidate & Pick<DiskperfRunItem, 'type' | 'format'>)
  | IostatRunCandidate
  | Pick<SeriesItem, 'type' | 'runId' | 'device' | 'native' | 'host' | 'tags' | 'summary'>;

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
  'seriesMeans',
  'seriesCount',
  'reports',
  ...SETUP_ATTRIBUTES,
  ...DESCRIPTION_ATTRIBUTES,
] as const;
export type RunCandidate =
  | (DiskperfCandidate & Pick<DiskperfRunItem, 'format'>)
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
  platform: RunItem['platform'];
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

  /** Every byDevice entry of a label (at most MAX_CANDIDATES + 1: more is an error for the caller). */
  indexed(label: string): Promise<CandidateItem[]> {
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
