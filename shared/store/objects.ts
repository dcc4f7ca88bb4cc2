/**
 * Upload records and the per-key pointer to the current version: the
 * conditional writes that make ingestion idempotent and order versions by their
 * S3 sequencer (dynalite has no transactions, so each step is one conditional write).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BatchWriter } from './batch.ts';
import { objectPk, OBJECT_SK, runPk, sortableSequencer, statusPk, statusSk, uploadPk, uploadSk } from './keys.ts';
import { uploadRecord, type ObjectRef, type UploadRecord, type UploadStatus } from './records.ts';

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

export interface CurrentObject {
  version: string;
  sequencer: string;
  /** Runs of that version, ids 0..runCount-1 (see keys.runIdsOf): a count stays small for any file. */
  runCount: number;
  deleted: boolean;
}

/**
 * Make this version (or a deletion) the key's current state if it is newer than
 * what is recorded. Returns the state it replaced, or `stale` when a newer event
 * already won (events can arrive out of order).
 */
export async function makeCurrent(store: Store, object: ObjectRef, runCount: number, deleted: boolean): Promise<{ stale: true } | { stale: false; previous?: CurrentObject }> {
  const sequencer = sortableSequencer(object.sequencer);
  try {
    const result = await store.db.send(
      new PutCommand({
        TableName: store.tableName,
        Item: { pk: objectPk(object.bucket, object.key), sk: OBJECT_SK, type: 'object', version: object.version, sequencer, runCount, deleted },
        ConditionExpression: 'attribute_not_exists(pk) OR sequencer < :sequencer OR (sequencer = :sequencer AND version = :version)',
        ExpressionAttributeValues: { ':sequencer': sequencer, ':version': object.version },
        ReturnValues: 'ALL_OLD',
      }),
    );
    const old = result.Attributes as CurrentObject | undefined;
    return { stale: false, ...(old ? { previous: old } : {}) };
  } catch (error) {
    if (isConditionFailure(error)) return { stale: true };
    throw error;
  }
}

/** Every item of these runs, deleted (META first, so a half-deleted run is already invisible). */
export async function deleteRuns(store: Store, runIds: readonly string[]): Promise<number> {
  const writer = new BatchWriter(store.db, store.tableName);
  for (const id of runIds) {
    const keys: { pk: string; sk: string }[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await store.db.send(
        new QueryCommand({
          TableName: store.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': runPk(id) },
          ProjectionExpression: 'pk, sk',
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) keys.push({ pk: item['pk'] as string, sk: item['sk'] as string });
      start = page.LastEvaluatedKey;
    } while (start);
    keys.sort((a, b) => (a.sk === 'META' ? -1 : b.sk === 'META' ? 1 : 0));
    const meta = keys.filter((k) => k.sk === 'META');
    for (const key of meta) writer.delete(key);
    await writer.flush();
    for (const key of keys) if (key.sk !== 'META') writer.delete(key);
    await writer.flush();
  }
  return writer.written;
}
