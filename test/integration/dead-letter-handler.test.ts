/**
 * The dead-letter handler (functions/dead-letter/handler.ts, the one deployed) on
 * SQS batches shaped as the event source mapping delivers them from the
 * dead-letter queue, against dynalite: uploads end `failed`, a message that cannot
 * be settled fails alone (it stays in the queue), and what it prints is what the
 * stack's alarm watches: the metric, in the namespace and with the dimensions of
 * the synthesised lab's DeadLettersAlarm, and the body a person sends back.
 */
import { randomUUID } from 'node:crypto';
import type * as DeadLetterHandler from '../../functions/dead-letter/handler.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SQSBatchResponse } from 'aws-lambda';
import {
  s3EventRecord,
  s3Notification,
  sequencerGenerator,
  sqsEvent,
  type S3NotificationRecord,
} from '../../infra/local/events.ts';
import { createDocumentClient } from '../../shared/aws.ts';
import { ENV, INGEST_LIMITS } from '../../shared/config.ts';
import { objectRefOf, type SettleDeps } from '../../shared/ingest.ts';
import { REGION, startEmulators, type Emulators } from '../../harness/emulators.ts';
import { lambdaContext, lambdaEnvironment } from '../../harness/lambda.ts';
import { getUpload } from '../../harness/table.ts';
import { capturePrinted, metricSum, type Printed } from '../infra/emf.ts';

type Module = typeof DeadLetterHandler;

/** The lab synthesised below; the handler reads it from its environment when loaded. */
const LAB = 'alpha';
let env: Emulators;
let mod: Module;
let deps: SettleDeps;
/** What the synthesised lab's alarms on dead letters and on failed attempts watch, and the function's environment there. */
let watched: { namespace: string; dimensions: Record<string, string> };
let watchedUnsettled: typeof watched;
let deployedEnvironment: Record<string, unknown>;
/** The dead-letter queue's ARN, as the event source mapping stamps every record. */
const DLQ_ARN = `arn:aws:sqs:${REGION}:123456789012:Benchdrop-alpha-IngestDeadLetterQueue48D59084-x1y2z3`;
const sequencer = sequencerGenerator(0x3000000000000n);
const uid = () => randomUUID().slice(0, 8);
const saved = { ...process.env };

beforeAll(async () => {
  // Loaded before the stack, which imports it too: as Lambda loads it, its environment set.
  lambdaEnvironment(LAB);
  mod = (await import('../../functions/dead-letter/handler.ts')) as Module;
  const { deployedAs } = await import('../infra/synth.ts');
  const deployed = deployedAs(LAB, (stack) => stack.deadLetterFunction, [
    mod.DEAD_LETTER_METRICS.deadLetters,
    mod.DEAD_LETTER_METRICS.unsettled,
  ]);
  deployedEnvironment = deployed.environment;
  [watched, watchedUnsettled] = deployed.watching as [typeof watched, typeof watched];
  env = await startEmulators();
  deps = { db: env.db, tableName: env.tableName, s3: env.s3, resultsBucket: env.resultsBucket };
}, 180_000);

afterAll(async () => {
  mod?.setDeadLetterDeps(undefined);
  await env?.stop();
  process.env = saved;
});

async function uploaded(key: string): Promise<S3NotificationRecord> {
  const put = await env.put(key, 'Diskperf V1.2\n');
  return s3EventRecord({
    eventName: 'ObjectCreated:Put',
    bucket: env.bucket,
    key,
    size: put.size,
    eTag: put.eTag,
    sequencer: sequencer(),
  });
}

const recordOf = (event: S3NotificationRecord) => {
  const { bucket, key, version } = objectRefOf(event);
  return getUpload(env, bucket, key, version);
};

/** A DLQ batch through the handler, as Lambda runs it; what it answered and printed. */
async function deliver(
  bodies: Parameters<typeof sqsEvent>[0],
  with_: SettleDeps = deps,
): Promise<{ response: SQSBatchResponse; printed: Printed; messageIds: string[] }> {
  mod.setDeadLetterDeps(with_);
  // A message reaches the dead-letter queue after maxReceiveCount receives of the ingest queue; this is its first here.
  const event = sqsEvent(bodies, { queueArn: DLQ_ARN, receiveCount: 1 });
  const { result, printed } = await capturePrinted(() =>
    mod.handler(event, lambdaContext('benchdrop-dead-letter', 300_000)),
  );
  return { response: result, printed, messageIds: event.Records.map((r) => r.messageId) };
}

const sent = (printed: Printed, name: string) => metricSum(printed, watched.namespace, watched.dimensions, name);

