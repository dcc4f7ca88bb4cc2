/**
 * The store's reads by key and by index, in its own item types: a run's META
 * and SERIES items, the change stamps of labels, the runs carrying a tag, and
 * the pages the listings are made of (DEVICES labels, byStatus records,
 * byDevice entries). Queries and key reads only, never a Scan; each is bounded
 * by its caller's limit. What they mean to a request (selectors, pages,
 * cursors, API shapes) is the use cases' (shared/compare/, shared/listings/).
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Format } from '../model.ts';
import { INDEXES } from './table.ts';
import { devicePk, DEVICES_PK, runPk, RUN_META_SK, seriesSk } from './keys.ts';
import type { DeviceItem, RunItem, SeriesItem, UploadRecord } from './items.ts';
import { batchGetItems, projection, queryItems } from './queries.ts';
import { TAG_ENTRY_ATTRIBUTES, type IndexedItem, type TagEntry } from './session.ts';
import type { ReadStore } from './store.ts';

/** A run's META (undefined: no complete run). */
export async function getRunMeta(store: ReadStore, runId: string): Promise<RunItem | undefined> {
  const meta = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: { pk: runPk(runId), sk: RUN_META_SK } }),
  );
  return meta.Item as RunItem | undefined;
}

/** The SERIES items of an iostat run, at most `max`. */
export function seriesItems(store: ReadStore, runId: string, max: number): Promise<SeriesItem[]> {
  return queryItems<SeriesItem>(
    store,
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :series)',
      ExpressionAttributeValues: { ':pk': runPk(runId), ':series': seriesSk('') },
    },
    max,
  );
}

/**
 * The change stamps of these device labels (DeviceItem.changed), read strongly
 * consistent: one BatchGet per 100 labels, one read unit per label. A label that
 * is not listed (no complete run, or an upload that died before listing it, or
 * iostat runs stored before their upload's label was listed) has none.
 */
export async function labelStamps(
  store: ReadStore,
  labels: readonly string[],
): Promise<Map<string, string | undefined>> {
  const items = await batchGetItems<Pick<DeviceItem, 'sk' | 'changed'>>(
    store,
    labels.map((label) => ({ pk: DEVICES_PK, sk: label })),
    ['sk', 'changed'],
    { consistent: true },
  );
  const found = new Map(items.map((item) => [item.sk, item.changed]));
  return new Map(labels.map((label) => [label, found.get(label)]));
}

/** The byTag entries of one tag partition (keys.ts tagKey), newest first, at most `max`. */
export async function tagEntries(store: ReadStore, tag: string, max: number): Promise<TagEntry[]> {
  const query = {
    IndexName: INDEXES.byTag.name,
    KeyConditionExpression: 'gsi3pk = :pk',
    ExpressionAttributeValues: { ':pk': tag },
    ...projection(TAG_ENTRY_ATTRIBUTES),
    ScanIndexForward: false,
  };
  return queryItems<TagEntry>(store, query, max).catch((error: unknown) => {
    // A table made before the tag index (a local lab's data folder): say so in the log, not just "internal error".
    if (
      (error as { name?: string }).name === 'ValidationException' &&
      /specified index/.test((error as Error).message)
    ) {
      throw new Error(
        `table ${store.tableName} has no ${INDEXES.byTag.name} index (it was created before tag lookups existed): ` +
          'recreate it from shared/store/table.ts (the local lab: npm start -- --fresh)',
        { cause: error },
      );
    }
    throw error;
  });
}

// ---------------------------------------------------------------- the pages of the listings

/** A DEVICES entry as a listing reads it (items written before some fields existed lack them). */
export type DeviceEntryItem = Pick<DeviceItem, 'sk'> & Partial<Pick<DeviceItem, 'label' | 'format' | 'lastSeen'>>;

