/**
 * Ending a version: its items removed (every run it started), then its record
 * `failed` (or `replaced`, `deleted` when its key moved on meanwhile), and the
 * key's other records settled against its current state. The ingest path ends the versions it cannot store, the
 * dead-letter handler and the sweeper end the ones no delivery will finish.
 * Removal stops at the deadline and goes on in a continuation message.
 */
import { runIdsOf } from '../store/keys.ts';
import { deleteRuns } from '../store/removal.ts';
import type { UploadRecord } from '../store/items.ts';
import { finishUpload, getUpload, settleVersions, takeOver, type Claim } from '../store/uploads.ts';
import { continuationBody, type Ending } from './continuation.ts';
import { deadlineOf, nowOf, type SettleDeps } from './deps.ts';

export type Ended = 'ended' | 'continued';

/** Remove what the claimed version wrote and end its record; 'continued' when a continuation took the rest. */
export async function endVersion(deps: SettleDeps, claim: Claim, ending: Ending): Promise<Ended> {
  const { bucket, key, version } = claim.object;
  const removal = await deleteRuns(
    deps,
    runIdsOf(bucket, key, version, claim.startedRuns),
    nowOf(deps),
    deadlineOf(deps),
  );
  if (!removal.done) {
    await deps.requeue!(
      continuationBody({ benchdrop: 'continue', step: 'end-version', bucket, key, version, ...ending }),
    );
    return 'continued';
  }
  await finishUpload(
    deps,
    claim,
    ending.status,
    { ...ending.fields, message: ending.message, line: ending.line },
    nowOf(deps),
  );
  // A version ended after a newer one became current is replaced by it at once; one of a deleted key, deleted.
  await settleVersions(deps, bucket, key, nowOf(deps));
  return 'ended';
}

/**
 * End a `processing` version another delivery held (dead, or cut off): take it
 * over first. Undefined when it is not processing (nothing to do) or changed
 * while this was read (a delivery is alive: leave it).
 */
export async function endAbandoned(deps: SettleDeps, record: UploadRecord, ending: Ending): Promise<Ended | undefined> {
  if (record.status !== 'processing') return undefined;
  const claim = await takeOver(deps, record, nowOf(deps));
  return claim === undefined ? undefined : endVersion(deps, claim, ending);
}

/** Go on ending a version a step left to a continuation. */
export async function continueEnding(
  deps: SettleDeps,
  bucket: string,
  key: string,
  version: string,
  ending: Ending,
): Promise<Ended | undefined> {
  const record = await getUpload(deps, bucket, key, version);
  return record === undefined ? undefined : endAbandoned(deps, record, ending);
}
