/**
 * The per-key pointer to the current version: the conditional writes that order
 * versions by their S3 sequencer and keep the versions whose runs are still to
 * be removed (dynalite has no transactions, so each step is one conditional write).
 * Upload records are in uploads.ts, run removal in removal.ts.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { objectPk, OBJECT_SK, sortableSequencer } from './keys.ts';
import type { ObjectRef } from './items.ts';
import { isConditionFailure, type Store } from './store.ts';

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
  const result = await store.db.send(
    new GetCommand({
      TableName: store.tableName,
      Key: { pk: objectPk(bucket, key), sk: OBJECT_SK },
      ConsistentRead: true,
    }),
  );
  return result.Item as CurrentObject | undefined;
}

/**
 * Make this version (or a deletion) the key's current state if it is newer than
 * what is recorded, and return the versions whose runs must now go: the one it
 * replaced, and any an earlier attempt left pending. `stale` when a newer event
 * already won (events arrive out of order), with the state that won. Call
 * finishPending once they are removed.
 */
export async function makeCurrent(
  store: Store,
  object: ObjectRef,
  runCount: number,
  deleted: boolean,
): Promise<{ stale: true; by: CurrentObject } | { stale: false; pending: VersionRuns[] }> {
  const sequencer = sortableSequencer(object.sequencer);
  // Read, decide, write on condition that nothing changed; a lost race reads again.
  for (let attempt = 0; attempt < 10; attempt++) {
    const existing = await currentObject(store, object.bucket, object.key);
    if (existing && existing.sequencer > sequencer) return { stale: true, by: existing };
    if (
      existing &&
      existing.sequencer === sequencer &&
      existing.version === object.version &&
      existing.deleted === deleted
    ) {
      // This very event was applied already (a replay or a concurrent copy).
      return { stale: false, pending: existing.pending ?? [] };
    }
    const pending = [...(existing?.pending ?? [])];
    if (
      existing &&
      !existing.deleted &&
      existing.version !== object.version &&
      !pending.some((p) => p.version === existing.version)
    ) {
      pending.push({ version: existing.version, runCount: existing.runCount });
    }
    try {
      await store.db.send(
        new PutCommand({
          TableName: store.tableName,
          Item: {
            pk: objectPk(object.bucket, object.key),
            sk: OBJECT_SK,
            type: 'object',
            version: object.version,
            sequencer,
            runCount,
            deleted,
            pending,
          },
          ConditionExpression: existing ? 'sequencer = :seen AND version = :seenVersion' : 'attribute_not_exists(pk)',
          ExpressionAttributeValues: existing
            ? { ':seen': existing.sequencer, ':seenVersion': existing.version }
            : undefined,
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
        ExpressionAttributeValues: {
          ':none': [],
          ':version': object.version,
          ':sequencer': sortableSequencer(object.sequencer),
        },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
