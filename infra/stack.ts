/**
 * One benchdrop lab: drop bucket -> S3 events -> SQS (+ DLQ) -> ingest Lambda ->
 * DynamoDB table <- API Lambda <- HTTP API (IAM-authorised), with alarms. Nothing
 * here has a fixed physical name and every resource carries the tag
 * `benchdrop:lab=NAME`, so any number of labs share an account. The table schema,
 * the API routes and the functions' environment come from shared/.
 */
import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, RemovalPolicy, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { SqsDestination } from 'aws-cdk-lib/aws-s3-notifications';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ROUTES } from '../shared/api.ts';
import { ENV, MB } from '../shared/config.ts';
import { INDEXES, TABLE_KEY } from '../shared/table.ts';
import { LAMBDA_BUNDLING, LAMBDA_TARGET } from './bundling.ts';
import type { StackSettings } from './settings.ts';

/** The tag every resource of a lab carries. */
export const LAB_TAG = 'benchdrop:lab';

/** Repository root (this file is infra/stack.ts). */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const INGEST_ENTRY = fileURLToPath(new URL('../functions/ingest/handler.ts', import.meta.url));
/** One function serves every route of shared/api.ts ROUTES. */
const API_ENTRY = fileURLToPath(new URL('../functions/api/handler.ts', import.meta.url));
const LOCK_FILE = fileURLToPath(new URL('../package-lock.json', import.meta.url));

/** Ingest limits; the queue's visibility timeout follows from the function timeout. */
export const INGEST = {
  timeout: Duration.minutes(5),
  memoryMB: 1024,
  /** AWS guidance for SQS event sources: visibility timeout at least 6x the function timeout. */
  visibilityFactor: 6,
  batchSize: 10,
  maxBatchingWindow: Duration.seconds(5),
  /** Deliveries before a message moves to the dead-letter queue. */
  maxReceiveCount: 3,
} as const;

/** API function limits: queries and presigning are short; API Gateway gives up after 30 s anyway. */
export const API = {
  timeout: Duration.seconds(10),
  memoryMB: 512,
} as const;

/** Days S3 server access logs are kept in the logs bucket. */
const ACCESS_LOG_DAYS = 365;
/** Days Lambda logs are kept. */
const FUNCTION_LOG_RETENTION = logs.RetentionDays.THREE_MONTHS;
/** The API's access logs are kept as long as the drop bucket's (ACCESS_LOG_DAYS). */
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
  const quoted = Object.entries(API_ACCESS_LOG_FIELDS).map(([name, variable]) => `${JSON.stringify(name)}:"${variable}"`);
  return `{${[...quoted, '"error":$context.error.messageString'].join(',')}}`;
}

/** The Node.js runtime and esbuild settings both functions share (infra/bundling.ts). */
const RUNTIME = lambda.Runtime.NODEJS_24_X;
const BUNDLING: BundlingOptions = { format: OutputFormat.ESM, target: LAMBDA_TARGET, ...LAMBDA_BUNDLING };

/** Environment both functions share besides their Powertools service name. */
const POWERTOOLS_ENV = {
  POWERTOOLS_METRICS_NAMESPACE: 'Benchdrop',
  POWERTOOLS_LOG_LEVEL: 'INFO',
} as const;

/**
 * DynamoDB actions of the ingest function: item reads and writes, queries (table
 * and indexes). No Scan, no table management, no streams.
 */
const TABLE_ACTIONS = [
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DeleteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
];

/** DynamoDB actions of the API function: reads only. No Scan, no writes. */
const API_TABLE_ACTIONS = ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'];

/** `GET /runs/{id}` -> method and path of an HTTP API route. */
export function parseRouteKey(routeKey: string): { method: apigwv2.HttpMethod; path: string } {
  const match = /^([A-Z]+) (\/\S*)$/.exec(routeKey);
  const method = match && Object.values(apigwv2.HttpMethod).find((m) => m === match[1]);
  if (!match || !method || method === apigwv2.HttpMethod.ANY) throw new Error(`not a route key with one method and a path: '${routeKey}'`);
  return { method, path: match[2] };
}

export interface BenchdropStackProps extends StackProps {
  readonly settings: StackSettings;
  /** Entry file of the API function; functions/api/handler.ts unless a test substitutes a stand-in. */
  readonly apiEntry?: string;
}