describe('the dead-letter handler', () => {
  it('ends every upload of a batch failed, saying how often ingest tried, and counts them where the alarm looks', async () => {
    const events = [await uploaded(`dl-${uid()}/a.txt`), await uploaded(`dl-${uid()}/b.txt`)];
    const { response, printed } = await deliver(events);
    expect(response).toEqual({ batchItemFailures: [] });
    for (const event of events) {
      expect(await recordOf(event)).toMatchObject({
        status: 'failed',
        message: expect.stringContaining(`ingest failed ${INGEST_LIMITS.maxReceiveCount} time(s) and gave up`),
      });
    }
    // The alarm's metric, in its namespace with its dimensions (the service and the lab the
    // stack puts in the function's environment): one per message.
    expect(deployedEnvironment[ENV.lab]).toBe(LAB);
    expect(watched.dimensions).toEqual({ service: mod.DEAD_LETTER_METRICS.service, lab: LAB });
    expect(sent(printed, mod.DEAD_LETTER_METRICS.deadLetters)).toBe(2);
    expect(sent(printed, mod.DEAD_LETTER_METRICS.uploadsDeadLettered)).toBe(2);
  });

  it('logs each message whole, what a person sends back to the ingest queue once the cause is fixed', async () => {
    const event = await uploaded(`dl-${uid()}/logged.txt`);
    const { printed, messageIds } = await deliver([event]);
    const [line] = printed.logs.filter((l) => l['message'] === 'dead letter settled');
    expect(line).toMatchObject({ level: 'WARN', messageId: messageIds[0], service: mod.DEAD_LETTER_METRICS.service });
    expect(JSON.parse(String(line!['body']))).toEqual(s3Notification(event));
    expect(line!['outcomes']).toEqual([{ what: 'upload', ...objectRefOfEvent(event), ended: 'ended' }]);
  });

  it('fails only the message it cannot settle: it stays in the queue, and the next delivery ends its upload', async () => {
    const good = await uploaded(`dl-${uid()}/good.txt`);
    const poisonKey = `dl-${uid()}/throttled.txt`;
    const poisoned = await uploaded(poisonKey);
    // A client whose every request about the poisoned key fails, as a throttled table would answer.
    const db = createDocumentClient({
      region: REGION,
      dynamodbEndpoint: env.dynamodbEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    db.middlewareStack.add(
      (next) => async (args) => {
        if (JSON.stringify(args.input).includes(poisonKey))
          throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
            name: 'ThrottlingException',
          });
        return next(args);
      },
      { step: 'initialize', name: 'throttlePoisonedKey' },
    );
    try {
      const { response, printed, messageIds } = await deliver([good, poisoned], {
        db,
        tableName: env.tableName,
        s3: env.s3,
        resultsBucket: env.resultsBucket,
      });
      expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: messageIds[1] }] });
      expect((await recordOf(good))?.['status']).toBe('failed');
      expect(await recordOf(poisoned)).toBeUndefined();
      expect(sent(printed, mod.DEAD_LETTER_METRICS.deadLetters)).toBe(1);
      // No function error: the failed attempt is counted for its own alarm, and logged with the body.
      expect(
        metricSum(printed, watchedUnsettled.namespace, watchedUnsettled.dimensions, mod.DEAD_LETTER_METRICS.unsettled),
      ).toBe(1);
      const [line] = printed.logs.filter((l) => l['message'] === 'dead letter not settled');
      expect(line).toMatchObject({
        level: 'ERROR',
        messageId: messageIds[1],
        error: expect.objectContaining({ name: 'ThrottlingException' }),
      });
      expect(JSON.parse(String(line!['body']))).toEqual(s3Notification(poisoned));
    } finally {
      db.destroy();
    }
    // Back from the queue after its visibility timeout, with the table answering again.
    const { response, printed } = await deliver([poisoned]);
    expect(response).toEqual({ batchItemFailures: [] });
    expect((await recordOf(poisoned))?.['status']).toBe('failed');
    expect(sent(printed, mod.DEAD_LETTER_METRICS.unsettled)).toBeUndefined();
  });

  it('consumes removals, continuations and foreign bodies without failing the batch: dead letters, but no upload ended', async () => {
    const removal = s3EventRecord({
      eventName: 'ObjectRemoved:Delete',
      bucket: env.bucket,
      key: `dl-${uid()}/gone.txt`,
      sequencer: sequencer(),
    });
    const continuation = {
      benchdrop: 'continue',
      step: 'remove-replaced',
      bucket: env.bucket,
      key: `dl-${uid()}/replaced.txt`,
    };
    const { response, printed } = await deliver([removal, continuation, 'not json at all']);
    expect(response).toEqual({ batchItemFailures: [] });
    expect(sent(printed, mod.DEAD_LETTER_METRICS.deadLetters)).toBe(3);
    expect(sent(printed, mod.DEAD_LETTER_METRICS.uploadsDeadLettered)).toBe(0);
    expect(
      printed.logs
        .filter((l) => l['message'] === 'dead letter settled')
        .map((l) => (l['outcomes'] as { what: string }[])[0]!.what),
    ).toEqual(['removal', 'continuation', 'not-an-event']);
  });
});

function objectRefOfEvent(event: S3NotificationRecord): { bucket: string; key: string; version: string } {
  const { bucket, key, version } = objectRefOf(event);
  return { bucket, key, version };
}
