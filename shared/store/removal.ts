/**
 * Removing runs in steps that survive being cut off: each page of a run's items
 * is removed whole (its labels settled, then the items deleted), so a step that
 * stops at a deadline, or dies, leaves only what is still to do, and the next
 * step reads just that. Nothing done is ever redone.
 *
 * Order per run: the labels only this run uses leave the DEVICES list, then the
 * META item goes (the run is invisible from then on), then the labels still
 * listed get a new change stamp, then the run's samples object in the results
 * bucket (deleted again by a step that finds the META gone: a missing object is
 * fine), then the rest of the run's items, page by page,
 * each page's labels settled the same way before the page is deleted. Labels go
 * before the items that name them: a step that died after deleting the items
 * would leave their labels listed for good, as no later step could find them.
 */
import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { INDEXES } from './table.ts';
import { BatchWriter } from './batch.ts';
import { devicePk, DEVICES_PK, runPk, RUN_META_SK } from './keys.ts';
import { uploadLabelsOf } from '../labels.ts';
import { changeStamp } from './items.ts';
import { storedSeriesOf } from './packing.ts';
import { deleteSamples, type ResultsBucket } from './samples-removal.ts';
import { isConditionFailure, mapLimit, queryPages, type Store } from './store.ts';

/** Items of a run read and removed per step of work. */
const PAGE_ITEMS = 500;
/** Label checks (a Get, a Query, a Delete or an Update each) in flight at once. */
const LABEL_CONCURRENCY = 16;

/** When a removal must stop and leave the rest for a continuation. */
export interface Deadline {
  /** True once there is no time left for another page (checked after each page). */
  passed(): boolean;
}

export const NO_DEADLINE: Deadline = { passed: () => false };

export interface Removal {
  /** Items deleted (labels not counted). */
  removed: number;
  /** False when the deadline stopped it: call again to go on. */
  done: boolean;
}

/** What a removal deletes from: the table and the results bucket. */
export type RunStore = Store & ResultsBucket;

/** Remove every item (and samples object) of these runs, or as much as the deadline allows. */
export async function deleteRuns(
  store: RunStore,
  runIds: readonly string[],
  at: string,
  deadline: Deadline = NO_DEADLINE,
): Promise<Removal> {
  const leaving = new Set(runIds);
  let removed = 0;
  for (const [i, id] of runIds.entries()) {
    const step = await deleteRun(store, id, leaving, at, deadline);
    removed += step.removed;
    // Stop only after work: a step that found nothing left of a run goes on to the next.
    if (!step.done || (i < runIds.length - 1 && step.removed > 0 && deadline.passed())) return { removed, done: false };
  }
  return { removed, done: true };
}

async function deleteRun(
  store: RunStore,
  runId: string,
  leaving: ReadonlySet<string>,
  at: string,
  deadline: Deadline,
): Promise<Removal> {
  const writer = new BatchWriter(store.db, store.tableName);
  const held = seriesHeldElsewhere(store, leaving);
  const meta = await store.db.send(
    new GetCommand({
      TableName: store.tableName,
      Key: { pk: runPk(runId), sk: RUN_META_SK },
      ProjectionExpression: 'pk, sk, gsi1pk, packedSeries',
      ConsistentRead: true,
    }),
  );
  if (meta.Item !== undefined) {
    const labels = [...labelsOf([meta.Item]), ...seriesLabelsOf(meta.Item)];
    await mapLimit(labels, LABEL_CONCURRENCY, (label) => forgetLabelIfUnused(store, label, leaving, held));
    writer.delete({ pk: runPk(runId), sk: RUN_META_SK });
    await writer.flush();
    // The run is gone for readers: answers kept for its labels are stale from now on.
    await mapLimit(labels, LABEL_CONCURRENCY, (label) => stampLabelChange(store, label, changeStamp(at, runId)));
  }
  // Before the items: a step that dies after this still finds the run's items, and deletes it again.
  await deleteSamples(store, [runId]);
  // A page at least per call, then only while there is time: every step gets somewhere.
  for (;;) {
    const page = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': runPk(runId) },
        ProjectionExpression: 'pk, sk, gsi1pk',
        Limit: PAGE_ITEMS,
        ConsistentRead: true,
      }),
    );
    const items = page.Items ?? [];
    if (items.length === 0) return { removed: writer.written, done: true };
    const labels = labelsOf(items);
    await mapLimit(labels, LABEL_CONCURRENCY, (label) => forgetLabelIfUnused(store, label, leaving, held));
    await mapLimit(labels, LABEL_CONCURRENCY, (label) => stampLabelChange(store, label, changeStamp(at, runId)));
    for (const item of items) writer.delete({ pk: item['pk'] as string, sk: item['sk'] as string });
    await writer.flush();
    if (page.LastEvaluatedKey === undefined) return { removed: writer.written, done: true };
    if (deadline.passed()) return { removed: writer.written, done: false };
  }
}

