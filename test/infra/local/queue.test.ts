/**
 * The local lab's queue: SQS-shaped batches, partial-failure retries, the
 * dead-letter list after the last receive; its journal (a message is on disk
 * when send returns, its receive count before each delivery, gone only once done
 * with; a new queue on the same folder delivers what the last one left, as after
 * a crash); and its workers (a slow message holds one of them, not the queue).
 * Real timers and real files; the handlers are the test's own.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3EventRecord, s3Notification } from '../../../infra/local/events.ts';
import { adoptPendingFile, Journal, type JournalEntry } from '../../../infra/local/journal.ts';
import { LocalQueue } from '../../../infra/local/queue.ts';

const context = () => ({}) as Context;
const note = (key: string) =>
  s3Notification(s3EventRecord({ eventName: 'ObjectCreated:Put', bucket: 'b', key, size: 1, eTag: 'e' }));
const keyOf = (body: string) =>
  (JSON.parse(body) as { Records: { s3: { object: { key: string } } }[] }).Records[0]!.s3.object.key;
const receiveCount = (event: SQSEvent) => Number(event.Records[0]!.attributes.ApproximateReceiveCount);

let scratch: string;
let folders = 0;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'benchdrop-queue-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A fresh data folder's journal (or the same folder's again, as a restarted lab opens it). */
function journalIn(dir = join(scratch, `lab-${++folders}`)): Journal {
  return new Journal(join(dir, 'queue'), join(dir, 'dead-letters.jsonl'));
}

function entries(journal: Journal): JournalEntry[] {
  return readdirSync(journal.dir)
    .sort()
    .map((name) => JSON.parse(readFileSync(join(journal.dir, name), 'utf8')) as JournalEntry);
}

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

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
        expect(
          event.Records.every(
            (r) =>
              r.eventSource === 'aws:sqs' &&
              Number(r.attributes.ApproximateReceiveCount) === attempts.get(keyOf(r.body)),
          ),
        ).toBe(true);
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

  it('dead-letters a message after the last receive, into dead-letters.jsonl and onDeadLetter; a throwing handler fails the batch', async () => {
    const dead: string[] = [];
    const journal = journalIn();
    const queue = new LocalQueue({
      context,
      journal,
      retryDelayMs: 1,
      batchWindowMs: 1,
      maxReceiveCount: 3,
      onDeadLetter: (letter) => {
        dead.push(keyOf(letter.body));
      },
      handler: async () => {
        throw new Error('always down');
      },
      onError: () => {},
    });
    queue.send(note('doomed'));
    await queue.idle();
    expect(dead).toEqual(['doomed']);
    expect(queue.deadLetters[0]!.receives).toBe(3);
    const lines = readFileSync(journal.deadLetterFile, 'utf8').trim().split('\n');
    expect(
      lines.map((l) => JSON.parse(l) as { receives: number; body: string }).map((l) => [keyOf(l.body), l.receives]),
    ).toEqual([['doomed', 3]]);
    expect(readdirSync(journal.dir)).toEqual([]);
  });
});

