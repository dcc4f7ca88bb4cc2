/**
 * The one retry of the store's batch calls: BatchWriteItem and BatchGetItem
 * answer part of a batch and hand the rest back when DynamoDB throttles. The
 * rest is sent again after an exponential backoff with jitter, a bounded number
 * of times, then the call fails (a transient error: the queue retries it).
 */

/** Calls of one batch before giving up on what DynamoDB keeps handing back. */
export const MAX_BATCH_ATTEMPTS = 8;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The wait before attempt `attempt + 1`: doubling from 50 ms, capped at 2 s, jittered by half. */
export const backoffMs = (attempt: number) => Math.min(2000, 25 * 2 ** attempt) * (0.5 + Math.random());

/**
 * Sends `batch`, then what each call hands back as unprocessed, until nothing is
 * left; `what` names the requests in the error (`items`, `keys`).
 */
export async function untilProcessed<T>(
  batch: T[],
  send: (batch: T[]) => Promise<T[]>,
  what: string,
  wait: (ms: number) => Promise<void> = sleep,
): Promise<void> {
  let rest = batch;
  for (let attempt = 1; rest.length > 0; attempt++) {
    rest = await send(rest);
    if (rest.length === 0) return;
    if (attempt >= MAX_BATCH_ATTEMPTS)
      throw new Error(
        `DynamoDB left ${rest.length} ${what} unprocessed after ${MAX_BATCH_ATTEMPTS} attempts (throttled)`,
      );
    await wait(backoffMs(attempt));
  }
}
