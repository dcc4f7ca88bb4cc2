/**
 * Batched writes: BatchWriteItem in groups of 25 (no duplicate keys in one
 * group), UnprocessedItems retried with exponential backoff, and a bounded queue
 * so a long log is written while it is still being read.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { sleep as wait, untilProcessed } from './retry.ts';

type WriteRequest =
  { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Record<string, unknown> } };

export const BATCH_SIZE = 25;
/** Requests in flight: a long log is written without waiting on each call in turn. */
export const WRITE_CONCURRENCY = 4;

export class BatchWriter {
  private queue: WriteRequest[] = [];
  /** Items written (puts and deletes), for metrics and tests. */
  written = 0;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly sleep: (ms: number) => Promise<void> = wait,
    /** BatchWriteItem calls in flight at once. */
    private readonly concurrency = WRITE_CONCURRENCY,
  ) {}

  get pending(): number {
    return this.queue.length;
  }

  put(item: object): void {
    this.queue.push({ PutRequest: { Item: finite(item) as Record<string, unknown> } });
  }

  delete(key: { pk: string; sk: string }): void {
    this.queue.push({ DeleteRequest: { Key: key } });
  }

  /** Write everything queued. */
  async flush(): Promise<void> {
    while (this.queue.length > 0) await this.writeRound(takeRound(this.queue, this.concurrency));
  }

  /** Write full groups only, when enough are queued (called while parsing). */
  async flushFull(threshold = BATCH_SIZE * this.concurrency * 2): Promise<void> {
    if (this.queue.length < threshold) return;
    while (this.queue.length >= BATCH_SIZE * this.concurrency)
      await this.writeRound(takeRound(this.queue, this.concurrency));
  }

  /** Groups of one round go out together: no key appears twice in a round, so order within a key holds. */
  private async writeRound(round: WriteRequest[][]): Promise<void> {
    // Wait for every group before failing: a caller that cleans up after an error
    // must not race writes of this round that are still in flight.
    const results = await Promise.allSettled(round.map((group) => this.writeGroup(group)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async writeGroup(group: WriteRequest[]): Promise<void> {
    const send = async (requests: WriteRequest[]) => {
      const result = await this.db.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }));
      const unprocessed = (result.UnprocessedItems?.[this.tableName] ?? []) as WriteRequest[];
      this.written += requests.length - unprocessed.length;
      return unprocessed;
    };
    await untilProcessed(group, send, 'items', this.sleep);
  }
}

/** DynamoDB numbers: magnitudes from 1e-130 to under 1e126. */
const DYNAMODB_MAX = 1e125;
const DYNAMODB_MIN = 1e-130;

/**
 * A copy with every number DynamoDB cannot store as null (NaN, Infinity from a
 * printed 1e400, magnitudes of 1e126 and more) and tinier ones as 0: a value
 * nobody can measure is no value, and no item may make the write fail.
 */
export function finite(value: unknown): unknown {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || Math.abs(value) > DYNAMODB_MAX) return null;
    return value !== 0 && Math.abs(value) < DYNAMODB_MIN ? 0 : value;
  }
  if (Array.isArray(value)) return value.map(finite);
  // Binary attributes (a packed series) hold bytes, not numbers: they go as they are.
  if (ArrayBuffer.isView(value)) return value;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = finite(v);
    return out;
  }
  return value;
}

/** Up to `count` groups whose keys are all distinct (a later write to a key waits for the next round). */
function takeRound(queue: WriteRequest[], count: number): WriteRequest[][] {
  const seen = new Set<string>();
  const round: WriteRequest[][] = [];
  while (round.length < count && queue.length > 0) {
    const group = takeGroup(queue, seen);
    if (group.length === 0) break;
    round.push(group);
  }
  return round;
}

/** Up to 25 requests whose keys are not in `seen` (which they join); one pass over the queue. */
function takeGroup(queue: WriteRequest[], seen: Set<string>): WriteRequest[] {
  const group: WriteRequest[] = [];
  let kept = 0;
  for (let i = 0; i < queue.length; i++) {
    const request = queue[i]!;
    if (group.length < BATCH_SIZE) {
      const key = 'PutRequest' in request ? request.PutRequest.Item : request.DeleteRequest.Key;
      const id = `${String(key['pk'])}\u0000${String(key['sk'])}`;
      if (!seen.has(id)) {
        seen.add(id);
        group.push(request);
        continue;
      }
    }
    queue[kept++] = request;
  }
  queue.length = kept;
  return group;
}
