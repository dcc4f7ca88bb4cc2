/**
 * One benchdrop lab: drop bucket -> S3 events -> SQS (+ DLQ) -> ingest Lambda ->
 * DynamoDB table and results bucket (runs' samples objects) <- API Lambda <-
 * HTTP API (IAM-authorised), with alarms; a
 * dead-letter Lambda and a scheduled sweeper end the uploads ingest gave up on or
 * lost, so that no upload stays `processing`. Nothing here has a fixed physical
 * name and every resource carries the tag `benchdrop:lab=NAME`, so any number of
 * labs share an account. The table schema, the API routes, the functions'
 * environment and their limits come from shared/; each part is built by a module
 * of infra/constructs/.
 */
import { CfnOutput, RemovalPolicy, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { labAlarms } from './constructs/alarms.ts';
import { httpApi } from './constructs/api.ts';
import { deadLetterFunction } from './constructs/dead-letter.ts';
import { dropBucket } from './constructs/drop-bucket.ts';
import { ingestFunction, ingestQueues } from './constructs/ingest-pipeline.ts';
import type { PartProps } from './constructs/lab-function.ts';
import { sweeper } from './constructs/sweeper.ts';
import { resultsBucket } from './constructs/results-bucket.ts';
import { resultsTable } from './constructs/table.ts';
import type { StackSettings } from './settings.ts';

/** The tag every resource of a lab carries. */
export const LAB_TAG = 'benchdrop:lab';

export interface BenchdropStackProps extends StackProps {
  readonly settings: StackSettings;
  /** Entry file of the API function; functions/api/handler.ts unless a test substitutes a stand-in. */
  readonly apiEntry?: string;
}

export class BenchdropStack extends Stack {
  readonly settings: StackSettings;
  readonly bucket: s3.Bucket;
  readonly logsBucket: s3.Bucket;
  readonly resultsBucket: s3.Bucket;
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
    const part: PartProps = {
      settings,
      dataRemoval: settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    };

    ({ bucket: this.bucket, logsBucket: this.logsBucket } = dropBucket(this, part));
    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue } = ingestQueues(this, this.bucket));
    this.table = resultsTable(this, part);
    this.resultsBucket = resultsBucket(this, part, this.logsBucket);
    const withTable = { ...part, table: this.table, resultsBucket: this.resultsBucket };
    ({
      fn: this.ingest,
      role: this.ingestRole,
      logs: this.ingestLogs,
    } = ingestFunction(this, { ...withTable, bucket: this.bucket, queue: this.queue }));
    const deadLetter = deadLetterFunction(this, { ...withTable, deadLetterQueue: this.deadLetterQueue });
    ({ fn: this.deadLetterFunction, role: this.deadLetterRole, logs: this.deadLetterLogs } = deadLetter);
    ({
      fn: this.sweeper,
      role: this.sweeperRole,
      logs: this.sweeperLogs,
      schedule: this.sweepSchedule,
    } = sweeper(this, withTable));
    const api = httpApi(this, {
      ...withTable,
      bucket: this.bucket,
      resultsBucket: this.resultsBucket,
      ...(props.apiEntry ? { entry: props.apiEntry } : {}),
    });
    ({ fn: this.apiFunction, role: this.apiRole, logs: this.apiLogs } = api.function);
    ({ api: this.api, stage: this.apiStage, accessLogs: this.apiAccessLogs } = api);
    ({
      key: this.alarmKey,
      topic: this.alarmTopic,
      alarms: this.alarms,
    } = labAlarms(this, settings, {
      queue: this.queue,
      deadLetterQueue: this.deadLetterQueue,
      ingest: this.ingest,
      deadLetter: this.deadLetterFunction,
      sweeper: this.sweeper,
      apiFunction: this.apiFunction,
      api: this.api,
    }));
    this.addOutputs();
    this.acknowledgeCdkInternals();
  }

  /** What a lab's users and scripts need to find it (no export names: labs must not collide). */
  private addOutputs(): void {
    const outputs: [string, string, string][] = [
      ['BucketName', this.bucket.bucketName, 'Drop bucket: upload benchmark logs here'],
      ['TableName', this.table.tableName, 'DynamoDB table with uploads, runs and series'],
      ['ResultsBucketName', this.resultsBucket.bucketName, "Results bucket: runs' samples objects (written by ingest)"],
      ['QueueUrl', this.queue.queueUrl, 'Ingest queue (S3 events)'],
      ['ApiUrl', this.apiStage.url, 'HTTP API base URL (requests must be SigV4-signed: IAM authorisation)'],
      [
        'DeadLetterQueueUrl',
        this.deadLetterQueue.queueUrl,
        'Messages the ingest function gave up on, until the dead-letter function settles them',
      ],
    ];
    for (const [id, value, description] of outputs) new CfnOutput(this, id, { value, description });
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
        reason:
          "CDK's own bucket-notification custom resource handler; " +
          'it runs only during deployments and only needs to write its logs. Its role is not configurable.',
      });
    }
  }
}
