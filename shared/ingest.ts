/**
 * Ingestion of one S3 event record, the domain behind the ingest Lambda and the
 * local lab: stream the object, parse it, write its runs, record the outcome.
 *
 * - A created object version is claimed (`processing`), streamed (gunzipped when
 *   gzip), parsed, and its items written as they come (shared/ingest/stream-runs.ts).
 *   It then becomes the key's current version; the runs of the version it
 *   replaces are removed, and the key's older records become `replaced`
 *   (naming it). The record ends `ready` with its run ids. A version a newer
 *   one overtook while it was read ends `replaced` (or `deleted`) instead.
 * - Anything wrong with the file itself (cannot be parsed, too large, too many
 *   series, bad tags) is permanent, and so is a bug met while parsing: the items
 *   the version wrote are removed, the record ends `failed` with a short message
 *   (the line, what is wrong, what to do; the whole text in `details`), and the
 *   function returns normally so the message is not retried. An object deleted
 *   before it was read ends `deleted`. Anything else (throttling, timeouts)
 *   throws, and the queue retries the record.
 * - A removed object (or a delete marker) makes the key's current state
 *   `deleted`, removes its runs and marks every version of it `deleted`.
 *   Objects of the drop bucket are never written or deleted here; a run's
 *   samples object in the results bucket is written before its META and
 *   deleted with its items.
 * - Removal is done in steps that stop at the deadline and go on in a
 *   continuation message (shared/ingest/continuation.ts), never redone.
 * - Replays converge: run ids come from bucket, key, version and position.
 */
import { NoSuchKey } from '@aws-sdk/client-s3';
import { LabelError } from './labels.ts';
import { isInternalParseError, isParseError } from './parsers/errors.ts';
import { runIdsOf } from './store/keys.ts';
import { currentObject, finishPending, makeCurrent, type CurrentObject } from './store/objects.ts';
import { MAX_LISTED_RUNS, type ObjectRef } from './store/items.ts';
import { deleteRuns } from './store/removal.ts';
import { printable } from './printable.ts';
import {
  ClaimLost,
  claimUpload,
  finishUpload,
  markVersionDeleted,
  noteAttemptError,
  settleVersions,
  type Claim,
} from './store/uploads.ts';
import type { Ending } from './ingest/continuation.ts';
import { continuationBody, type Continuation } from './ingest/continuation.ts';
import { deadlineOf, nowOf, PermanentFailure, type IngestDeps, type SettleDeps } from './ingest/deps.ts';
import { continueEnding, endVersion } from './ingest/ending.ts';
import { decodeKey, type S3ObjectEvent } from './ingest/s3-event.ts';
import { streamRuns } from './ingest/stream-runs.ts';

export type { IngestDeps, SettleDeps } from './ingest/deps.ts';
export { resultsBucketFromEnv } from './ingest/deps.ts';
export { parseContinuation, type Continuation } from './ingest/continuation.ts';

export type IngestOutcome =
  | { status: 'ready'; object: ObjectRef; runIds: string[]; warnings: number }
  | { status: 'replaced'; object: ObjectRef; by: string }
  | {
      status: 'failed';
      object: ObjectRef;
      message: string;
      line: number;
      details: string;
      /** A bug met while parsing, to log with its stack. */ internal?: Error;
    }
  | { status: 'duplicate'; object: ObjectRef }
  | { status: 'deleted'; object: ObjectRef; removedRuns: number }
  | { status: 'stale'; object: ObjectRef };

