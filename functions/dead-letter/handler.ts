/**
 * The dead-letter Lambda: SQS batches from the ingest queue's dead-letter queue,
 * partial batch failures out. Each message is one the ingest function failed
 * INGEST_LIMITS.maxReceiveCount times; shared/dead-letters.ts ends the uploads it
 * names `failed` with the reason. A message it cannot settle (the table refused)
 * fails alone and stays in the dead-letter queue for the next try.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { storeFromEnv } from '../../shared/aws.ts';
import { INGEST_LIMITS, METRICS_NAMESPACE, SERVICES } from '../../shared/config.ts';
import { failDeadLetter, type DeadLetterOutcome } from '../../shared/dead-letters.ts';
import type { SettleDeps } from '../../shared/ingest.ts';
import { resultsBucketFromEnv } from '../../shared/ingest/deps.ts';
import { labTelemetry } from '../telemetry.ts';

/**
 * What this function reports, and the stack alarms on (infra/constructs/alarms.ts): every
 * dead letter handled, the uploads it ended `failed`, and every attempt that could
 * not settle one. Metrics carry the lab as a dimension, as labs share an account
 * and the namespace.
 */
export const DEAD_LETTER_METRICS = {
  namespace: METRICS_NAMESPACE,
  service: SERVICES.deadLetter,
  deadLetters: 'DeadLetters',
  uploadsDeadLettered: 'UploadsDeadLettered',
  unsettled: 'DeadLettersUnsettled',
} as const;

/** Bodies longer than this are logged by length only: an S3 notification is a few KB. */
const LOGGED_BODY_CHARS = 16_384;

export const { logger, metrics } = labTelemetry(DEAD_LETTER_METRICS);

let deps: SettleDeps | undefined;

export function setDeadLetterDeps(value: SettleDeps | undefined): void {
  deps = value;
}

/** An upload this message ended (or left a continuation to end): what UploadsDeadLettered counts. */
const endedUpload = (outcome: DeadLetterOutcome) =>
  outcome.what === 'upload' && (outcome.ended === 'ended' || outcome.ended === 'continued');

/** The body for the log, unless it is far larger than any notification. */
const loggedBody = (message: SQSRecord) =>
  message.body.length <= LOGGED_BODY_CHARS ? { body: message.body } : { bodyChars: message.body.length };

async function settle(message: SQSRecord): Promise<void> {
  // The table, the results bucket (removed runs' samples objects) and their clients, created once
  // per container (or injected by tests).
  deps ??= { ...storeFromEnv(), ...resultsBucketFromEnv() };
  let outcomes: DeadLetterOutcome[];
  try {
    // The redrive policy moves a message after exactly this many receives of the ingest queue.
    outcomes = await failDeadLetter(message.body, deps, INGEST_LIMITS.maxReceiveCount);
  } catch (error) {
    // Counted, as a failed message is no function error: it fails alone and comes back.
    metrics.addMetric(DEAD_LETTER_METRICS.unsettled, MetricUnit.Count, 1);
    logger.error('dead letter not settled', { messageId: message.messageId, error, ...loggedBody(message) });
    throw error;
  }
  // Handling consumes the message: the log keeps its body, what a person sends back to
  // the ingest queue once the cause is fixed.
  logger.warn('dead letter settled', { messageId: message.messageId, outcomes, ...loggedBody(message) });
  metrics.addMetric(DEAD_LETTER_METRICS.deadLetters, MetricUnit.Count, 1);
  metrics.addMetric(DEAD_LETTER_METRICS.uploadsDeadLettered, MetricUnit.Count, outcomes.filter(endedUpload).length);
}

const processor = new BatchProcessor(EventType.SQS);

export const handler = middy(async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  processPartialResponse(event, settle, processor, { context, throwOnFullBatchFailure: false }),
)
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics));
