/**
 * One benchdrop lab: drop bucket -> S3 events -> SQS (+ DLQ) -> ingest Lambda ->
 * DynamoDB table <- API Lambda <- HTTP API (IAM-authorised), with alarms; a
 * dead-letter Lambda and a scheduled sweeper end the uploads ingest gave up on or
 * lost, so that no upload stays `processing`. Nothing here has a fixed physical
 * name and every resource carries the tag `benchdrop:lab=NAME`, so any number of
 * labs share an account. The table schema, the API routes and the functions'
 * environment come from shared/.
 */
import { fileURLToPath } from 'node:url';
import { ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ROUTES } from '../shared/api.ts';
import { ALL_DELIVERIES_MS, ENV, INGEST_LIMITS, MB, STUCK_AFTER_MS } from '../shared/config.ts';
import { INDEXES, TABLE_KEY } from '../shared/table.ts';
import { DEAD_LETTER_METRICS } from '../functions/dead-letter/handler.ts';
import { SWEEPER_METRICS } from '../functions/sweeper/handler.ts';
import { LAMBDA_BUNDLING, LAMBDA_TARGET } from './bundling.ts';
import type { StackSettings } from './settings.ts';

/** The tag every resource of a lab carries. */
export const LAB_TAG = 'benchdrop:lab';

/** Repository root (this file is infra/stack.ts). */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const INGEST_ENTRY = fileURLToPath(new URL('../functions/ingest/handler.ts', import.meta.url));
const DEAD_LETTER_ENTRY = fileURLToPath(new URL('../functions/dead-letter/handler.ts', import.meta.url));
const SWEEPER_ENTRY = fileURLToPath(new URL('../functions/sweeper/handler.ts', import.meta.url));
/** One function serves every route of shared/api.ts ROUTES. */
const API_ENTRY = fileURLToPath(new URL('../functions/api/handler.ts', import.meta.url));
const LOCK_FILE = fileURLToPath(new URL('../package-lock.json', import.meta.url));

/**
 * Ingest limits. The timeout and the deliveries before the dead-letter queue are
 * shared/config.ts INGEST_LIMITS, which the sweeper's idea of "stuck" follows too;
 * the queue's visibility timeout follows from the function timeout.
 */
export const INGEST = {
  timeout: Duration.seconds(INGEST_LIMITS.timeoutSeconds),
  memoryMB: 1024,
  visibilityFactor: INGEST_LIMITS.visibilityFactor,
  batchSize: 10,
  maxBatchingWindow: Duration.seconds(5),
} as const;

/**
 * Dead-letter function limits. Ending an upload removes every item it wrote, the
 * same removal that may take the ingest function its whole timeout, and this
 * function has no continuation to hand the rest to: the same timeout. Dead letters
 * are rare, so two at a time (the least an SQS event source allows) is plenty.
 */
export const DEAD_LETTER = {
  timeout: INGEST.timeout,
  memoryMB: 256,
  batchSize: 10,
  maxConcurrency: 2,
} as const;

/** The dead-letter queue's visibility timeout, by the same AWS guidance as the ingest queue's. */
export const DEAD_LETTER_VISIBILITY = Duration.seconds(DEAD_LETTER.timeout.toSeconds() * INGEST.visibilityFactor);

/**
 * Sweeper limits. A run starts at most `maxEventAge` after its time at EventBridge
 * and as long again in Lambda's queue of asynchronous invocations, and stops at its
 * timeout: 1 + 1 + 2 minutes, less than the 5 between runs, so runs never overlap.
 * A removal cut off by the timeout is picked up where it stopped by the next run.
 */
