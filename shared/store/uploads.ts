/**
 * Upload records: one per object version, and the only place their status
 * changes. A delivery claims a version (`processing`, with a claim token of its
 * own), notes before writing the items of a run that the run was started, and
 * ends it `ready` or `failed`. Whoever ends a claimed version that no delivery
 * will finish (the dead-letter handler, the sweeper) takes the claim first, so
 * a delivery still running learns at its next note that it lost the version.
 * Once a version is settled, only settleVersions changes it: `replaced` when a
 * newer version of its key is current, `deleted` when its key was deleted.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { isConditionFailure, queryPages, type Store } from './store.ts';
import { pastStatusPk, sortableSequencer, statusSk, uploadPk, uploadSk } from './keys.ts';
import { currentObject, type CurrentObject } from './objects.ts';
import { statusPartition, uploadRecord, type ObjectRef, type UploadRecord } from './items.ts';
import type { UploadStatus } from '../upload-status.ts';

/** A delivery's hold on a `processing` version: ended by another, it can no longer write. */
export interface Claim {
  object: ObjectRef;
  token: string;
  /** Runs whose items may exist (ids 0..startedRuns-1), from any delivery so far. */
  startedRuns: number;
}

/** Claims of a step that ends a version (takeOver) start so: no delivery takes those. */
const ENDING = 'end:';

/**
 * The claim was taken: by a step ending the version (`ended`: its items are
 * being removed, and what this delivery wrote since must go too), or by another
 * delivery of the same event, which writes the same items and finishes them.
 */
export class ClaimLost extends Error {
  override readonly name = 'ClaimLost';
  constructor(
    key: string,
    readonly ended: boolean,
  ) {
    super(
      `${key}: this version was ${ended ? 'ended by another step' : 'taken up by another delivery'} ` +
        'while it was being ingested',
    );
  }
}

/**
 * Why a claim no longer holds, from the record as it is now: a version another
 * delivery made ready with runs keeps them (the same items this one wrote); any
 * other end (failed, deleted, superseded, being ended) has no runs to keep.
 */
async function claimLost(store: Store, object: ObjectRef): Promise<ClaimLost> {
  const now = await getUpload(store, object.bucket, object.key, object.version);
  const keptByAnother =
    now?.status === 'ready' ? now.runCount > 0 : now?.status === 'processing' && !now.claim?.startsWith(ENDING);
  return new ClaimLost(object.key, !keptByAnother);
}

export async function getUpload(
  store: Store,
  bucket: string,
  key: string,
  version: string,
): Promise<UploadRecord | undefined> {
  const result = await store.db.send(
    new GetCommand({
      TableName: store.tableName,
      Key: { pk: uploadPk(bucket, key), sk: uploadSk(version) },
      ConsistentRead: true,
    }),
  );
  return result.Item as UploadRecord | undefined;
}

/**
 * Claim a version for this delivery, unless it was already finished (a duplicate
 * or replayed event) or is being ended: undefined then, and nothing is written. A
 * version left `processing` by another delivery is claimed again, keeping what it
 * started: that delivery died (its message came back), or it is a copy of the
 * same event, which then stops at its next note (ClaimLost, not ended).
 */
export async function claimUpload(store: Store, object: ObjectRef, now: string): Promise<Claim | undefined> {
  const existing = await getUpload(store, object.bucket, object.key, object.version);
  if (existing !== undefined && (existing.status !== 'processing' || existing.claim?.startsWith(ENDING)))
    return undefined;
  const token = randomUUID();
  const startedRuns = existing?.startedRuns ?? 0;
  const record = uploadRecord(
    object,
    'processing',
    { claim: token, startedRuns, createdAt: existing?.createdAt ?? now },
    now,
  );
  try {
    await store.db.send(
      new PutCommand({
        TableName: store.tableName,
        Item: record,
        ...(existing === undefined
          ? { ConditionExpression: 'attribute_not_exists(pk)' }
          : existing.claim === undefined
            ? {
                ConditionExpression: '#status = :processing AND attribute_not_exists(claim)',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: { ':processing': 'processing' },
              }
            : {
                ConditionExpression: '#status = :processing AND claim = :claim',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: { ':processing': 'processing', ':claim': existing.claim },
              }),
      }),
    );
    return { object, token, startedRuns };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // The SDK's retry of a write that went through meets its own claim; else another
    // delivery of the same event claimed it meanwhile, and that one does the work.
    return (await heldBy(store, object, token)) ? { object, token, startedRuns } : undefined;
  }
}