export function objectRefOf(event: S3ObjectEvent): ObjectRef {
  const o = event.s3.object;
  const eTag = o.eTag?.replace(/"/g, '');
  // Without versioning, the same content uploaded again has the same eTag: the
  // sequencer tells the uploads apart (and a redelivered event keeps it).
  const version = o.versionId ?? ([eTag, o.sequencer].filter(Boolean).join('.') || 'unversioned');
  const ref: ObjectRef = { bucket: event.s3.bucket.name, key: decodeKey(o.key), version };
  if (o.versionId !== undefined) ref.versionId = o.versionId;
  if (eTag !== undefined) ref.eTag = eTag;
  if (o.size !== undefined) ref.size = o.size;
  if (o.sequencer !== undefined) ref.sequencer = o.sequencer;
  return ref;
}

export async function ingestRecord(event: S3ObjectEvent, deps: IngestDeps): Promise<IngestOutcome> {
  const object = objectRefOf(event);
  if (event.eventName.startsWith('ObjectRemoved'))
    return removeObject(object, event.eventName === 'ObjectRemoved:Delete', deps);
  return ingestObject(object, deps);
}

async function ingestObject(object: ObjectRef, deps: IngestDeps): Promise<IngestOutcome> {
  const claim = await claimUpload(deps, object, nowOf(deps));
  if (claim === undefined) return { status: 'duplicate', object };
  try {
    return await storeVersion(object, claim, deps);
  } catch (error) {
    return endAfterError(error, object, claim, deps);
  }
}

/** Streams the claimed version's runs in, makes it the key's current version and ends its record. */
async function storeVersion(object: ObjectRef, claim: Claim, deps: IngestDeps): Promise<IngestOutcome> {
  const stored = await streamRuns(object, claim, deps);
  const summary = {
    format: stored.format,
    ...(stored.device !== undefined ? { device: stored.device } : {}),
    tags: stored.tags,
    warnings: stored.warnings,
  };
  const current = await makeCurrent(deps, object, stored.runIds.length, false);
  if (current.stale) {
    // A newer version of the key (or its deletion) already won: this one's runs must not show.
    const ending = overtaken(current.by);
    await endVersion(deps, claim, { ...ending, fields: { ...summary, ...ending.fields } });
    return current.by.deleted
      ? { status: 'deleted', object, removedRuns: 0 }
      : { status: 'replaced', object, by: current.by.version };
  }
  await removeReplaced(object, current.pending, deps);
  // Before the record is ready: a redelivery after a crash here settles them again, a finished record never would.
  await settleVersions(deps, object.bucket, object.key, nowOf(deps));
  await finishUpload(
    deps,
    claim,
    'ready',
    { ...summary, runIds: stored.runIds.slice(0, MAX_LISTED_RUNS), runCount: stored.runIds.length },
    nowOf(deps),
  );
  return { status: 'ready', object, runIds: stored.runIds, warnings: stored.warnings };
}

/**
 * What a failed attempt comes to: a lost claim or a vanished object settle the
 * record, a problem with the file ends it failed, and anything else is thrown
 * for the queue to retry.
 */
async function endAfterError(
  error: unknown,
  object: ObjectRef,
  claim: Claim,
  deps: IngestDeps,
): Promise<IngestOutcome> {
  if (error instanceof ClaimLost) {
    // Another delivery of the event took it up: it writes the same items and ends the record.
    if (!error.ended) return { status: 'duplicate', object };
    // A step ended this version meanwhile (the sweeper, the dead-letter handler) and removed
    // its runs: what this delivery wrote since goes too, the record is theirs.
    await deleteRuns(deps, runIdsOf(object.bucket, object.key, object.version, claim.startedRuns), nowOf(deps));
    return { status: 'stale', object };
  }
  if (isGone(error)) {
    await endVersion(deps, claim, { status: 'deleted', message: 'the object was deleted before it was read', line: 0 });
    return { status: 'deleted', object, removedRuns: 0 };
  }
  const failure = permanentFailure(error);
  if (failure === undefined) {
    await noteAttemptError(deps, claim, describe(error)).catch(() => undefined);
    throw error;
  }
  const { message, line, details } = failure;
  await endVersion(deps, claim, { status: 'failed', message, line, fields: { details } });
  const internal = isInternalParseError(error) ? { internal: error as Error } : {};
  return { status: 'failed', object, message, line, details, ...internal };
}

/** How a version ends when a newer state of its key won while it was read. */
function overtaken(by: CurrentObject): Ending & { fields: NonNullable<Ending['fields']> } {
  if (by.deleted)
    return { status: 'deleted', message: 'the key was deleted while this version was read', line: 0, fields: {} };
  return {
    status: 'replaced',
    message: `replaced by version ${by.version}, which was ingested first`,
    line: 0,
    fields: { replacedBy: by.version },
  };
}

/** S3 no longer has the version: it was deleted between its event and its read. */
const isGone = (error: unknown) =>
  error instanceof NoSuchKey || ['NoSuchKey', 'NoSuchVersion'].includes((error as { name?: string })?.name ?? '');

// Escaped: an SDK error may quote the key, and the text reaches a terminal through details.
const describe = (error: unknown) =>
  printable(error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/** The failure a person must fix (the file, its size, its metadata), or undefined for a transient one. */
function permanentFailure(error: unknown): PermanentFailure | undefined {
  if (error instanceof PermanentFailure) return error;
  // The parser's message names the key and lists every format: the record keeps it whole in `details`.
  if (isParseError(error))
    return new PermanentFailure(error.problem, `expected ${error.expected}`, error.line, error.message);
  // A bug in a parser fails the same way on every retry: end the upload, say so, keep the stack for the log.
  if (isInternalParseError(error))
    return new PermanentFailure(
      'internal error while parsing',
      'reported (a benchdrop bug: the file needs no change)',
      error.line,
    );
  // DynamoDB refusing an item (too large, bad value) will refuse it again: no retry helps.
  if ((error as { name?: string })?.name === 'ValidationException') {
    return new PermanentFailure(
      'could not be stored',
      'report it with the details: DynamoDB refused an item',
      0,
      `could not be stored: ${(error as Error).message}`,
    );
  }
  if (error instanceof LabelError) return new PermanentFailure(error.message);
  return undefined;
}

/**
 * Remove the runs of the versions a new state replaced, then forget them; a
 * step cut off by its deadline leaves the rest to a continuation. True when done.
 */
async function removeReplaced(
  object: Pick<ObjectRef, 'bucket' | 'key' | 'version' | 'sequencer'>,
  pending: CurrentObject['pending'],
  deps: SettleDeps,
): Promise<boolean> {
  const deadline = deadlineOf(deps);
  for (const old of pending ?? []) {
    const removal = await deleteRuns(
      deps,
      runIdsOf(object.bucket, object.key, old.version, old.runCount),
      nowOf(deps),
      deadline,
    );
    if (!removal.done) {
      await deps.requeue!(
        continuationBody({ benchdrop: 'continue', step: 'remove-replaced', bucket: object.bucket, key: object.key }),
      );
      return false;
    }
  }
  if ((pending ?? []).length > 0) await finishPending(deps, object);
  return true;
}

async function removeObject(object: ObjectRef, versionDeleted: boolean, deps: IngestDeps): Promise<IngestOutcome> {
  // `delete-object --version-id V` (ObjectRemoved:Delete with a versionId) of a version
  // that is not current changes nothing visible; a delete marker always hides the key.
  if (versionDeleted && object.versionId !== undefined) {
    const existing = await currentObject(deps, object.bucket, object.key);
    if (
      existing !== undefined &&
      !existing.deleted &&
      existing.version !== object.versionId &&
      !(existing.pending ?? []).length
    ) {
      await markVersionDeleted(deps, object.bucket, object.key, object.versionId, nowOf(deps));
      return { status: 'deleted', object, removedRuns: 0 };
    }
  }
  const current = await makeCurrent(deps, object, 0, true);
  if (current.stale) return { status: 'stale', object };
  const removedRuns = current.pending.reduce((sum, old) => sum + old.runCount, 0);
  if (await removeReplaced(object, current.pending, deps))
    await settleVersions(deps, object.bucket, object.key, nowOf(deps));
  return { status: 'deleted', object, removedRuns };
}

/** Go on with a step an earlier delivery left to a continuation message. */
export async function continueIngest(continuation: Continuation, deps: SettleDeps): Promise<void> {
  if (continuation.step === 'end-version') {
    const { bucket, key, version, status, message, line, fields } = continuation;
    await continueEnding(deps, bucket, key, version, { status, message, line, ...(fields ? { fields } : {}) });
    return;
  }
  const current = await currentObject(deps, continuation.bucket, continuation.key);
  if (current === undefined || (current.pending ?? []).length === 0) return;
  const pointer = {
    bucket: continuation.bucket,
    key: continuation.key,
    version: current.version,
    sequencer: current.sequencer,
  };
  if (await removeReplaced(pointer, current.pending, deps))
    await settleVersions(deps, continuation.bucket, continuation.key, nowOf(deps));
}
