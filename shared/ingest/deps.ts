/**
 * What ingestion runs on, and the two things every step of it shares: the
 * failure a person must fix, and the deadline a step stops at to go on in a
 * continuation message.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { createS3Client, optionsFromEnv } from '../aws.ts';
import { ENV, envString } from '../config.ts';
import { printable } from '../printable.ts';
import { NO_DEADLINE, type Deadline, type RunStore } from '../store/removal.ts';

/** Removing a version's runs deletes their samples objects too: every step that settles has the results bucket. */
export interface SettleDeps extends RunStore {
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
  /** Reads the drop bucket and writes the results bucket. */
  s3: S3Client;
  maxUploadBytes: number;
  /** Most series (devices x runs) one file may hold (default LAB_DEFAULTS.maxSeriesPerFile). */
  maxSeriesPerFile?: number;
  /** Samples buffered before every partial row group is written (default MAX_BUFFERED_SAMPLES, stream-runs.ts). */
  bufferedSamples?: number;
}

/** The results bucket the stack names in the environment (ENV.resultsBucket), and a client for it. */
export function resultsBucketFromEnv(env: NodeJS.ProcessEnv = process.env): { s3: S3Client; resultsBucket: string } {
  return { s3: createS3Client(optionsFromEnv(env)), resultsBucket: envString(env, ENV.resultsBucket) };
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

/** Longest `message` an upload record holds (under 200 characters); the whole text is its `details`. */
export const MAX_MESSAGE_LENGTH = 190;

/** `text` cut to `max` code points, ending in an ellipsis when cut. */
function cut(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

const length = (text: string) => Array.from(text).length;

/**
 * A record's message: the line (when it is about one), what is wrong, and what
 * to do, in MAX_MESSAGE_LENGTH. When both parts do not fit, the longer is cut,
 * never below half the room, so each keeps its start; the key is never in it,
 * as every printer says the key itself.
 */
export function briefMessage(problem: string, todo = '', line = 0): string {
  const where = line > 0 ? `line ${line}: ` : '';
  const [p, t] = [printable(problem), printable(todo)];
  if (!t) return cut(`${where}${p}`, MAX_MESSAGE_LENGTH);
  const room = MAX_MESSAGE_LENGTH - where.length - 2;
  const half = Math.floor(room / 2);
  const tRoom = length(p) <= half ? room - length(p) : Math.max(half, room - length(p));
  const shortTodo = cut(t, tRoom);
  return `${where}${cut(p, room - length(shortTodo))}; ${shortTodo}`;
}

/** Something wrong with the file itself (its bytes, size or metadata): no retry will help. */
export class PermanentFailure extends Error {
  /** The whole text: a parser's full explanation, an error as it was thrown. */
  readonly details: string;

  constructor(
    problem: string,
    todo = '',
    readonly line = 0,
    details?: string,
  ) {
    // Problems may quote the key or the file, which may hold any character: escaped, they are safe to print.
    super(briefMessage(problem, todo, line));
    this.details = printable(
      details ?? [line > 0 ? `line ${line}: ${problem}` : problem, todo].filter(Boolean).join('; '),
    );
  }
}