/**
 * Whether the record carries this token: a conditional write whose answer was
 * lost is retried by the SDK, and the retry fails its condition on the very
 * change the first attempt made.
 */
async function heldBy(store: Store, object: ObjectRef, token: string, status?: UploadStatus): Promise<boolean> {
  const now = await getUpload(store, object.bucket, object.key, object.version);
  return now?.claim === token && (status === undefined || now.status === status);
}

/** SET `update` on the record this claim holds; false when the claim no longer holds. */
async function updateHeld(
  store: Store,
  claim: Claim,
  update: string,
  values: Record<string, unknown>,
): Promise<boolean> {
  const { bucket, key, version } = claim.object;
  try {
    await store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: { pk: uploadPk(bucket, key), sk: uploadSk(version) },
        UpdateExpression: `SET ${update}`,
        ConditionExpression: '#status = :processing AND claim = :claim',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ...values, ':processing': 'processing', ':claim': claim.token },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * Note that runs 0..startedRuns-1 may have items, before any is written, and
 * that the delivery is alive (the sweeper goes by `updatedAt`). ClaimLost when
 * the version was ended by another.
 */
export async function noteProgress(store: Store, claim: Claim, startedRuns: number, now: string): Promise<void> {
  const { bucket, key, version } = claim.object;
  const started = Math.max(startedRuns, claim.startedRuns);
  const values = { ':started': started, ':now': now, ':gsi2sk': statusSk(now, bucket, key, version) };
  if (!(await updateHeld(store, claim, 'startedRuns = :started, updatedAt = :now, gsi2sk = :gsi2sk', values)))
    throw await claimLost(store, claim.object);
  claim.startedRuns = started;
}

/** Keep a transient error on the record: the dead-letter handler reports the last one. */
export async function noteAttemptError(store: Store, claim: Claim, message: string): Promise<void> {
  await updateHeld(store, claim, 'lastError = :message', { ':message': message.slice(0, 500) });
}

/**
 * Take over a `processing` version to end it (the sweeper, the dead-letter
 * handler): a claim of its own, so the delivery that held it stops at its next
 * note. Undefined when it is not processing, or changed since `seen` was read.
 */
export async function takeOver(store: Store, seen: UploadRecord, now: string): Promise<Claim | undefined> {
  const object = objectOf(seen);
  const token = `${ENDING}${randomUUID()}`;
  try {
    await store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: { pk: seen.pk, sk: seen.sk },
        UpdateExpression: 'SET claim = :token, updatedAt = :now, gsi2sk = :gsi2sk',
        ConditionExpression:
          '#status = :processing AND updatedAt = :seen ' +
          `AND ${seen.claim === undefined ? 'attribute_not_exists(claim)' : 'claim = :claim'}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':token': token,
          ':now': now,
          ':gsi2sk': statusSk(now, seen.bucket, seen.key, seen.version),
          ':processing': 'processing',
          ':seen': seen.updatedAt,
          ...(seen.claim === undefined ? {} : { ':claim': seen.claim }),
        },
      }),
    );
    return { object, token, startedRuns: seen.startedRuns ?? 0 };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return (await heldBy(store, object, token)) ? { object, token, startedRuns: seen.startedRuns ?? 0 } : undefined;
  }
}

/** The object version a record is about. */
export function objectOf(record: UploadRecord): ObjectRef {
  const { bucket, key, version, versionId, eTag, size, sequencer } = record;
  return {
    bucket,
    key,
    version,
    ...(versionId !== undefined ? { versionId } : {}),
    ...(eTag !== undefined ? { eTag } : {}),
    ...(size !== undefined ? { size } : {}),
    ...(sequencer !== undefined ? { sequencer } : {}),
  };
}

/**
 * End a claimed version: ready or failed, with what a person needs to know.
 * ClaimLost when another step ended it meanwhile (nothing is written then).
 */
export async function finishUpload(
  store: Store,
  claim: Claim,
  status: Exclude<UploadStatus, 'processing'>,
  fields: Partial<UploadRecord>,
  now: string,
): Promise<UploadRecord> {
  const { object } = claim;
  const previous = await getUpload(store, object.bucket, object.key, object.version);
  if (previous?.status !== 'processing' || previous.claim !== claim.token) throw await claimLost(store, object);
  // The final record keeps the claim that ended it: how a retried write knows its own.
  const record = uploadRecord(object, status, { ...fields, createdAt: previous.createdAt, claim: claim.token }, now);
  try {
    await store.db.send(
      new PutCommand({
        TableName: store.tableName,
        Item: record,
        ConditionExpression: '#status = :processing AND claim = :claim',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':processing': 'processing', ':claim': claim.token },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    if (!(await heldBy(store, object, claim.token, status))) throw await claimLost(store, object);
  }
  return record;
}

/** What settleVersions reads of a record. */
const SETTLE_ATTRIBUTES = [
  'pk',
  'sk',
  'bucket',
  'key',
  'version',
  'status',
  'sequencer',
  'updatedAt',
  'gsi2pk',
  'message',
  'details',
] as const;
type Settled = Pick<UploadRecord, (typeof SETTLE_ATTRIBUTES)[number]>;

/** A settled record's new status, and whether it stays its key's current state in the listing. */
interface Restatement {
  status: 'replaced' | 'deleted';
  current: boolean;
  message: string;
  replacedBy?: string;
}

/**
 * Bring every settled record of a key in line with the key's current state
 * (its OBJECT pointer): older versions than the current one become `replaced`
 * (naming it), every version of a deleted key `deleted`, the newest of them
 * alone listed as the key's current state. Records still `processing` are left
 * to their delivery, which ends them the same way and settles again. Each write
 * holds only if the record is as it was read; a pointer that moved meanwhile is
 * read again. Idempotent: a record already right is not written.
 */
export async function settleVersions(store: Store, bucket: string, key: string, now: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const pointer = await currentObject(store, bucket, key);
    if (pointer === undefined) return;
    // A deleted key's replaced versions become deleted too; otherwise replaced ones are settled for good.
    const records = await openRecords(store, bucket, key, pointer.deleted ? ['deleted'] : ['replaced', 'deleted']);
    const changes = pointer.deleted ? deletedKey(records) : replacedBy(records, pointer);
    for (const [record, change] of changes) await restate(store, record, change, now);
    const after = await currentObject(store, bucket, key);
    if (
      after?.version === pointer.version &&
      after.sequencer === pointer.sequencer &&
      after.deleted === pointer.deleted
    )
      return;
  }
}

/** A key's records but those in the PAST partitions of `settled` (history that this state leaves as it is). */
async function openRecords(
  store: Store,
  bucket: string,
  key: string,
  settled: readonly UploadStatus[],
): Promise<Settled[]> {
  const records: Settled[] = [];
  const skipped = Object.fromEntries(settled.map((status, i) => [`:past${i}`, pastStatusPk(status)]));
  const pages = queryPages<Settled>(store, {
    KeyConditionExpression: 'pk = :pk',
    FilterExpression: `NOT (gsi2pk IN (${Object.keys(skipped).join(', ')}))`,
    ExpressionAttributeValues: { ':pk': uploadPk(bucket, key), ...skipped },
    ProjectionExpression: SETTLE_ATTRIBUTES.map((_, i) => `#s${i}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(SETTLE_ATTRIBUTES.map((a, i) => [`#s${i}`, a])),
    ConsistentRead: true,
  });
  for await (const page of pages) records.push(...page);
  return records;
}

