/**
 * BatchWriter against a DynamoDB that throttles: UnprocessedItems are a fault
 * dynalite never produces, so a client that returns them stands in for it.
 */
import type { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { BATCH_SIZE, BatchWriter, finite } from '../../../shared/store/batch.ts';

type Request = { PutRequest?: { Item: Record<string, unknown> }; DeleteRequest?: { Key: Record<string, unknown> } };

/** Accepts at most `accept` requests per call and returns the rest as unprocessed, `throttledCalls` times. */
function throttlingClient(accept: number, throttledCalls: number) {
  const calls: Request[][] = [];
  let throttled = 0;
  const client = {
    async send(command: BatchWriteCommand) {
      const requests = (command.input.RequestItems?.['t'] ?? []) as Request[];
      calls.push(requests);
      if (throttled < throttledCalls && requests.length > accept) {
        throttled++;
        return { UnprocessedItems: { t: requests.slice(accept) } };
      }
      return { UnprocessedItems: {} };
    },
  };
  return { client: client as unknown as DynamoDBDocumentClient, calls };
}

const noSleep = async () => {};

describe('BatchWriter', () => {
  it('writes in groups of 25 and retries unprocessed items until all are written', async () => {
    const { client, calls } = throttlingClient(10, 3);
    const writer = new BatchWriter(client, 't', noSleep);
    for (let i = 0; i < 60; i++) writer.put({ pk: `p${i}`, sk: 's' });
    await writer.flush();
    expect(writer.written).toBe(60);
    expect(calls.every((c) => c.length <= BATCH_SIZE)).toBe(true);
    // Every item went out, unprocessed ones again in later calls.
    const accepted = new Set(calls.flat().map((r) => r.PutRequest!.Item['pk']));
    expect(accepted.size).toBe(60);
    expect(calls.length).toBeGreaterThan(3);
  });

  it('gives up with an error (a transient failure for the queue to retry) when throttling never ends', async () => {
    const { client } = throttlingClient(0, Number.POSITIVE_INFINITY);
    const writer = new BatchWriter(client, 't', noSleep);
    writer.put({ pk: 'a', sk: 's' });
    await expect(writer.flush()).rejects.toThrow(/unprocessed after 8 attempts/);
  });

  it('fails only after every group of the round has settled, so cleanup cannot race writes in flight', async () => {
    const events: string[] = [];
    let call = 0;
    const client = {
      async send(command: BatchWriteCommand) {
        const n = call++;
        const first = String(((command.input.RequestItems?.['t'] ?? []) as Request[])[0]?.PutRequest?.Item['pk']);
        if (n === 0) throw new Error('InternalServerError');
        await new Promise((resolve) => setTimeout(resolve, 30));
        events.push(`landed ${first}`);
        return { UnprocessedItems: {} };
      },
    } as unknown as DynamoDBDocumentClient;
    const writer = new BatchWriter(client, 't', noSleep);
    for (let i = 0; i < 2 * BATCH_SIZE; i++) writer.put({ pk: `p${i}`, sk: 's' });
    await expect(writer.flush().finally(() => events.push('flush settled'))).rejects.toThrow('InternalServerError');
    // The second group's write landed before the caller heard of the failure.
    expect(events).toEqual([`landed p${BATCH_SIZE}`, 'flush settled']);
  });

  it('never puts two writes of one key in the same group', async () => {
    const { client, calls } = throttlingClient(25, 0);
    const writer = new BatchWriter(client, 't', noSleep);
    writer.put({ pk: 'same', sk: 's', n: 1 });
    writer.put({ pk: 'same', sk: 's', n: 2 });
    writer.put({ pk: 'other', sk: 's' });
    await writer.flush();
    expect(calls.map((c) => c.map((r) => r.PutRequest!.Item['n'] ?? '-'))).toEqual([[1, '-'], [2]]);
  });

  it('stores values nobody can measure (NaN, Infinity) as null', () => {
    expect(finite({ a: 1, b: Number.NaN, c: [Infinity, 2], d: { e: -Infinity }, f: 'x', g: undefined })).toEqual({
      a: 1,
      b: null,
      c: [null, 2],
      d: { e: null },
      f: 'x',
    });
  });

  it('keeps binary attributes as bytes, the same array, not a map of numbered bytes', () => {
    const packed = new Uint8Array([31, 139, 8, 0]);
    const copy = finite({ pk: 'RUN#1', packedSeries: packed }) as { packedSeries: unknown };
    expect(copy.packedSeries).toBe(packed);
  });

  it('stores numbers beyond DynamoDB range (1e126 and up) as null and ones below 1e-130 as 0', () => {
    expect(finite({ big: 1e308, edge: 1e125, small: 1e-200, neg: -1e200, zero: 0, fine: 2 ** 60 })).toEqual({
      big: null,
      edge: 1e125,
      small: 0,
      neg: null,
      zero: 0,
      fine: 2 ** 60,
    });
  });
});
