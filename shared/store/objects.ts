/**
 * Upload records and the per-key pointer to the current version: the
 * conditional writes that make ingestion idempotent and order versions by their
 * S3 sequencer (dynalite has no transactions, so each step is one conditional write).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { INDEXES } from '../table.ts';
import { BatchWriter } from './batch.ts';
import { devicePk, DEVICES_PK, objectPk, OBJECT_SK, runPk, RUN_META_SK, sortableSequencer, statusPk, statusSk, uploadPk, uploadSk } from './keys.ts';
import { changeStamp, uploadRecord, type ObjectRef, type UploadRecord, type UploadStatus } from './records.ts';

export interface Store {
  db: DynamoDBDocumentClient;
  tableName: string;
}

function isConditionFailure(error: unknown): boolean {
  return error instanceof ConditionalCheckFailedException || (error as { name?: string })?.name === 'ConditionalCheckFailedException';
}

/**
 * Mark a version `processing`, unless it was already finished (a duplicate or
 * replayed event): returns false then, and nothing is written.
 */
export async function claimUpload(store: Store, object: ObjectRef, now: string): Promise<boolean> {
  try {
    await store.db.send(
      new PutCommand({
        TableName: store.tableName,
        Item: uploadRecord(object, 'processing', {}, now),
        ConditionExpression: 'attribute_not_exists(pk) OR #status = :processing',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':processing': 'processing' },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Write the final record of a version: ready or failed, with what a person needs to know. */
export async function finishUpload(store: Store, object: ObjectRef, status: UploadStatus, fields: Partial<UploadRecord>, now: string): Promise<UploadRecord> {
  const previous = await store.db.send(new GetCommand({ TableName: store.tableName, Key: { pk: uploadPk(object.bucket, object.key), sk: uploadSk(object.version) } }));
  const createdAt = (previous.Item as UploadRecord | undefined)?.createdAt ?? now;
  const record = uploadRecord(object, status, { ...fields, createdAt }, now);
  await store.db.send(new PutCommand({ TableName: store.tableName, Item: record }));
  return record;
}

/** Set the status of an existing record (a version whose key was deleted). */
export async function setUploadStatus(store: Store, bucket: string, key: string, version: string, status: UploadStatus, message: string, now: string): Promise<void> {
  try {
    await store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: { pk: uploadPk(bucket, key), sk: uploadSk(version) },
        UpdateExpression: 'SET #status = :status, #message = :message, updatedAt = :now, gsi2pk = :gsi2pk, gsi2sk = :gsi2sk',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#status': 'status', '#message': 'message' },
        ExpressionAttributeValues: { ':status': status, ':message': message, ':now': now, ':gsi2pk': statusPk(status), ':gsi2sk': statusSk(now, bucket, key, version) },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** A version whose runs are to be removed (its runs are ids 0..runCount-1, see keys.runIdsOf). */
export interface VersionRuns {
  version: string;
  runCount: number;
}

export interface CurrentObject extends VersionRuns {
  sequencer: string;
  deleted: boolean;
  /**
   * Versions this state replaced whose runs are not yet removed: kept until the
   * removal is done, so a retry after a failure half-way finishes it.
   */
  pending?: VersionRuns[];
}

/** The key's current state, if any event for it was processed. */
export async function currentObject(store: Store, bucket: string, key: string): Promise<CurrentObject | undefined> {
  const result = await store.db.send(new GetCommand({ TableName: store.tableName, Key: { pk: objectPk(bucket, key), sk: OBJECT_SK }, ConsistentRead: true }));
  return result.Item as CurrentObject | undefined;
}

/**
 * Make this version (or a deletion) the key's current state if it is newer than
 * what is recorded, and return the versions whose runs must now go: the one it
 * replaced, and any an earlier attempt left pending. `stale` when a newer event
 * already won (events arrive out of order). Call finishPending once they are removed.
 */
export async function makeCurrent(store: Store, object: ObjectRef, runCount: number, deleted: boolean): Promise<{ stale: true } | { stale: false; pending: VersionRuns[] }> {
  const sequencer = sortableSequencer(object.sequencer);
  // Read, decide, write on condition that nothing changed; a lost race reads again.
  for (let attempt = 0; attempt < 10; attempt++) {
    const existing = await currentObject(store, object.bucket, object.key);
    if (existing && existing.sequencer > sequencer) return { stale: true };
    if (existing && existing.sequencer === sequencer && existing.version === object.version && existing.deleted === deleted) {
      // This very event was applied already (a replay or a concurrent copy).
      return { stale: false, pending: existing.pending ?? [] };
    }
    const pending = [...(existing?.pending ?? [])];
    if (existing && !existing.deleted && existing.version !== object.version && !pending.some((p) => p.version === existing.version)) {
      pending.push({ version: existing.version, runCount: existing.runCount });
    }
    try {
      await store.db.send(
        new PutCommand({
          TableName: store.tableName,
          Item: { pk: objectPk(object.bucket, object.key), sk: OBJECT_SK, type: 'object', version: object.version, sequencer, runCount, deleted, pending },
          ConditionExpression: existing ? 'sequencer = :seen AND version = :seenVersion' : 'attribute_not_exists(pk)',
          ExpressionAttributeValues: existing ? { ':seen': existing.sequencer, ':seenVersion': existing.version } : undefined,
        }),
      );
      return { stale: false, pending };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
  throw new Error(`${object.key}: the key's current version kept changing while this event was applied`);
}

/** The replaced versions' runs are gone: forget them (unless another event moved the key meanwhile). */
export async function finishPending(store: Store, object: ObjectRef): Promise<void> {
  try {
    await store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: { pk: objectPk(object.bucket, object.key), sk: OBJECT_SK },
        UpdateExpression: 'SET pending = :none',
        ConditionExpression: 'version = :version AND sequencer = :sequencer',
        ExpressionAttributeValues: { ':none': [], ':version': object.version, ':sequencer': sortableSequencer(object.sequencer) },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/**
 * Every item of these runs, deleted run by run: first the device labels that only
 * these runs use leave the DEVICES list, then the META item (so a half-deleted run
 * is already invisible), then the labels still listed get a new change stamp
 * (`at` and the run), then the rest. Labels go first because the run's index
 * entries are what name them: a function that died after deleting the entries
 * would leave its labels listed for good, as no retry could find them again;
 * dying after the labels only leaves whole runs unlisted until the retry.
 */
export async function deleteRuns(store: Store, runIds: readonly string[], at: string): Promise<number> {
  const writer = new BatchWriter(store.db, store.tableName);
  const deleting = new Set(runIds);
  for (const id of runIds) {
    const keys: { pk: string; sk: string }[] = [];
    const labels = new Set<string>();
    let start: Record<string, unknown> | undefined;
    do {
      const page = await store.db.send(
        new QueryCommand({
          TableName: store.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': runPk(id) },
          ProjectionExpression: 'pk, sk, gsi1pk',
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        keys.push({ pk: item['pk'] as string, sk: item['sk'] as string });
        const indexed = item['gsi1pk'] as string | undefined;
        if (indexed?.startsWith('DEVICE#')) labels.add(indexed.slice('DEVICE#'.length));
      }
      start = page.LastEvaluatedKey;
    } while (start);
    for (const label of labels) await forgetLabelIfUnused(store, label, deleting);
    for (const key of keys) if (key.sk === RUN_META_SK) writer.delete(key);
    await writer.flush();
    // The run is gone for readers: answers kept for its labels are stale from now on.
    for (const label of labels) await stampLabelChange(store, label, changeStamp(at, id));
    for (const key of keys) if (key.sk !== RUN_META_SK) writer.delete(key);
    await writer.flush();
  }
  return writer.written;
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

/** Drop a label from DEVICES unless a run other than `leaving` is indexed under it. */
async function forgetLabelIfUnused(store: Store, label: string, leaving: ReadonlySet<string>): Promise<void> {
  const entry = await store.db.send(new GetCommand({ TableName: store.tableName, Key: { pk: DEVICES_PK, sk: label } }));
  const seen = entry.Item?.['lastSeen'] as string | undefined;
  if (seen === undefined) return;
  // The entries of the runs being deleted are still there: read past them to any other. A run has at
  // most one entry per label, so the first page of leaving.size + 1 holds another if there is one.
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        IndexName: INDEXES.byDevice.name,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': devicePk(label) },
        ProjectionExpression: 'runId',
        Limit: leaving.size + 1,
        ExclusiveStartKey: start,
      }),
    );
    if ((page.Items ?? []).some((item) => !leaving.has(item['runId'] as string))) return;
    start = page.LastEvaluatedKey;
  } while (start);
  try {
    // Unless an upload saw the label again meanwhile.
    await store.db.send(
      new DeleteCommand({ TableName: store.tableName, Key: { pk: DEVICES_PK, sk: label }, ConditionExpression: 'lastSeen = :seen', ExpressionAttributeValues: { ':seen': seen } }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