const isSettled = (r: Settled) => r.status !== 'processing';

/**
 * Under a current version: the older ready or failed ones are replaced by it; a deleted version
 * other than it is history.
 */
function replacedBy(records: readonly Settled[], pointer: CurrentObject): [Settled, Restatement][] {
  const changes: [Settled, Restatement][] = [];
  for (const r of records.filter(isSettled)) {
    if (r.version === pointer.version) continue;
    if (r.status === 'deleted')
      changes.push([r, { status: 'deleted', current: false, message: r.message ?? DELETED_MESSAGE }]);
    else if (r.status !== 'replaced' && sortableSequencer(r.sequencer) <= pointer.sequencer) {
      changes.push([
        r,
        {
          status: 'replaced',
          current: false,
          message: `replaced by version ${pointer.version}; its runs were removed`,
          replacedBy: pointer.version,
        },
      ]);
    }
  }
  return changes;
}

const DELETED_MESSAGE = 'the key was deleted; its runs were removed';

/** Under a deletion: every settled version deleted, the newest listed as the key's state. */
function deletedKey(records: readonly Settled[]): [Settled, Restatement][] {
  const settled = records.filter(isSettled);
  const newest = settled.reduce<Settled | undefined>(
    (best, r) => (best === undefined || newerThan(r, best) ? r : best),
    undefined,
  );
  return settled
    .map((r): [Settled, Restatement] => [
      r,
      {
        status: 'deleted',
        current: r === newest,
        message: r.status === 'deleted' ? (r.message ?? DELETED_MESSAGE) : DELETED_MESSAGE,
      },
    ])
    .filter(([r, change]) => r.status !== change.status || r.gsi2pk !== statusPartition(change.status, change.current));
}