describe('LocalQueue journal', () => {
  it('has a message on disk when send returns, counts each receive on disk before the handler sees it, and removes it once handled', async () => {
    const journal = journalIn();
    const onDiskDuring: JournalEntry[][] = [];
    const queue = new LocalQueue({
      context,
      journal,
      held: true,
      batchWindowMs: 1,
      handler: async () => {
        onDiskDuring.push(entries(journal));
      },
    });
    queue.send(note('kept'));
    // Before any delivery (the queue is held): already on disk, whole.
    const [sent] = entries(journal);
    expect(sent).toMatchObject({ receives: 0 });
    expect(keyOf(sent!.body)).toBe('kept');
    expect(readdirSync(journal.dir).every((name) => name.endsWith('.json'))).toBe(true);
    queue.start();
    await queue.idle();
    expect(onDiskDuring).toEqual([[{ ...sent, receives: 1 }]]);
    expect(readdirSync(journal.dir)).toEqual([]);
  });

  it('delivers again on the next start what a lab that died left, receive counts carried on', async () => {
    const dir = join(scratch, 'crashed');
    const hung = gate();
    let firstReceives = 0;
    const dying = new LocalQueue({
      context,
      journal: journalIn(dir),
      batchSize: 1,
      batchWindowMs: 1,
      // The first delivery never ends: the lab dies in it.
      handler: async (event) => {
        firstReceives = receiveCount(event);
        await hung.opened;
      },
    });
    dying.send(note('in-flight'));
    dying.send(note('waiting'));
    await until(() => firstReceives > 0);

    const seen: [string, number][] = [];
    const restarted = new LocalQueue({
      context,
      journal: journalIn(dir),
      held: true,
      batchWindowMs: 1,
      handler: async (event) =>
        void seen.push(
          ...event.Records.map(
            (r) => [keyOf(r.body), Number(r.attributes.ApproximateReceiveCount)] as [string, number],
          ),
        ),
    });
    expect(restarted.start()).toEqual({ resumed: 2, exhausted: 0, unreadable: [] });
    await restarted.idle();
    expect(seen).toEqual([
      ['in-flight', 2],
      ['waiting', 1],
    ]);
    expect(readdirSync(join(dir, 'queue'))).toEqual([]);
  });

  it('dead-letters on start, without another delivery, a message whose last receive never ended, and lists it once however often the lab dies', async () => {
    const dir = join(scratch, 'exhausted');
    const journal = journalIn(dir);
    const entry: JournalEntry = {
      messageId: 'm-exhausted',
      seq: 7,
      sentAt: new Date().toISOString(),
      receives: 3,
      body: JSON.stringify(note('exhausted')),
    };
    journal.write(entry);

    for (let start = 0; start < 2; start++) {
      const letters: string[] = [];
      let deliveries = 0;
      const queue = new LocalQueue({
        context,
        journal: journalIn(dir),
        held: true,
        maxReceiveCount: 3,
        onDeadLetter: (letter) => void letters.push(letter.messageId),
        handler: async () => void deliveries++,
      });
      expect(queue.start()).toEqual({ resumed: 1, exhausted: 1, unreadable: [] });
      await queue.idle();
      expect({ letters, deliveries }).toEqual({ letters: ['m-exhausted'], deliveries: 0 });
      // As if the lab died after listing the letter but before dropping the message.
      journal.write(entry);
    }
    const listed = readFileSync(journal.deadLetterFile, 'utf8').trim().split('\n');
    expect(listed.map((l) => (JSON.parse(l) as { messageId: string }).messageId)).toEqual(['m-exhausted']);
  });

  it('finishes what a crash cut short: a whole temporary file is the newest state, a torn one is set aside', async () => {
    const journal = journalIn();
    const whole: JournalEntry = {
      messageId: 'm-whole',
      seq: 1,
      sentAt: new Date().toISOString(),
      receives: 1,
      body: JSON.stringify(note('whole')),
    };
    writeFileSync(join(journal.dir, `000000000001-m-whole.json.tmp`), JSON.stringify(whole));
    writeFileSync(
      join(journal.dir, `000000000002-m-torn.json.tmp`),
      JSON.stringify({ ...whole, messageId: 'm-torn' }).slice(0, 40),
    );
    const seen: [string, number][] = [];
    const queue = new LocalQueue({
      context,
      journal,
      held: true,
      batchWindowMs: 1,
      handler: async (event) => void seen.push([keyOf(event.Records[0]!.body), receiveCount(event)]),
    });
    expect(queue.start()).toEqual({ resumed: 1, exhausted: 0, unreadable: ['000000000002-m-torn.json.tmp'] });
    await queue.idle();
    expect(seen).toEqual([['whole', 2]]);
  });

  it('prepares an unprepared message once, before its first delivery, and keeps the prepared body for every later one', async () => {
    const journal = journalIn();
    const prepared: string[] = [];
    const bodies: string[] = [];
    const queue = new LocalQueue({
      context,
      journal,
      batchWindowMs: 1,
      retryDelayMs: 1,
      prepare: async (body) => {
        prepared.push(keyOf(body));
        if (keyOf(body) === 'gone') return undefined;
        if (keyOf(body) === 'unreachable') throw new Error('S3 did not answer');
        return JSON.stringify({ ...JSON.parse(body), prepared: true });
      },
      onError: () => {},
      handler: async (event): Promise<SQSBatchResponse> => {
        bodies.push(...event.Records.map((r) => r.body));
        // Fail the first delivery, so that the second shows which body it carries.
        return {
          batchItemFailures:
            receiveCount(event) === 1 ? event.Records.map((r) => ({ itemIdentifier: r.messageId })) : [],
        };
      },
    });
    queue.send(note('object'), { unprepared: true });
    queue.send(note('gone'), { unprepared: true });
    queue.send(note('unreachable'), { unprepared: true });
    await queue.idle();
    expect(prepared).toEqual(['object', 'gone', 'unreachable', 'unreachable', 'unreachable']);
    expect(bodies.map((b) => (JSON.parse(b) as { prepared?: boolean }).prepared)).toEqual([true, true]);
    expect(queue.deadLetters.map((l) => keyOf(l.body))).toEqual(['unreachable']);
    expect(readdirSync(journal.dir)).toEqual([]);
  });

  it('stops after the batch in flight and keeps the rest on disk for the next start', async () => {
    const dir = join(scratch, 'stopped');
    const release = gate();
    const first = new LocalQueue({
      context,
      journal: journalIn(dir),
      batchWindowMs: 1,
      batchSize: 1,
      handler: () => release.opened,
    });
    first.send(note('in-flight'));
    first.send(note('waiting'));
    await until(() => first.inFlight === 1);
    const stopped = first.stop();
    release.open();
    await stopped;
    expect(entries(journalIn(dir)).map((e) => keyOf(e.body))).toEqual(['waiting']);

    const seen: string[] = [];
    const next = new LocalQueue({
      context,
      journal: journalIn(dir),
      batchWindowMs: 1,
      handler: async (event) => void seen.push(...event.Records.map((r) => keyOf(r.body))),
    });
    await next.idle();
    expect(seen).toEqual(['waiting']);
  });

  it('takes over the pending-messages.jsonl an earlier version left, once', async () => {
    const dir = join(scratch, 'upgraded');
    const journal = journalIn(dir);
    const file = join(dir, 'pending-messages.jsonl');
    writeFileSync(file, `${JSON.stringify(note('old-1'))}\n${JSON.stringify(note('old-2'))}\n`);
    const seen: string[] = [];
    const queue = new LocalQueue({
      context,
      journal,
      held: true,
      batchWindowMs: 1,
      handler: async (event) => void seen.push(...event.Records.map((r) => keyOf(r.body))),
    });
    expect(adoptPendingFile(file, (body) => queue.sendBody(body))).toBe(2);
    expect(existsSync(file)).toBe(false);
    expect(entries(journal).map((e) => keyOf(e.body))).toEqual(['old-1', 'old-2']);
    queue.start();
    await queue.idle();
    expect(seen).toEqual(['old-1', 'old-2']);
    expect(adoptPendingFile(file, () => expect.unreachable())).toBe(0);
  });
});

