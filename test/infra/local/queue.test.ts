/**
 * The local lab's queue: batches, partial-failure retries, the dead-letter list
 * after the last receive, and messages kept when it stops before they are done.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { s3EventRecord, s3Notification } from '../../../infra/local/events.ts';
import { LocalQueue } from '../../../infra/local/queue.ts';

const context = () => ({}) as Context;
const note = (key: string) => s3Notification(s3EventRecord({ eventName: 'ObjectCreated:Put', bucket: 'b', key, size: 1, eTag: 'e' }));
const keyOf = (body: string) => (JSON.parse(body) as { Records: { s3: { object: { key: string } } }[] }).Records[0]!.s3.object.key;

describe('LocalQueue', () => {
  it('delivers SQS-shaped batches of at most 10 and retries only the failed messages', async () => {
    const seen: string[][] = [];
    const attempts = new Map<string, number>();
    const queue = new LocalQueue({
      context,
      retryDelayMs: 5,
      batchWindowMs: 5,
      handler: async (event: SQSEvent): Promise<SQSBatchResponse> => {
        seen.push(event.Records.map((r) => keyOf(r.body)));
        const failures = event.Records.filter((r) => {
          const key = keyOf(r.body);
          attempts.set(key, (attempts.get(key) ?? 0) + 1);
          return key === 'flaky' && attempts.get(key)! < 2;
        });
        expect(event.Records.every((r) => r.eventSource === 'aws:sqs' && Number(r.attributes.ApproximateReceiveCount) === attempts.get(keyOf(r.body)))).toBe(true);
        return { batchItemFailures: failures.map((r) => ({ itemIdentifier: r.messageId })) };
      },
    });
    for (let i = 0; i < 11; i++) queue.send(note(`k${i}`));
    queue.send(note('flaky'));
    await queue.idle();
    expect(seen[0]).toHaveLength(10);
    expect(attempts.get('flaky')).toBe(2);
    expect(queue.delivered).toBe(12);
    expect(queue.deadLetters).toEqual([]);
  });

  it('moves a message to the dead-letter list after the last receive, and a throwing handler fails the batch', async () => {
    const dead: string[] = [];
    const queue = new LocalQueue({
      context,
      retryDelayMs: 1,
      batchWindowMs: 1,
      maxReceiveCount: 3,
      onDeadLetter: (letter) => dead.push(keyOf(letter.body)),
      handler: async () => {
        throw new Error('always down');
      },
    });
    queue.send(note('doomed'));
    await queue.idle();
    expect(dead).toEqual(['doomed']);
    expect(queue.deadLetters[0]!.receives).toBe(3);
  });

  it('keeps what it has not delivered when stopped, to be sent again on the next start', async () => {
    let release: () => void = () => {};
    const queue = new LocalQueue({
      context,
      batchWindowMs: 1,
      batchSize: 1,
      handler: () => new Promise<void>((r) => (release = r)),
    });
    queue.send(note('in-flight'));
    queue.send(note('waiting'));
    await new Promise((r) => setTimeout(r, 20));
    const stopped = queue.stop();
    release();
    await stopped;
    expect(queue.pendingBodies().map(keyOf)).toEqual(['waiting']);
  });
});
