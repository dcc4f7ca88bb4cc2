/**
 * The logger and metrics of a lab's function. Every metric carries the lab as a
 * dimension: labs share an account and the namespace, and each lab's alarms
 * count only its own (infra/constructs/alarms.ts).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { ENV } from '../shared/config.ts';

export function labTelemetry(
  names: { namespace: string; service: string },
  env: NodeJS.ProcessEnv = process.env,
): { logger: Logger; metrics: Metrics } {
  const lab = env[ENV.lab];
  return {
    logger: new Logger({ serviceName: names.service }),
    metrics: new Metrics({
      namespace: names.namespace,
      serviceName: names.service,
      ...(lab ? { defaultDimensions: { lab } } : {}),
    }),
  };
}
