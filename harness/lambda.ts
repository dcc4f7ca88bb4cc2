/**
 * A minimal Lambda Context, as the runtime passes it to a handler: enough for
 * middy and the Powertools logger to read the request id and function name.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { ENV } from '../shared/config.ts';

export function lambdaContext(functionName = 'benchdrop-ingest', timeoutMs = 60_000): Context {
  const deadline = Date.now() + timeoutMs;
  const day = new Date().toISOString().slice(0, 10).replace(/-/g, '/');
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `${day}/[$LATEST]${randomUUID().replace(/-/g, '')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * The environment a lab's function runs with, set before its module is loaded
 * (it reads it then): the lab, metrics printed, warnings and worse logged.
 */
export function lambdaEnvironment(lab: string): void {
  process.env[ENV.lab] = lab;
  process.env['POWERTOOLS_METRICS_DISABLED'] = 'false';
  process.env['POWERTOOLS_LOG_LEVEL'] = 'WARN';
}
