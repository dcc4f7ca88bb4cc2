/**
 * The sweeper and its schedule. A delivery that died (crash, timeout, out of
 * memory) on its last receive leaves a `processing` record and no message at
 * all: nothing else would ever end it (shared/sweep.ts).
 */
import type { Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { ENV } from '../../shared/config.ts';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SWEEPER_METRICS } from '../../functions/sweeper/handler.ts';
import { SWEEPER } from '../limits.ts';
import {
  functionEntry,
  grantTable,
  labFunction,
  TABLE_ACCESS,
  type LabFunction,
  type PartProps,
} from './lab-function.ts';
import { grantSamples, SAMPLES_ACCESS } from './results-bucket.ts';

export interface Sweeper extends LabFunction {
  schedule: events.Rule;
}

export interface SweeperProps extends PartProps {
  table: dynamodb.Table;
  /** Where the samples objects of the runs it removes are deleted. */
  resultsBucket: s3.Bucket;
}

export function sweeper(stack: Stack, props: SweeperProps): Sweeper {
  const { lab } = props.settings;
  const sweeperFunction = labFunction(stack, 'Sweeper', props.table, props, {
    entry: functionEntry('sweeper'),
    description: `benchdrop lab ${lab}: end uploads left processing past their time as failed`,
    roleDescription: `benchdrop lab ${lab}: sweeper function`,
    service: SWEEPER_METRICS.service,
    memoryMB: SWEEPER.memoryMB,
    timeout: SWEEPER.timeout,
    environment: { [ENV.resultsBucket]: props.resultsBucket.bucketName },
  });
  // Least privilege: processing records by status, the table as ending an upload needs it,
  // and deleting the removed runs' samples objects.
  grantTable(sweeperFunction.role, props.table, TABLE_ACCESS.sweeper);
  grantSamples(
    sweeperFunction.role,
    props.resultsBucket,
    SAMPLES_ACCESS.remove,
    `ending a stuck upload removes its runs, each with its samples object under samples/ ` +
      '(the run id names it): delete only.',
  );
  // No retries: the next run is the retry, and a late one could overlap it (see SWEEPER_LIMITS).
  sweeperFunction.fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: SWEEPER.maxEventAge });
  const schedule = new events.Rule(stack, 'SweepSchedule', {
    description: `benchdrop lab ${lab}: run the sweeper every ${SWEEPER.every.toMinutes()} minutes`,
    schedule: events.Schedule.rate(SWEEPER.every),
    targets: [new LambdaFunction(sweeperFunction.fn, { retryAttempts: 0, maxEventAge: SWEEPER.maxEventAge })],
  });
  return { ...sweeperFunction, schedule };
}
