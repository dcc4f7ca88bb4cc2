/**
 * The sweeper Lambda: started by an EventBridge schedule, it hands the lab's
 * table to shared/sweep.ts, which ends every `processing` upload no delivery can
 * still finish, and reports how many it found and ended.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { storeFromEnv } from '../../shared/aws.ts';
import { METRICS_NAMESPACE, SERVICES } from '../../shared/config.ts';
import type { SettleDeps } from '../../shared/ingest.ts';
import { resultsBucketFromEnv } from '../../shared/ingest/deps.ts';
import { labTelemetry } from '../telemetry.ts';
import { sweepStuckUploads, type Sweep } from '../../shared/sweep.ts';

/**
 * What this function reports, and the stack alarms on (infra/constructs/alarms.ts): uploads
 * found past their time, and of those the ones ended. Both are sent on every run,
 * zero included, so a quiet lab shows a sweeper that runs. The lab is a dimension,
 * as labs share an account and the namespace.
 */
export const SWEEPER_METRICS = {
  namespace: METRICS_NAMESPACE,
  service: SERVICES.sweeper,
  swept: 'UploadsSwept',
  overdue: 'UploadsOverdue',
} as const;

export const { logger, metrics } = labTelemetry(SWEEPER_METRICS);

let deps: SettleDeps | undefined;

export function setSweeperDeps(value: SettleDeps | undefined): void {
  deps = value;
}

export const handler = middy(async (event: ScheduledEvent, context: Context): Promise<Sweep> => {
  // The table, the results bucket (removed runs' samples objects) and their clients, created once
  // per container (or injected by tests).
  deps ??= { ...storeFromEnv(), ...resultsBucketFromEnv() };
  const sweep = await sweepStuckUploads({ ...deps, remainingMs: () => context.getRemainingTimeInMillis() });
  metrics.addMetric(SWEEPER_METRICS.overdue, MetricUnit.Count, sweep.overdue);
  metrics.addMetric(SWEEPER_METRICS.swept, MetricUnit.Count, sweep.ended);
  const details = { scheduledAt: event.time, ...sweep };
  // Overdue uploads mean a delivery died without finishing them: worth a warning.
  if (sweep.overdue > 0) logger.warn('swept', details);
  else logger.info('swept', details);
  return sweep;
})
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics));
