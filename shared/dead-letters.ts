/**
 * A message the ingest queue gave up on (every delivery failed): the uploads
 * it named end `failed` with the reason, their partial items removed, instead
 * of staying `processing`. What the message was about decides what is done:
 *
 * - an S3 ObjectCreated record: its version ends failed (a version never
 *   claimed gets a failed record, so the upload shows why it has no runs);
 * - an S3 ObjectRemoved record: nothing is undone; it is reported, and the
 *   key's pending removal stays recorded for the next event on the key;
 * - a continuation: the version it was ending is left to the sweeper.
 */
import { objectRefOf, parseContinuation } from './ingest.ts';
import type { Ending } from './ingest/continuation.ts';
import { briefMessage, nowOf, type SettleDeps } from './ingest/deps.ts';
import { endAbandoned, endVersion } from './ingest/ending.ts';
import { decodeKey, readableRecords, type S3ObjectEvent } from './ingest/s3-event.ts';
import type { UploadRecord } from './store/items.ts';
import { claimUpload, getUpload } from './store/uploads.ts';

export type DeadLetterOutcome =
  | {
      what: 'upload';
      bucket: string;
      key: string;
      version: string;
      ended: 'ended' | 'continued' | 'already-final' | 'busy';
    }
  | { what: 'removal'; bucket: string; key: string }
  | { what: 'continuation'; bucket: string; key: string }
  | { what: 'not-an-event' };

export async function failDeadLetter(body: string, deps: SettleDeps, receives: number): Promise<DeadLetterOutcome[]> {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return [{ what: 'not-an-event' }];
  }
  const continuation = parseContinuation(message);
  if (continuation !== undefined) return [{ what: 'continuation', bucket: continuation.bucket, key: continuation.key }];
  const records = readableRecords(message);
  if (records.length === 0) return [{ what: 'not-an-event' }];
  const outcomes: DeadLetterOutcome[] = [];
  for (const record of records) {
    if (!record.eventName.startsWith('ObjectCreated')) {
      outcomes.push({ what: 'removal', bucket: record.s3.bucket.name, key: decodeKey(record.s3.object.key) });
      continue;
    }
    outcomes.push(await failUpload(record, deps, receives));
  }
  return outcomes;
}

async function failUpload(record: S3ObjectEvent, deps: SettleDeps, receives: number): Promise<DeadLetterOutcome> {
  const object = objectRefOf(record);
  const seen = await getUpload(deps, object.bucket, object.key, object.version);
  const where = { what: 'upload' as const, bucket: object.bucket, key: object.key, version: object.version };
  if (seen !== undefined && seen.status !== 'processing') return { ...where, ended: 'already-final' };
  const ending = gaveUpEnding(receives, seen);
  if (seen !== undefined) return { ...where, ended: (await endAbandoned(deps, seen, ending)) ?? 'busy' };
  // Never claimed (every delivery failed before it could): a record of its own says why.
  const claim = await claimUpload(deps, object, nowOf(deps));
  return { ...where, ended: claim === undefined ? 'busy' : await endVersion(deps, claim, ending) };
}

/** A short message saying what to do; the last error, which may be long, goes in `details`. */
function gaveUpEnding(receives: number, record: UploadRecord | undefined): Ending {
  const problem = `ingest failed ${receives} time(s) and gave up`;
  const todo = 'its partial runs were removed: upload the file again';
  const last = record?.lastError ? `; the last error was: ${record.lastError}` : '';
  return {
    status: 'failed',
    message: briefMessage(problem, todo),
    line: 0,
    fields: { details: `${problem}${last}; ${todo}` },
  };
}