/** At most `count` DEVICES entries in label order, after the label `after` when given. */
export function deviceEntries(store: ReadStore, count: number, after?: string): Promise<DeviceEntryItem[]> {
  return queryItems<DeviceEntryItem>(
    store,
    { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': DEVICES_PK }, Limit: count },
    count,
    after !== undefined ? { pk: DEVICES_PK, sk: after } : undefined,
  );
}

/**
 * One Query of DEVICES labels under `prefix` ('' for all) after `after`: at most `limit`, and
 * whether the partition ends there.
 */
export async function labelsPage(
  store: ReadStore,
  prefix: string,
  limit: number,
  after?: string,
): Promise<{ labels: string[]; done: boolean }> {
  const page = await store.db.send(
    new QueryCommand({
      TableName: store.tableName,
      KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
      ExpressionAttributeValues: { ':pk': DEVICES_PK, ...(prefix ? { ':prefix': prefix } : {}) },
      ProjectionExpression: 'sk',
      Limit: limit,
      ...(after !== undefined ? { ExclusiveStartKey: { pk: DEVICES_PK, sk: after } } : {}),
    }),
  );
  return {
    labels: ((page.Items ?? []) as { sk: string }[]).map((i) => i.sk),
    done: page.LastEvaluatedKey === undefined,
  };
}

/**
 * At most `count` upload records of one byStatus partition, newest update first, older than the
 * sort key `before` when given.
 */
export function statusRecords(
  store: ReadStore,
  partition: string,
  count: number,
  before?: string,
): Promise<UploadRecord[]> {
  return queryItems<UploadRecord>(
    store,
    {
      IndexName: INDEXES.byStatus.name,
      KeyConditionExpression: before !== undefined ? 'gsi2pk = :pk AND gsi2sk < :after' : 'gsi2pk = :pk',
      ExpressionAttributeValues: { ':pk': partition, ...(before !== undefined ? { ':after': before } : {}) },
      ScanIndexForward: false,
      Limit: count,
    },
    count,
  );
}

/** What a listing reads of a byDevice entry (#l3 is format, used by the filter): neither rows nor summaries. */
const LISTING_ATTRIBUTES = [
  'type',
  'runId',
  'label',
  'format',
  'device',
  'name',
  'host',
  'tags',
  'context',
  'source',
  'time',
  'from',
  'to',
  'reports',
  'seriesCount',
  'gsi1sk',
] as const;

export interface EntriesRequest {
  /** Only entries older than this byDevice sort key. */
  before?: string;
  format?: Format;
  limit: number;
  /** Where the page before ended (its LastEvaluatedKey). */
  start?: Record<string, unknown>;
  /** Read the series iostat METAs hold too (packedSeries), to find the series labels they stand for. */
  withSeries?: boolean;
}

/** One byDevice page of a label's entries, newest first, and where the next page starts (absent: none). */
export async function labelEntriesPage(
  store: ReadStore,
  label: string,
  request: EntriesRequest,
): Promise<{ items: IndexedItem[]; next?: Record<string, unknown> }> {
  const { before, format, start } = request;
  const attributes = request.withSeries ? [...LISTING_ATTRIBUTES, 'packedSeries'] : LISTING_ATTRIBUTES;
  const page = await store.db.send(
    new QueryCommand({
      TableName: store.tableName,
      IndexName: INDEXES.byDevice.name,
      KeyConditionExpression: before !== undefined ? 'gsi1pk = :pk AND gsi1sk < :after' : 'gsi1pk = :pk',
      ExpressionAttributeValues: {
        ':pk': devicePk(label),
        ...(before !== undefined ? { ':after': before } : {}),
        ...(format ? { ':format': format } : {}),
      },
      ProjectionExpression: attributes.map((_, i) => `#l${i}`).join(', '),
      ExpressionAttributeNames: Object.fromEntries(attributes.map((a, i) => [`#l${i}`, a])),
      ...(format ? { FilterExpression: '#l3 = :format' } : {}),
      ScanIndexForward: false,
      Limit: request.limit,
      ...(start ? { ExclusiveStartKey: start } : {}),
    }),
  );
  return {
    items: (page.Items ?? []) as IndexedItem[],
    ...(page.LastEvaluatedKey ? { next: page.LastEvaluatedKey } : {}),
  };
}
