/**
 * What ingestion runs on, and the two things every step of it shares: the
 * failure a person must fix, and the deadline a step stops at to go on in a
 * continuation message.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { printable } from '../printable.ts';
import { NO_DEADLINE, type Deadline } from '../store/removal.ts';
import type { Store } from '../store/store.ts';

export interface SettleDeps extends Store {
  now?: () => string;
  /** Time left to this invocation (Lambda's getRemainingTimeInMillis); unbounded when absent. */
  remainingMs?: () => number;
  /**
   * Send a message to the ingest queue: a step that could not finish before the
   * deadline sends its continuation. Without it, a step runs to its end.
   */
  requeue?: (body: string) => Promise<void>;
}

export interface IngestDeps extends SettleDeps {
  s3: S3Client;
  maxUploadBytes: number;
  /** Most series (devices x runs) one file may hold (default LAB_DEFAULTS.maxSeriesPerFile). */
  maxSeriesPerFile?: number;
}

export const nowOf = (deps: SettleDeps): string => (deps.now ?? (() => new Date().toISOString()))();

/** Time a step keeps in hand when it stops for a continuation: a page of removal takes seconds. */
export const STOP_BEFORE_MS = 60_000;

/** The invocation's own end, STOP_BEFORE_MS ahead of its timeout (never, without one). */
export function invocationDeadline(deps: SettleDeps): Deadline {
  const remaining = deps.remainingMs;
  return remaining === undefined ? NO_DEADLINE : { passed: () => remaining() < STOP_BEFORE_MS };
}

/** When to stop and continue in another message: only a step that can send one has a deadline. */
export function deadlineOf(deps: SettleDeps): Deadline {
  return deps.requeue === undefined ? NO_DEADLINE : invocationDeadline(deps);
}

/** Something wrong with the file itself (its bytes, size or metadata): no retry will help. */
export class PermanentFailure extends Error {
  constructor(
    message: string,
    readonly line = 0,
  ) {
    // Messages name the key, which may hold any character: escaped, they are safe to print.
    super(printable(message));
  }
}
