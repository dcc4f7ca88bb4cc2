/**
 * The dead-letter function. A message that failed every delivery ends in the
 * dead-letter queue. Left there, its upload would read `processing` for as long
 * as the queue keeps it; instead this function reads the queue and ends the
 * upload `failed` with the reason, its partial runs removed (shared/dead-letters.ts).
 * Handling consumes the message, so the alarm on dead letters is the function's
 * own count of them (alarms.ts); what stays in the queue is what it could not
 * settle yet, with alarms of its own. Nothing is lost with the message: the
 * pipeline never deletes the object version, the upload record keeps the reason,
 * and the function's log keeps the body, to send back to the ingest queue once
 * the cause is fixed.
 */
import type { Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { ENV } from '../../shared/config.ts';
import { DEAD_LETTER_METRICS } from '../../functions/dead-letter/handler.ts';
import { DEAD_LETTER } from '../limits.ts';
import {
  functionEntry,
  grantTable,
  labFunction,
  TABLE_ACCESS,
  type LabFunction,
  type PartProps,
} from './lab-function.ts';
import { grantSamples, SAMPLES_ACCESS } from './results-bucket.ts';

export interface DeadLetterProps extends PartProps {
  deadLetterQueue: sqs.Queue;
  table: dynamodb.Table;
  /** Where the samples objects of the runs it removes are deleted. */
  resultsBucket: s3.Bucket;
}

export function deadLetterFunction(stack: Stack, props: DeadLetterProps): LabFunction {
  const { lab } = props.settings;
  const deadLetter = labFunction(stack, 'DeadLetter', props.table, props, {
    entry: functionEntry('dead-letter'),
    description: `benchdrop lab ${lab}: end the uploads of dead-lettered ingest messages as failed`,
    roleDescription: `benchdrop lab ${lab}: dead-letter function`,
    service: DEAD_LETTER_METRICS.service,
    memoryMB: DEAD_LETTER.memoryMB,
    timeout: DEAD_LETTER.timeout,
    environment: { [ENV.resultsBucket]: props.resultsBucket.bucketName },
  });
  // Least privilege: the table as ending an upload needs it, deleting the removed
  // runs' samples objects, and (from the event source) consuming the dead-letter
  // queue; no upload, no sending.
  grantTable(deadLetter.role, props.table, TABLE_ACCESS.deadLetter);
  grantSamples(
    deadLetter.role,
    props.resultsBucket,
    SAMPLES_ACCESS.remove,
    `ending a failed upload removes its runs, each with its samples object under samples/ ` +
      '(the run id names it): delete only.',
  );
  deadLetter.fn.addEventSource(
    new SqsEventSource(props.deadLetterQueue, {
      batchSize: DEAD_LETTER.batchSize,
      reportBatchItemFailures: true,
      maxConcurrency: DEAD_LETTER.maxConcurrency,
    }),
  );
  return deadLetter;
}
