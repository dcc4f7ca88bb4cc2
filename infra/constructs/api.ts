/**
 * The HTTP API: one function for every route of shared/api.ts (it reads the
 * table and runs' samples objects, keeps frozen reports, and presigns uploads)
 * behind an HTTP API whose every route requires SigV4-signed requests (IAM
 * authorisation), with access logs of its own.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { ROUTES } from '../../shared/api.ts';
import { ENV, MB, SERVICES } from '../../shared/config.ts';
import { REPORTS_PREFIX } from '../../shared/reports.ts';
import { SAMPLES_PREFIX } from '../../shared/store/samples-schema.ts';
import { reportPageCommand } from '../report-page.ts';
import { API } from '../limits.ts';
import {
  acknowledgeBucketObjects,
  functionEntry,
  grantTable,
  labFunction,
  TABLE_ACCESS,
  type LabFunction,
  type PartProps,
} from './lab-function.ts';

/** The API's access logs are kept as long as the drop bucket's (drop-bucket.ts ACCESS_LOG_DAYS). */
const API_ACCESS_LOG_RETENTION = logs.RetentionDays.ONE_YEAR;

/**
 * One JSON object per API request. Every value is quoted, so a `-` (API Gateway's
 * placeholder for "no value") still parses; only the error message comes from
 * `messageString`, which API Gateway quotes and escapes itself. `caller` is the IAM
 * principal that signed the request.
 */
export const API_ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  time: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  caller: '$context.identity.userArn',
  userAgent: '$context.identity.userAgent',
  routeKey: '$context.routeKey',
  path: '$context.path',
  protocol: '$context.protocol',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
} as const;

function apiAccessLogFormat(): string {
  const quoted = Object.entries(API_ACCESS_LOG_FIELDS).map(
    ([name, variable]) => `${JSON.stringify(name)}:"${variable}"`,
  );
  return `{${[...quoted, '"error":$context.error.messageString'].join(',')}}`;
}

/** `GET /runs/{id}` -> method and path of an HTTP API route. */
export function parseRouteKey(routeKey: string): { method: apigwv2.HttpMethod; path: string } {
  const match = /^([A-Z]+) (\/\S*)$/.exec(routeKey);
  const method = match && Object.values(apigwv2.HttpMethod).find((m) => m === match[1]);
  if (!match || !method || method === apigwv2.HttpMethod.ANY) {
    throw new Error(`not a route key with one method and a path: '${routeKey}'`);
  }
  return { method, path: match[2] };
}

export interface ApiProps extends PartProps {
  bucket: s3.Bucket;
  /** The results bucket: samples objects (read) and frozen reports (read and written). */
  resultsBucket: s3.IBucket;
  table: dynamodb.Table;
  /** Entry file of the API function; functions/api/handler.ts unless a test substitutes a stand-in. */
  entry?: string;
}

export interface HttpApi {
  function: LabFunction;
  api: apigwv2.HttpApi;
  stage: apigwv2.HttpStage;
  accessLogs: logs.LogGroup;
}

/** The API function and the HTTP API in front of it. */
export function httpApi(stack: Stack, props: ApiProps): HttpApi {
  const fn = apiFunction(stack, props);
  return { function: fn, ...apiGateway(stack, props, fn) };
}

/**
 * One function for every route. No reserved concurrency (see ingest-pipeline.ts):
 * the stage throttling caps it.
 */
