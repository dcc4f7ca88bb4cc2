/**
 * The sweeper: ends every `processing` record no delivery can still finish.
 * A delivery notes its progress at least every minute, and a message is
 * delivered at most INGEST_LIMITS.maxReceiveCount times of at most the
 * function timeout each: a record older than that (STUCK_AFTER_MS) belongs to a
 * delivery that died (crash, timeout, out of memory) and a message that is gone.
 * It is ended `failed`, its partial items removed (shared/ingest/ending.ts).
 */
import { STUCK_AFTER_MS } from './config.ts';
import type { Ending } from './ingest/continuation.ts';
import { briefMessage, invocationDeadline, nowOf, type SettleDeps } from './ingest/deps.ts';
import { endAbandoned } from './ingest/ending.ts';
import { statusPk } from './store/keys.ts';
import type { UploadRecord } from './store/items.ts';
import { queryPages } from './store/store.ts';
import { INDEXES } from './store/table.ts';

export interface SweepOptions {
  /** Age past which a `processing` record is stuck (default STUCK_AFTER_MS). */
  olderThanMs?: number;
}

export interface Sweep {
  /** Records found past their time. */
  overdue: number;
  /** Of those, ended `failed` with their items removed. */
  ended: number;
  /** Of those, left to a continuation message (their removal goes on). */
  continued: number;
}

export async function sweepStuckUploads(deps: SettleDeps, options: SweepOptions = {}): Promise<Sweep> {
  const olderThanMs = options.olderThanMs ?? STUCK_AFTER_MS;
  const cutoff = new Date(Date.parse(nowOf(deps)) - olderThanMs).toISOString();
  // Checked between records, not within one: a record's removal that is cut off resumes at its next sweep.
  const deadline = invocationDeadline(deps);
  const sweep: Sweep = { overdue: 0, ended: 0, continued: 0 };
  const overdue = queryPages<UploadRecord>(deps, {
    IndexName: INDEXES.byStatus.name,
    // gsi2sk starts with updatedAt (keys.statusSk): older records sort first.
    KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk < :cutoff',
    ExpressionAttributeValues: { ':pk': statusPk('processing'), ':cutoff': cutoff },
    Limit: 100,
  });
  for await (const page of overdue) {
    for (const record of page) {
      sweep.overdue++;
      const ended = await endAbandoned(deps, record, stuckEnding(record, olderThanMs));
      if (ended === 'ended') sweep.ended++;
      if (ended === 'continued') sweep.continued++;
      if (deadline.passed()) return sweep;
    }
  }
  return sweep;
}

/** A short message saying what to do; the last error, which may be long, goes in `details`. */
function stuckEnding(record: UploadRecord, olderThanMs: number): Ending {
  const minutes = Math.round(olderThanMs / 60_000);
  const problem = `ingest did not finish within ${minutes} minutes (crashed, timed out or out of memory)`;
  const todo = 'its partial runs were removed: upload the file again';
  const last = record.lastError ? `; the last error was: ${record.lastError}` : '';
  return {
    status: 'failed',
    message: briefMessage(problem, todo),
    line: 0,
    fields: { details: `${problem}${last}; ${todo}` },
  };
}
