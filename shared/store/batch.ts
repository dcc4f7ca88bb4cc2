/**
 * Batched writes: BatchWriteItem in groups of 25 (no duplicate keys in one
 * group), UnprocessedItems retried with exponential backoff, and a bounded queue
 * so a long log is written while it is still being read.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

type WriteRequest = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Record<string, unknown> } };

export const BATCH_SIZE = 25;
const MAX_ATTEMPTS = 8;

export class BatchWriter {
  private queue: WriteRequest[] = [];
  /** Items written (puts and deletes), for metrics and tests. */
  written = 0;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
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
    while (this.queue.length > 0) {
      const group = takeGroup(this.queue);
      await this.writeGroup(group);
    }
  }

  /** Write full groups only, when enough are queued (called while parsing). */
  async flushFull(threshold = BATCH_SIZE * 4): Promise<void> {
    if (this.queue.length < threshold) return;
    while (this.queue.length >= BATCH_SIZE) await this.writeGroup(takeGroup(this.queue));
  }

  private async writeGroup(group: WriteRequest[]): Promise<void> {
    let requests = group;
    for (let attempt = 1; requests.length > 0; attempt++) {
      const result = await this.db.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }));
      const unprocessed = (result.UnprocessedItems?.[this.tableName] ?? []) as WriteRequest[];
      this.written += requests.length - unprocessed.length;
      requests = unprocessed;
      if (requests.length === 0) return;
      if (attempt >= MAX_ATTEMPTS) throw new Error(`DynamoDB left ${requests.length} items unprocessed after ${MAX_ATTEMPTS} attempts (throttled)`);
      await this.sleep(Math.min(2000, 25 * 2 ** attempt) * (0.5 + Math.random()));
    }
  }
}

/**
 * A copy with every non-finite number (NaN, Infinity from a printed 1e400) as null:
 * DynamoDB cannot store them, and a value nobody can measure is no value.
 */
export function finite(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return value.map(finite);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = finite(v);
    return out;
  }
  return value;
}

/** Up to 25 requests with distinct keys (a later write to the same key waits for the next group). */
function takeGroup(queue: WriteRequest[]): WriteRequest[] {
  const group: WriteRequest[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < queue.length && group.length < BATCH_SIZE; ) {
    const request = queue[i]!;
    const key = 'PutRequest' in request ? request.PutRequest.Item : request.DeleteRequest.Key;
    const id = `${String(key['pk'])}\u0000${String(key['sk'])}`;
    if (seen.has(id)) {
      i++;
      continue;
    }
    seen.add(id);
    group.push(request);
    queue.splice(i, 1);
  }
  return group;
}