function apiFunction(stack: Stack, props: ApiProps): LabFunction {
  const { settings, bucket } = props;
  const api = labFunction(stack, 'Api', props.table, props, {
    entry: props.entry ?? functionEntry('api'),
    description: `benchdrop lab ${settings.lab}: the HTTP API (devices, runs, samples, compare, uploads, reports)`,
    roleDescription: `benchdrop lab ${settings.lab}: API function`,
    service: SERVICES.api,
    memoryMB: API.memoryMB,
    timeout: API.timeout,
    environment: {
      [ENV.bucketName]: bucket.bucketName,
      [ENV.resultsBucket]: props.resultsBucket.bucketName,
      [ENV.maxUploadBytes]: String(settings.maxUploadMB * MB),
    },
    // Frozen reports' pages are built in the function from the report page's bundle, packaged beside it.
    afterBundling: (inputDir, outputDir) => [reportPageCommand(inputDir, outputDir)],
  });
  grantResults(api.role, props.resultsBucket);
  // Least privilege: item reads and queries on the table, queries on its indexes ...
  grantTable(api.role, props.table, TABLE_ACCESS.api);
  // ... and new objects in the drop bucket: a presigned PUT URL acts with the
  // credentials of the role that signed it, so POST /uploads needs PutObject itself.
  api.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'PresignUploads',
      actions: ['s3:PutObject'],
      resources: [bucket.arnForObjects('*')],
    }),
  );
  acknowledgeBucketObjects(
    api.role,
    bucket,
    'POST /uploads presigns a PUT for any key a client chooses (README, "Upload conventions"), ' +
      "so s3:PutObject needs the bucket's object ARN pattern; it is the only action on it, on this one bucket.",
  );
  return api;
}

/**
 * The results bucket, by prefix: samples objects are read only (GET
 * /runs/{id}/samples: HeadObject and ranged GetObjects), frozen reports read
 * and written; nothing is listed or deleted.
 */
function grantResults(role: iam.Role, results: s3.IBucket): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'ReadSamplesAndReports',
      actions: ['s3:GetObject'],
      resources: [results.arnForObjects(`${SAMPLES_PREFIX}*`), results.arnForObjects(`${REPORTS_PREFIX}*`)],
    }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'KeepReports',
      actions: ['s3:PutObject'],
      resources: [results.arnForObjects(`${REPORTS_PREFIX}*`)],
    }),
  );
  results.encryptionKey?.grantDecrypt(role);
  results.encryptionKey?.grantEncrypt(role);
  acknowledgeResultsPrefixes(role, results);
}

/** cdk-nag sees a wildcard in each prefix's object ARN: every object under it is the point. */
function acknowledgeResultsPrefixes(role: iam.Role, results: s3.IBucket): void {
  const policy = role.node.tryFindChild('DefaultPolicy');
  const bucket = results.node.defaultChild as s3.CfnBucket | undefined;
  if (!policy || !bucket) return;
  const id = Stack.of(results).getLogicalId(bucket);
  for (const prefix of [SAMPLES_PREFIX, REPORTS_PREFIX])
    Validations.of(policy).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${id}.Arn>/${prefix}*]`,
      reason:
        `each run's samples object and each frozen report is its own key under ${prefix} ` +
        '(the run or report id names it), so the grant is the prefix: only GetObject, and PutObject for reports.',
    });
}

/**
 * Every route requires SigV4-signed requests (IAM authorisation): callers need
 * execute-api:Invoke on this API. No $default route, no CORS: nothing is reachable
 * without a signature, and the clients are the CLI and scripts, not browsers.
 */
function apiGateway(stack: Stack, props: ApiProps, fn: LabFunction): Omit<HttpApi, 'function'> {
  const { settings } = props;
  const api = new apigwv2.HttpApi(stack, 'HttpApi', {
    apiName: `benchdrop-${settings.lab}`,
    description: `benchdrop lab ${settings.lab}: devices, runs, comparisons and uploads`,
    createDefaultStage: false,
    defaultAuthorizer: new HttpIamAuthorizer(),
  });
  const accessLogs = new logs.LogGroup(stack, 'ApiAccessLogs', {
    retention: API_ACCESS_LOG_RETENTION,
    removalPolicy: props.dataRemoval,
  });
  const stage = api.addStage('DefaultStage', {
    stageName: '$default',
    autoDeploy: true,
    throttle: { rateLimit: settings.apiRateLimit, burstLimit: settings.apiBurstLimit },
    accessLogSettings: {
      destination: new apigwv2.LogGroupLogDestination(accessLogs),
      format: AccessLogFormat.custom(apiAccessLogFormat()),
    },
  });
  // One integration for all routes; each route may invoke the function only through itself.
  const integration = new HttpLambdaIntegration('ApiIntegration', fn.fn);
  for (const routeKey of Object.values(ROUTES)) {
    const { method, path } = parseRouteKey(routeKey);
    // The API's defaultAuthorizer (IAM) applies to every route added here.
    api.addRoutes({ path, methods: [method], integration });
  }
  return { api, stage, accessLogs };
}