/** The device labels items are indexed under (byDevice). */
function labelsOf(items: readonly Record<string, unknown>[]): string[] {
  const labels = new Set<string>();
  for (const item of items) {
    const indexed = item['gsi1pk'] as string | undefined;
    if (indexed?.startsWith(devicePk(''))) labels.add(indexed.slice(devicePk('').length));
  }
  return [...labels];
}

/** The series labels a META holds its series under (packedSeries): they have no entries of their own. */
function seriesLabelsOf(meta: Record<string, unknown>): string[] {
  const packed = meta['packedSeries'] as Uint8Array | undefined;
  return packed === undefined ? [] : storedSeriesOf({ packedSeries: packed })!.map((s) => s.device);
}

/** A new change stamp on a label still listed (DeviceItem.changed); nothing for a label already dropped. */
async function stampLabelChange(store: Store, label: string, stamp: string): Promise<void> {
  try {
    await store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: { pk: DEVICES_PK, sk: label },
        UpdateExpression: 'SET changed = :stamp',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':stamp': stamp },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** The series labels the METAs under an upload label hold, but for those of `leaving`'s runs. */
type SeriesHeld = (upload: string) => Promise<ReadonlySet<string>>;

/** SeriesHeld reading each upload label's entries once, however many of its series labels are checked. */
function seriesHeldElsewhere(store: Store, leaving: ReadonlySet<string>): SeriesHeld {
  const read = new Map<string, Promise<ReadonlySet<string>>>();
  return (upload) => {
    let held = read.get(upload);
    if (held === undefined) {
      held = (async () => {
        const labels = new Set<string>();
        const entries = queryPages<{ runId: string; packedSeries?: Uint8Array }>(store, {
          IndexName: INDEXES.byDevice.name,
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': devicePk(upload) },
          ProjectionExpression: 'runId, packedSeries',
        });
        for await (const page of entries)
          for (const item of page) if (!leaving.has(item.runId)) for (const l of seriesLabelsOf(item)) labels.add(l);
        return labels;
      })();
      read.set(upload, held);
    }
    return held;
  };
}

/** Drop a label from DEVICES unless a run other than `leaving` is indexed under it or holds it as a series. */
async function forgetLabelIfUnused(
  store: Store,
  label: string,
  leaving: ReadonlySet<string>,
  held: SeriesHeld,
): Promise<void> {
  const entry = await store.db.send(new GetCommand({ TableName: store.tableName, Key: { pk: DEVICES_PK, sk: label } }));
  const seen = entry.Item?.['lastSeen'] as string | undefined;
  if (seen === undefined) return;
  // The entries of the runs being deleted are still there: read past them to any other. A run has at
  // most one entry per label, so the first page of leaving.size + 1 holds another if there is one.
  const entries = queryPages<{ runId: string }>(store, {
    IndexName: INDEXES.byDevice.name,
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': devicePk(label) },
    ProjectionExpression: 'runId',
    Limit: leaving.size + 1,
  });
  for await (const page of entries) if (page.some((item) => !leaving.has(item.runId))) return;
  for (const upload of uploadLabelsOf(label)) if ((await held(upload)).has(label)) return;
  try {
    // Unless an upload saw the label again meanwhile.
    await store.db.send(
      new DeleteCommand({
        TableName: store.tableName,
        Key: { pk: DEVICES_PK, sk: label },
        ConditionExpression: 'lastSeen = :seen',
        ExpressionAttributeValues: { ':seen': seen },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
