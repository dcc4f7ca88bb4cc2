/**
 * The ingest Lambda: SQS batches of S3 event notifications in, partial batch
 * failures out. It validates each message, skips S3's test event, and hands every
 * S3 record to shared/ingest.ts; a record that throws (a transient error) fails
 * only its own message, which SQS retries and finally moves to the dead-letter queue.
 * A continuation (a step an earlier delivery stopped at its deadline) goes on;
 * a message the invocation has no time left to start is sent again, not failed.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createS3Client, INGEST_DYNAMODB_ATTEMPTS, optionsFromEnv, storeFromEnv } from '../../shared/aws.ts';
import { ENV, envString, METRICS_NAMESPACE, SERVICES, uploadLimitsFromEnv } from '../../shared/config.ts';
import {
  continueIngest,
  ingestRecord,
  parseContinuation,
  type IngestDeps,
  type IngestOutcome,
} from '../../shared/ingest.ts';
import { S3Notification, S3TestEvent } from '../../shared/ingest/s3-event.ts';

export const logger = new Logger({ serviceName: SERVICES.ingest });
export const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICES.ingest });

let deps: IngestDeps | undefined;

/** Clients and settings, created once per container (or injected by the local lab and tests). */
export function ingestDeps(env: NodeJS.ProcessEnv = process.env): IngestDeps {
  const clients = optionsFromEnv(env);
  const queueUrl = env[ENV.queueUrl];
  const sqs = queueUrl ? new SQSClient({ region: clients.region }) : undefined;
  return {
    // A failed call costs the whole file again: ride out throttling (see INGEST_DYNAMODB_ATTEMPTS).
    ...storeFromEnv(env, INGEST_DYNAMODB_ATTEMPTS),
    // One client for both buckets: it reads the drop bucket and writes the results bucket.
    s3: createS3Client(clients),
    resultsBucket: envString(env, ENV.resultsBucket),
    ...uploadLimitsFromEnv(env),
    ...(sqs && queueUrl
      ? {
          requeue: async (body: string) =>
            void (await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }))),
        }
      : {}),
  };
}

/** Time a message needs to be worth starting: less, and it is sent again for another invocation. */
export const START_BEFORE_MS = 120_000;

export function setIngestDeps(value: IngestDeps | undefined): void {
  deps = value;
}

async function processMessage(message: SQSRecord, context: Context): Promise<void> {
  deps ??= ingestDeps();
  const invocation: IngestDeps = { ...deps, remainingMs: () => context.getRemainingTimeInMillis() };
  if (invocation.requeue && context.getRemainingTimeInMillis() < START_BEFORE_MS) {
    // Started now, it could be cut off mid-file and redone: the next invocation takes it whole.
    await invocation.requeue(message.body);
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(message.body);
  } catch {
    body = undefined;
  }
  const continuation = parseContinuation(body);
  if (continuation !== undefined) {
    await continueIngest(continuation, invocation);
    logger.info('continued', { step: continuation.step, bucket: continuation.bucket, key: continuation.key });
    return;
  }
  if (S3TestEvent.safeParse(body).success) {
    logger.info('skipping s3:TestEvent');
    return;
  }
  const parsed = S3Notification.safeParse(body);
  if (!parsed.success) {
    // Not an S3 notification: no retry will fix it, so it is logged and dropped.
    logger.error('message is not an S3 event notification', {
      messageId: message.messageId,
      issues: parsed.error.issues.slice(0, 5),
    });
    metrics.addMetric('InvalidMessages', MetricUnit.Count, 1);
    return;
  }
  for (const record of parsed.data.Records) {
    const outcome = await ingestRecord(record, invocation);
    logOutcome(outcome);
    metrics.addMetric(
      outcome.status === 'failed' ? 'UploadsFailed' : outcome.status === 'ready' ? 'UploadsReady' : 'EventsSkipped',
      MetricUnit.Count,
      1,
    );
    if (outcome.status === 'ready') metrics.addMetric('RunsIngested', MetricUnit.Count, outcome.runIds.length);
  }
}

function logOutcome(outcome: IngestOutcome): void {
  const { bucket, key, version } = outcome.object;
  const fields = {
    status: outcome.status,
    bucket,
    key,
    version,
    ...('message' in outcome ? { message: outcome.message } : {}),
  };
  // A parser bug: the upload is failed for good, the stack is what fixes the parser.
  if (outcome.status === 'failed' && outcome.internal)
    logger.error('internal error while parsing', { ...fields, error: outcome.internal });
  else logger.info('ingested', fields);
}

const processor = new BatchProcessor(EventType.SQS);

export const handler = middy(async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  processPartialResponse(event, (message: SQSRecord) => processMessage(message, context), processor, {
    context,
    throwOnFullBatchFailure: false,
  }),
)
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics));