export class BenchdropStack extends Stack {
  readonly settings: StackSettings;
  readonly bucket: s3.Bucket;
  readonly logsBucket: s3.Bucket;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly table: dynamodb.Table;
  readonly ingest: NodejsFunction;
  readonly ingestRole: iam.Role;
  readonly ingestLogs: logs.LogGroup;
  readonly apiFunction: NodejsFunction;
  readonly apiRole: iam.Role;
  readonly apiLogs: logs.LogGroup;
  readonly api: apigwv2.HttpApi;
  readonly apiStage: apigwv2.HttpStage;
  readonly apiAccessLogs: logs.LogGroup;
  readonly alarmTopic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: BenchdropStackProps) {
    const { settings } = props;
    super(scope, id, {
      description: `benchdrop lab ${settings.lab}: drop bucket, ingest queue and function, results table, HTTP API`,
      ...props,
      // Stack-level tag (CloudFormation also propagates it); Tags.of below puts it in the template.
      tags: { ...props.tags, [LAB_TAG]: settings.lab },
    });
    this.settings = settings;
    Tags.of(this).add(LAB_TAG, settings.lab);

    const dataRemoval = settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    // --- Buckets ----------------------------------------------------------------------
    // Server access logs go to their own bucket (S3 writes them with SSE-S3 only).
    // cdk-nag accepts it without logs of its own because it is a log destination.
    this.logsBucket = new s3.Bucket(this, 'AccessLogsBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(ACCESS_LOG_DAYS) }],
      removalPolicy: dataRemoval,
      autoDeleteObjects: !settings.retainData,
    });

    this.bucket = new s3.Bucket(this, 'DropBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      lifecycleRules: [
        {
          id: 'expire-noncurrent-versions',
          noncurrentVersionExpiration: Duration.days(settings.noncurrentVersionDays),
          abortIncompleteMultipartUploadAfter: Duration.days(7),
        },
      ],
      serverAccessLogsBucket: this.logsBucket,
      serverAccessLogsPrefix: 'drop/',
      removalPolicy: dataRemoval,
      autoDeleteObjects: !settings.retainData,
    });

    // --- Queues -----------------------------------------------------------------------
    // SSE-SQS rather than KMS: S3 can deliver to it without a key policy, and the
    // aws/sqs managed key would not let S3 publish at all.
    this.deadLetterQueue = new sqs.Queue(this, 'IngestDeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(this, 'IngestQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(INGEST.timeout.toSeconds() * INGEST.visibilityFactor),
      retentionPeriod: Duration.days(14),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: INGEST.maxReceiveCount },
    });

    // Every new object version and every delete (or delete marker) becomes a queue message.
    const destination = new SqsDestination(this.queue);
    this.bucket.addEventNotification(s3.EventType.OBJECT_CREATED, destination);
    this.bucket.addEventNotification(s3.EventType.OBJECT_REMOVED, destination);

    // --- Table ------------------------------------------------------------------------
    // `Table` (AWS::DynamoDB::Table), not `TableV2` (AWS::DynamoDB::GlobalTable): a lab
    // lives in one region, and switching the construct later would replace the table
    // and its data. Keys and indexes come from shared/table.ts, all attributes strings.
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE_KEY.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE_KEY.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      deletionProtection: settings.deletionProtection,
      removalPolicy: dataRemoval,
    });
    for (const index of Object.values(INDEXES)) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }

    // --- Ingest function --------------------------------------------------------------
    // No reserved concurrency: labs share the account's pool, and reserving a slice
    // per lab would shrink it for everyone. The event source caps it instead.
    ({ fn: this.ingest, role: this.ingestRole, logs: this.ingestLogs } = this.labFunction('Ingest', {
      entry: INGEST_ENTRY,
      description: `benchdrop lab ${settings.lab}: parse uploaded benchmark logs into the table`,
      roleDescription: `benchdrop lab ${settings.lab}: ingest function`,
      service: 'benchdrop-ingest',
      memoryMB: INGEST.memoryMB,
      timeout: INGEST.timeout,
      settings,
      dataRemoval,
    }));
    const ingestRole = this.ingestRole;

    // Least privilege: read the drop bucket's objects, versions and their tags ...
    ingestRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'ReadUploads',
        actions: ['s3:GetObject', 's3:GetObjectVersion', 's3:GetObjectTagging', 's3:GetObjectVersionTagging'],
        resources: [this.bucket.arnForObjects('*')],
      }),
    );
    // ... list it, only so that a key or version removed before ingest runs yields
    // NoSuchKey/NoSuchVersion (recorded as such) rather than AccessDenied ...
    ingestRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'ListUploads',
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
      }),
    );
    // ... and read/write the table and query its indexes, each named: no wildcard.
    ingestRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'ReadWriteTable',
        actions: TABLE_ACTIONS,
        resources: [this.table.tableArn, ...Object.values(INDEXES).map((index) => `${this.table.tableArn}/index/${index.name}`)],
      }),
    );

    this.ingest.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: INGEST.batchSize,
        maxBatchingWindow: INGEST.maxBatchingWindow,
        reportBatchItemFailures: true,
        // At most this many concurrent invocations per lab, so a burst of uploads
        // cannot starve other labs' functions or the table.
        maxConcurrency: 10,
      }),
    );

    const ingestPolicy = ingestRole.node.tryFindChild('DefaultPolicy');
    if (ingestPolicy) {
      Validations.of(ingestPolicy).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)}.Arn>/*]`,
        reason: 'Uploads may use any key (README, "Upload conventions"), so reading them needs the bucket\'s object ARN pattern; the statement is limited to read actions on this one bucket.',
      });
    }

    // --- API function -----------------------------------------------------------------
    // One function for every route of shared/api.ts: reads the table, presigns uploads.
    // No reserved concurrency (see the ingest function): the stage throttling caps it.
    ({ fn: this.apiFunction, role: this.apiRole, logs: this.apiLogs } = this.labFunction('Api', {
      entry: props.apiEntry ?? API_ENTRY,
      description: `benchdrop lab ${settings.lab}: the HTTP API (devices, runs, compare, uploads)`,
      roleDescription: `benchdrop lab ${settings.lab}: API function`,
      service: 'benchdrop-api',
      memoryMB: API.memoryMB,
      timeout: API.timeout,
      settings,
      dataRemoval,
    }));
    const apiRole = this.apiRole;

    // Least privilege: item reads and queries on the table, queries on its indexes ...
    apiRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'ReadTable',
        actions: API_TABLE_ACTIONS,
        resources: [this.table.tableArn],
      }),
    );
    apiRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'QueryIndexes',
        actions: ['dynamodb:Query'],
        resources: Object.values(INDEXES).map((index) => `${this.table.tableArn}/index/${index.name}`),
      }),
    );
    // ... and new objects in the drop bucket: a presigned PUT URL acts with the
    // credentials of the role that signed it, so POST /uploads needs PutObject itself.
    apiRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'PresignUploads',
        actions: ['s3:PutObject'],
        resources: [this.bucket.arnForObjects('*')],
      }),
    );
    const apiPolicy = apiRole.node.tryFindChild('DefaultPolicy');
    if (apiPolicy) {
      Validations.of(apiPolicy).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)}.Arn>/*]`,
        reason: 'POST /uploads presigns a PUT for any key a client chooses (README, "Upload conventions"), so s3:PutObject needs the bucket\'s object ARN pattern; it is the only action on it, on this one bucket.',
      });
    }

    // --- HTTP API ---------------------------------------------------------------------
    // Every route requires SigV4-signed requests (IAM authorisation): callers need
    // execute-api:Invoke on this API. No $default route, no CORS: nothing is reachable
    // without a signature, and the clients are the CLI and scripts, not browsers.
    this.api = new apigwv2.HttpApi(this, 'HttpApi', {
      apiName: `benchdrop-${settings.lab}`,
      description: `benchdrop lab ${settings.lab}: devices, runs, comparisons and uploads`,
      createDefaultStage: false,
      defaultAuthorizer: new HttpIamAuthorizer(),
    });
    this.apiAccessLogs = new logs.LogGroup(this, 'ApiAccessLogs', {
      retention: API_ACCESS_LOG_RETENTION,
      removalPolicy: dataRemoval,
    });
    this.apiStage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: settings.apiRateLimit, burstLimit: settings.apiBurstLimit },
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(this.apiAccessLogs),
        format: AccessLogFormat.custom(apiAccessLogFormat()),
      },
    });
    // One integration for all routes; each route may invoke the function only through itself.
    const integration = new HttpLambdaIntegration('ApiIntegration', this.apiFunction);
    for (const routeKey of Object.values(ROUTES)) {
      const { method, path } = parseRouteKey(routeKey);
      // The API's defaultAuthorizer (IAM) applies to every route added here.
      this.api.addRoutes({ path, methods: [method], integration });
    }

    // --- Alarms -----------------------------------------------------------------------
    // No KMS key on the topic: it carries alarm state changes only, CloudWatch cannot
    // publish under the AWS managed aws/sns key, and a customer managed key would add
    // a monthly charge to every lab for no confidentiality gain.
    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', {
      displayName: `benchdrop ${settings.lab} alarms`,
      enforceSSL: true,
      signatureVersion: '2',
    });
    if (settings.alarmEmail) this.alarmTopic.addSubscription(new EmailSubscription(settings.alarmEmail));

    const fiveMinutes = Duration.minutes(5);
    // Each alarm fires on any occurrence: one dead letter, error, throttle or 5xx is worth a look.
    const anyAbove0 = (id: string, alarmDescription: string, metric: cloudwatch.IMetric) =>
      new cloudwatch.Alarm(this, id, {
        alarmDescription,
        metric,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    this.alarms = [
      anyAbove0(
        'DeadLetterQueueAlarm',
        `benchdrop ${settings.lab}: S3 events the ingest function failed ${INGEST.maxReceiveCount} times are waiting in the dead-letter queue`,
        this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: cloudwatch.Stats.MAXIMUM }),
      ),
      anyAbove0(
        'IngestErrorsAlarm',
        `benchdrop ${settings.lab}: the ingest function failed (crash, timeout or out of memory)`,
        this.ingest.metricErrors({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM }),
      ),
      anyAbove0(
        'IngestThrottlesAlarm',
        `benchdrop ${settings.lab}: the ingest function was throttled (account concurrency exhausted); uploads wait in the queue`,
        this.ingest.metricThrottles({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM }),
      ),
      anyAbove0(
        'ApiServerErrorsAlarm',
        `benchdrop ${settings.lab}: the HTTP API answered 5xx (function error, timeout or an integration failure); see the API access logs`,
        this.api.metricServerError({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM }),
      ),
      anyAbove0(
        'ApiErrorsAlarm',
        `benchdrop ${settings.lab}: the API function failed (crash, timeout or out of memory)`,
        this.apiFunction.metricErrors({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM }),
      ),
    ];
    const action = new SnsAction(this.alarmTopic);
    for (const alarm of this.alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
    // enforceSSL gives the topic a resource policy, which replaces SNS's default one:
    // CloudWatch then needs an explicit grant, limited to this lab's alarms.
    this.alarmTopic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowLabAlarms',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.alarmTopic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': this.account },
          ArnEquals: { 'aws:SourceArn': this.alarms.map((alarm) => alarm.alarmArn) },
        },
      }),
    );

    // --- Outputs (no export names: labs must not collide) ----------------------------
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName, description: 'Drop bucket: upload benchmark logs here' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'DynamoDB table with uploads, runs and series' });
    new CfnOutput(this, 'QueueUrl', { value: this.queue.queueUrl, description: 'Ingest queue (S3 events)' });
    new CfnOutput(this, 'ApiUrl', { value: this.apiStage.url, description: 'HTTP API base URL (requests must be SigV4-signed: IAM authorisation)' });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.deadLetterQueue.queueUrl, description: 'S3 events the ingest function gave up on' });

    this.acknowledgeCdkInternals();
  }

  /**
   * The one finding on a resource that CDK itself adds and this stack cannot shape:
   * the role of the custom resource that writes the bucket's notification
   * configuration (its own policy is already scoped to the drop bucket).
   */
  /**
   * A function of the lab with its own log group and role (instead of the default
   * role, which carries the managed AWSLambdaBasicExecutionRole: logs on every log
   * group of the account), bundled and configured like its siblings.
   */
  private labFunction(
    id: 'Ingest' | 'Api',
    options: { entry: string; description: string; roleDescription: string; service: string; memoryMB: number; timeout: Duration; settings: StackSettings; dataRemoval: RemovalPolicy },
  ): { fn: NodejsFunction; role: iam.Role; logs: logs.LogGroup } {
    const logGroup = new logs.LogGroup(this, `${id}Logs`, { retention: FUNCTION_LOG_RETENTION, removalPolicy: options.dataRemoval });
    const role = new iam.Role(this, `${id}Role`, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description: options.roleDescription });
    logGroup.grant(role, 'logs:CreateLogStream', 'logs:PutLogEvents');
    const fn = new NodejsFunction(this, `${id}Function`, {
      entry: options.entry,
      handler: 'handler',
      projectRoot: ROOT,
      depsLockFilePath: LOCK_FILE,
      description: options.description,
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: options.memoryMB,
      timeout: options.timeout,
      role,
      logGroup,
      environment: {
        [ENV.tableName]: this.table.tableName,
        [ENV.bucketName]: this.bucket.bucketName,
        [ENV.maxUploadBytes]: String(options.settings.maxUploadMB * MB),
        [ENV.lab]: options.settings.lab,
        POWERTOOLS_SERVICE_NAME: options.service,
        ...POWERTOOLS_ENV,
      },
      bundling: BUNDLING,
    });
    return { fn, role, logs: logGroup };
  }

  private acknowledgeCdkInternals(): void {
    for (const child of this.node.children) {
      if (!child.node.id.startsWith('BucketNotificationsHandler')) continue;
      const role = child.node.tryFindChild('Role');
      if (!role) continue;
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: 'CDK\'s own bucket-notification custom resource handler; it runs only during deployments and only needs to write its logs. Its role is not configurable.',
      });
    }
  }
}