describe('LocalQueue workers', () => {
  it('does not let a slow message delay another one, and has at most `workers` batches in flight', async () => {
    const slow = gate();
    const done = new Map<string, number>();
    let inFlight = 0;
    let most = 0;
    const queue = new LocalQueue({
      context,
      journal: journalIn(),
      workers: 4,
      batchSize: 1,
      batchWindowMs: 0,
      handler: async (event) => {
        const key = keyOf(event.Records[0]!.body);
        most = Math.max(most, ++inFlight);
        if (key.startsWith('slow')) await slow.opened;
        else await new Promise((r) => setTimeout(r, 20));
        inFlight--;
        done.set(key, Date.now());
      },
    });
    const sent = Date.now();
    queue.send(note('slow-0'));
    queue.send(note('fast-0'));
    await until(() => done.has('fast-0'));
    // The fast one went by while the slow one still held its worker.
    expect(done.get('fast-0')! - sent).toBeLessThan(1_000);
    expect(done.has('slow-0')).toBe(false);

    for (let i = 1; i < 6; i++) queue.send(note(`slow-${i}`));
    await until(() => inFlight === 4);
    await new Promise((r) => setTimeout(r, 100));
    // Bounded: six slow ones, four workers.
    expect({ inFlight, most, waiting: queue.depth - inFlight }).toEqual({ inFlight: 4, most: 4, waiting: 2 });
    slow.open();
    await queue.idle();
    expect(done.size).toBe(7);
  });
});

/** Polls a condition every 5 ms, for at most 5 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((r) => setTimeout(r, 5));
  }
}