/** Versions order by their S3 sequencer; the same sequencer (none given) by when they were last updated. */
function newerThan(a: Settled, b: Settled): boolean {
  const [x, y] = [sortableSequencer(a.sequencer), sortableSequencer(b.sequencer)];
  return x !== y ? x > y : a.updatedAt > b.updatedAt;
}

/** Write a settled record's new status, if it is still as read; its former message stays in `details`. */
async function restate(store: Store, record: Settled, change: Restatement, now: string): Promise<void> {
  const details =
    record.details ?? (record.message !== undefined && record.message !== change.message ? record.message : undefined);
  try {
    await store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: { pk: record.pk, sk: record.sk },
        UpdateExpression:
          'SET #status = :status, #message = :message, updatedAt = :now, gsi2pk = :gsi2pk, gsi2sk = :gsi2sk' +
          `${details !== undefined ? ', details = :details' : ''}` +
          `${change.replacedBy !== undefined ? ', replacedBy = :by' : ''} REMOVE line`,
        ConditionExpression: '#status = :seen AND updatedAt = :seenAt',
        ExpressionAttributeNames: { '#status': 'status', '#message': 'message' },
        ExpressionAttributeValues: {
          ':status': change.status,
          ':message': change.message,
          ':now': now,
          ':gsi2pk': statusPartition(change.status, change.current),
          ':gsi2sk': statusSk(now, record.bucket, record.key, record.version),
          ':seen': record.status,
          ':seenAt': record.updatedAt,
          ...(details !== undefined ? { ':details': details } : {}),
          ...(change.replacedBy !== undefined ? { ':by': change.replacedBy } : {}),
        },
      }),
    );
  } catch (error) {
    // Changed since it was read: whoever changed it settles the key again.
    if (!isConditionFailure(error)) throw error;
  }
}

/** A version deleted on its own (`delete-object --version-id`, not the current one): `deleted`, and history only. */
export async function markVersionDeleted(
  store: Store,
  bucket: string,
  key: string,
  version: string,
  now: string,
): Promise<void> {
  const record = await getUpload(store, bucket, key, version);
  if (record === undefined || record.status === 'processing' || record.status === 'deleted') return;
  await restate(
    store,
    record,
    { status: 'deleted', current: false, message: 'this version was deleted; it was not the current one' },
    now,
  );
}