export const SWEEPER = {
  every: Duration.minutes(5),
  timeout: Duration.minutes(2),
  maxEventAge: Duration.minutes(1),
  memoryMB: 256,
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

/** The Node.js runtime and esbuild settings every function shares (infra/bundling.ts). */
const RUNTIME = lambda.Runtime.NODEJS_24_X;
const BUNDLING: BundlingOptions = { format: OutputFormat.ESM, target: LAMBDA_TARGET, ...LAMBDA_BUNDLING };

/** Environment every function shares besides the table, the lab and its Powertools service name. */
const POWERTOOLS_ENV = {
  POWERTOOLS_METRICS_NAMESPACE: 'Benchdrop',
  POWERTOOLS_LOG_LEVEL: 'INFO',
} as const;

/** A function's share of the table: actions on its items, and the indexes it queries. */
interface TableAccess {
  items: readonly string[];
  indexes: readonly (keyof typeof INDEXES)[];
}

/**
 * Item actions of the functions that write: reads, writes and deletes of single
 * items and batches, queries of the table (a run's items, to remove them).
 */
const WRITER_ITEM_ACTIONS = ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'];

/**
 * What each function does with the table: exactly the commands its code sends
 * (test/infra/least-privilege.test.ts reads them from each bundle's sources). No
 * Scan, no transactions, no table management, no streams anywhere. Removing an
 * upload's items queries byDevice for the labels they leave; only the API reads
 * in batches, and only the sweeper looks uploads up by status.
 */
const TABLE_ACCESS = {
  ingest: { items: WRITER_ITEM_ACTIONS, indexes: ['byDevice'] },
  api: { items: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'], indexes: ['byDevice', 'byStatus', 'byTag'] },
  deadLetter: { items: WRITER_ITEM_ACTIONS, indexes: ['byDevice'] },
  sweeper: { items: WRITER_ITEM_ACTIONS, indexes: ['byDevice', 'byStatus'] },
} as const satisfies Record<string, TableAccess>;

/** `GET /runs/{id}` -> method and path of an HTTP API route. */
export function parseRouteKey(routeKey: string): { method: apigwv2.HttpMethod; path: string } {
  const match = /^([A-Z]+) (\/\S*)$/.exec(routeKey);
  const method = match && Object.values(apigwv2.HttpMethod).find((m) => m === match[1]);
  if (!match || !method || method === apigwv2.HttpMethod.ANY) throw new Error(`not a route key with one method and a path: '${routeKey}'`);
  return { method, path: match[2] };
}

/**
 * S3 notifications into a queue, like aws-s3-notifications' SqsDestination but with
 * the queue policy naming the bucket's account besides its ARN: a bucket ARN holds
 * no account, and bucket names are global, so once this lab's bucket is gone a
 * bucket of the same name in another account would match the ARN alone.
 */
function queueDestination(queue: sqs.Queue, bucket: s3.Bucket): s3.IBucketNotificationDestination {
  return {
    bind: () => {
      queue.grantSendMessages(
        new iam.ServicePrincipal('s3.amazonaws.com', {
          conditions: { ArnLike: { 'aws:SourceArn': bucket.bucketArn }, StringEquals: { 'aws:SourceAccount': Stack.of(bucket).account } },
        }),
      );
      return { arn: queue.queueArn, type: s3.BucketNotificationDestinationType.QUEUE, dependencies: [queue] };
    },
  };
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
  readonly deadLetterFunction: NodejsFunction;
  readonly deadLetterRole: iam.Role;
  readonly deadLetterLogs: logs.LogGroup;
  readonly sweeper: NodejsFunction;
  readonly sweeperRole: iam.Role;
  readonly sweeperLogs: logs.LogGroup;
  readonly sweepSchedule: events.Rule;
  readonly apiFunction: NodejsFunction;
  readonly apiRole: iam.Role;
  readonly apiLogs: logs.LogGroup;
  readonly api: apigwv2.HttpApi;
  readonly apiStage: apigwv2.HttpStage;
  readonly apiAccessLogs: logs.LogGroup;
  readonly alarmKey: kms.Key;
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
    // aws/sqs managed key would not let S3 publish at all. The dead-letter queue is
    // read by the dead-letter function, hence its own visibility timeout.
    this.deadLetterQueue = new sqs.Queue(this, 'IngestDeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: DEAD_LETTER_VISIBILITY,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(this, 'IngestQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(INGEST.timeout.toSeconds() * INGEST.visibilityFactor),
      retentionPeriod: Duration.days(14),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: INGEST_LIMITS.maxReceiveCount },
    });

    // Every new object version and every delete (or delete marker) becomes a queue message.
    const destination = queueDestination(this.queue, this.bucket);
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
      environment: {
        [ENV.bucketName]: this.bucket.bucketName,
        [ENV.maxUploadBytes]: String(settings.maxUploadMB * MB),
        [ENV.maxSeriesPerFile]: String(settings.maxSeriesPerFile),
        [ENV.queueUrl]: this.queue.queueUrl,
      },
      dataRemoval,
    }));
    const ingestRole = this.ingestRole;

    // Least privilege: read the drop bucket's objects and their versions (metadata
    // comes with GetObject; object tags are never read) ...
    ingestRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'ReadUploads',
        actions: ['s3:GetObject', 's3:GetObjectVersion'],
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
    // ... read/write the table and query the indexes it uses, each named: no wildcard ...
    this.grantTable(ingestRole, TABLE_ACCESS.ingest);
    // ... and send to its own queue only: a step that cannot finish before the
    // timeout (a long removal) sends itself the rest as a continuation message.
    ingestRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'SendContinuations',
        actions: ['sqs:SendMessage'],
        resources: [this.queue.queueArn],
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

    // --- Dead-letter function ---------------------------------------------------------
    // A message that failed every delivery ends here. Left in the queue, its upload
    // would read `processing` for the 14 days the queue keeps it; instead this function
    // reads the queue and ends the upload `failed` with the reason, its partial runs
    // removed (shared/dead-letters.ts). Handling consumes the message, so the alarm on
    // dead letters is the function's own count of them (DeadLetters, below); what stays
    // in the queue is what it could not settle yet, with alarms of its own. Nothing is
    // lost with the message: the pipeline never deletes the object version, the upload
    // record keeps the reason, and the function's log keeps the body, to send back to
    // the ingest queue once the cause is fixed.
    ({ fn: this.deadLetterFunction, role: this.deadLetterRole, logs: this.deadLetterLogs } = this.labFunction('DeadLetter', {
      entry: DEAD_LETTER_ENTRY,
      description: `benchdrop lab ${settings.lab}: end the uploads of dead-lettered ingest messages as failed`,
      roleDescription: `benchdrop lab ${settings.lab}: dead-letter function`,
      service: DEAD_LETTER_METRICS.service,
      memoryMB: DEAD_LETTER.memoryMB,
      timeout: DEAD_LETTER.timeout,
      environment: {},
      dataRemoval,
    }));
    // Least privilege: the table as ending an upload needs it, and (from the event
    // source) consuming the dead-letter queue; no bucket, no sending.
    this.grantTable(this.deadLetterRole, TABLE_ACCESS.deadLetter);
    this.deadLetterFunction.addEventSource(
      new SqsEventSource(this.deadLetterQueue, {
        batchSize: DEAD_LETTER.batchSize,
        reportBatchItemFailures: true,
        maxConcurrency: DEAD_LETTER.maxConcurrency,
      }),
    );

    // --- Sweeper ------------------------------------------------------------------------
    // A delivery that died (crash, timeout, out of memory) on its last receive leaves a
    // `processing` record and no message at all: nothing else would ever end it.
    ({ fn: this.sweeper, role: this.sweeperRole, logs: this.sweeperLogs } = this.labFunction('Sweeper', {
      entry: SWEEPER_ENTRY,
      description: `benchdrop lab ${settings.lab}: end uploads left processing past their time as failed`,
      roleDescription: `benchdrop lab ${settings.lab}: sweeper function`,
      service: SWEEPER_METRICS.service,
      memoryMB: SWEEPER.memoryMB,
      timeout: SWEEPER.timeout,
      environment: {},
      dataRemoval,
    }));
    // Least privilege: processing records by status, and the table as ending an upload needs it.
    this.grantTable(this.sweeperRole, TABLE_ACCESS.sweeper);
    // No retries: the next run is the retry, and a late one could overlap it (see SWEEPER).
    this.sweeper.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: SWEEPER.maxEventAge });
    this.sweepSchedule = new events.Rule(this, 'SweepSchedule', {
      description: `benchdrop lab ${settings.lab}: run the sweeper every ${SWEEPER.every.toMinutes()} minutes`,
      schedule: events.Schedule.rate(SWEEPER.every),
      targets: [new LambdaFunction(this.sweeper, { retryAttempts: 0, maxEventAge: SWEEPER.maxEventAge })],
    });

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
      environment: { [ENV.bucketName]: this.bucket.bucketName, [ENV.maxUploadBytes]: String(settings.maxUploadMB * MB) },
      dataRemoval,
    }));
    const apiRole = this.apiRole;

    // Least privilege: item reads and queries on the table, queries on its indexes ...
    this.grantTable(apiRole, TABLE_ACCESS.api);
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
    // The topic is encrypted under a key of the lab's own (a key's monthly charge per
    // lab): CloudWatch cannot publish under the AWS managed aws/sns key, whose policy
    // nobody may change, while this key's policy lets in CloudWatch for this account's
    // alarms and nothing else besides the account's own administrators (KMS's default
    // statement, through IAM).
    this.alarmKey = new kms.Key(this, 'AlarmTopicKey', {
      description: `benchdrop lab ${settings.lab}: encrypts the messages of the alarm topic`,
      enableKeyRotation: true,
      // Nothing outlives the topic under this key: it goes with the stack, after KMS's shortest wait.
      pendingWindow: Duration.days(7),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // The alarms cannot be named one by one in the key policy (they refer to the topic,
    // which refers to the key): the account's alarms here, this lab's in the topic policy.
    this.alarmKey.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowAccountAlarms',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: {
          StringEquals: { 'aws:SourceAccount': this.account },
          ArnLike: { 'aws:SourceArn': this.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
        },
      }),
    );
    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', {
      displayName: `benchdrop ${settings.lab} alarms`,
      enforceSSL: true,
      signatureVersion: '2',
      masterKey: this.alarmKey,
    });
    if (settings.alarmEmail) this.alarmTopic.addSubscription(new EmailSubscription(settings.alarmEmail));

    const fiveMinutes = Duration.minutes(5);
    const sum = { period: fiveMinutes, statistic: cloudwatch.Stats.SUM };
    const maximum = { period: fiveMinutes, statistic: cloudwatch.Stats.MAXIMUM };
    /** A metric one of the lab's functions sends (Powertools: its service and the lab as dimensions). */
    const labMetric = (source: { namespace: string; service: string }, metricName: string) =>
      new cloudwatch.Metric({ namespace: source.namespace, metricName, dimensionsMap: { service: source.service, lab: settings.lab }, ...sum });
    // An alarm on a metric over the last `periods` 5-minute periods (one breaching
    // period is enough); most fire on any occurrence, as one dead letter, error,
    // throttle or 5xx is worth a look. No data means nothing happened.
    const above = (id: string, alarmDescription: string, metric: cloudwatch.IMetric, threshold = 0, periods = 1) =>
      new cloudwatch.Alarm(this, id, {
        alarmDescription,
        metric,
        threshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: periods,
        datapointsToAlarm: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    const minutes = (seconds: number) => `${Math.round(seconds / 60)} minutes`;
    const allDeliveriesSeconds = ALL_DELIVERIES_MS / 1000;
    const unsettledAfterSeconds = DEAD_LETTER_VISIBILITY.toSeconds();
    this.alarms = [
      above(
        'DeadLettersAlarm',
        `benchdrop ${settings.lab}: ingest gave up on messages after ${INGEST_LIMITS.maxReceiveCount} receives; the dead-letter function ended their uploads failed (UploadsDeadLettered) and logged each message`,
        labMetric(DEAD_LETTER_METRICS, DEAD_LETTER_METRICS.deadLetters),
      ),
      // A dead letter the function fails comes back once per visibility timeout: watching
      // a period longer than that keeps the alarm on for as long as one keeps failing.
      above(
        'DeadLettersUnsettledAlarm',
        `benchdrop ${settings.lab}: the dead-letter function could not settle a dead letter (see its log); it is tried again every ${minutes(unsettledAfterSeconds)} and its upload may still read processing`,
        labMetric(DEAD_LETTER_METRICS, DEAD_LETTER_METRICS.unsettled),
        0,
        Math.ceil(unsettledAfterSeconds / fiveMinutes.toSeconds()) + 1,
      ),
      // The function reads a dead letter within seconds, so one older than the queue's
      // visibility timeout is waiting for nobody: the event source is off or gone.
      // (SQS stops counting a message here after its third receive: failed attempts
      // are the alarm above's.)
      above(
        'DeadLetterQueueAlarm',
        `benchdrop ${settings.lab}: a dead letter has waited more than ${minutes(unsettledAfterSeconds)}: nothing settles it (is the dead-letter function's event source enabled?); its upload may still read processing`,
        this.deadLetterQueue.metricApproximateAgeOfOldestMessage(maximum),
        unsettledAfterSeconds,
      ),
      // All its deliveries back to back take a message at most timeout x receives
      // (ALL_DELIVERIES_MS); one older than that needed a redelivery (a delivery failed)
      // or waits behind a backlog or for a consumer that does not read.
      above(
        'IngestQueueAgeAlarm',
        `benchdrop ${settings.lab}: an ingest message has waited more than ${minutes(allDeliveriesSeconds)} (the function timeout x ${INGEST_LIMITS.maxReceiveCount} receives): a delivery failed, or ingest is far behind, throttled or not reading the queue; its upload reads processing`,
        this.queue.metricApproximateAgeOfOldestMessage(maximum),
        allDeliveriesSeconds,
      ),
      above(
        'UploadsOverdueAlarm',
        `benchdrop ${settings.lab}: the sweeper found processing records past their time (${minutes(STUCK_AFTER_MS / 1000)}): a delivery died without ending its upload; the sweeper ends them failed (UploadsSwept)`,
        labMetric(SWEEPER_METRICS, SWEEPER_METRICS.overdue),
      ),
      above(
        'IngestErrorsAlarm',
        `benchdrop ${settings.lab}: the ingest function failed (crash, timeout or out of memory)`,
        this.ingest.metricErrors(sum),
      ),
      above(
        'IngestThrottlesAlarm',
        `benchdrop ${settings.lab}: the ingest function was throttled (account concurrency exhausted); uploads wait in the queue`,
        this.ingest.metricThrottles(sum),
      ),
      above(
        'DeadLetterErrorsAlarm',
        `benchdrop ${settings.lab}: the dead-letter function failed (crash, timeout or out of memory); its messages wait in the dead-letter queue`,
        this.deadLetterFunction.metricErrors(sum),
      ),
      above(
        'SweeperErrorsAlarm',
        `benchdrop ${settings.lab}: the sweeper failed (crash or timeout); the next run goes on where it stopped`,
        this.sweeper.metricErrors(sum),
      ),
      above(
        'ApiServerErrorsAlarm',
        `benchdrop ${settings.lab}: the HTTP API answered 5xx (function error, timeout or an integration failure); see the API access logs`,
        this.api.metricServerError(sum),
      ),
      above(
        'ApiErrorsAlarm',
        `benchdrop ${settings.lab}: the API function failed (crash, timeout or out of memory)`,
        this.apiFunction.metricErrors(sum),
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
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.deadLetterQueue.queueUrl, description: 'Messages the ingest function gave up on, until the dead-letter function settles them' });

    this.acknowledgeCdkInternals();
  }

  /**
   * A function of the lab with its own log group and role (instead of the default
   * role, which carries the managed AWSLambdaBasicExecutionRole: logs on every log
   * group of the account), bundled and configured like its siblings. Every one gets
   * the table, the lab and Powertools' settings; `environment` adds its own.
   */
  private labFunction(
    id: 'Ingest' | 'Api' | 'DeadLetter' | 'Sweeper',
    options: { entry: string; description: string; roleDescription: string; service: string; memoryMB: number; timeout: Duration; environment: Record<string, string>; dataRemoval: RemovalPolicy },
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
        [ENV.lab]: this.settings.lab,
        ...options.environment,
        POWERTOOLS_SERVICE_NAME: options.service,
        ...POWERTOOLS_ENV,
      },
      bundling: BUNDLING,
    });
    return { fn, role, logs: logGroup };
  }

  /** Item actions on the table, and Query on the indexes named (TABLE_ACCESS). */
  private grantTable(role: iam.Role, access: TableAccess): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'Table', actions: [...access.items], resources: [this.table.tableArn] }));
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'QueryIndexes',
        actions: ['dynamodb:Query'],
        resources: access.indexes.map((index) => `${this.table.tableArn}/index/${INDEXES[index].name}`),
      }),
    );
  }

  /**
   * The one finding on a resource that CDK itself adds and this stack cannot shape:
   * the role of the custom resource that writes the bucket's notification
   * configuration (its own policy is already scoped to the drop bucket).
   */
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
