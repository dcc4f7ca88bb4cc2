/**
 * The ingest pipeline: every new object version and every delete in the drop
 * bucket becomes a message in the ingest queue, which the ingest function reads
 * in batches; a message that failed every delivery moves to the dead-letter
 * queue (read by the dead-letter function, dead-letter.ts).
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { ENV, INGEST_LIMITS, MB, SERVICES } from '../../shared/config.ts';
import { DEAD_LETTER_VISIBILITY, INGEST, INGEST_VISIBILITY } from '../limits.ts';
import {
  acknowledgeBucketObjects,
  functionEntry,
  grantTable,
  labFunction,
  TABLE_ACCESS,
  type LabFunction,
  type PartProps,
} from './lab-function.ts';
import { grantSamples, SAMPLES_ACCESS } from './results-bucket.ts';
import { encoderWorkerCommand } from '../encoder-worker.ts';

/** How long either queue keeps a message: SQS's longest. */
const QUEUE_RETENTION = Duration.days(14);

export interface IngestQueues {
  queue: sqs.Queue;
  deadLetterQueue: sqs.Queue;
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
      const conditions = {
        ArnLike: { 'aws:SourceArn': bucket.bucketArn },
        StringEquals: { 'aws:SourceAccount': Stack.of(bucket).account },
      };
      queue.grantSendMessages(new iam.ServicePrincipal('s3.amazonaws.com', { conditions }));
      return { arn: queue.queueArn, type: s3.BucketNotificationDestinationType.QUEUE, dependencies: [queue] };
    },
  };
}

/**
 * The ingest queue and its dead-letter queue, with the bucket's events going in.
 * SSE-SQS rather than KMS: S3 can deliver to it without a key policy, and the
 * aws/sqs managed key would not let S3 publish at all. The dead-letter queue is
 * read by the dead-letter function, hence its own visibility timeout.
 */
export function ingestQueues(stack: Stack, bucket: s3.Bucket): IngestQueues {
  const deadLetterQueue = new sqs.Queue(stack, 'IngestDeadLetterQueue', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: DEAD_LETTER_VISIBILITY,
    retentionPeriod: QUEUE_RETENTION,
  });
  const queue = new sqs.Queue(stack, 'IngestQueue', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: INGEST_VISIBILITY,
    retentionPeriod: QUEUE_RETENTION,
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: INGEST_LIMITS.maxReceiveCount },
  });
  // Every new object version and every delete (or delete marker) becomes a queue message.
  const destination = queueDestination(queue, bucket);
  bucket.addEventNotification(s3.EventType.OBJECT_CREATED, destination);
  bucket.addEventNotification(s3.EventType.OBJECT_REMOVED, destination);
  return { queue, deadLetterQueue };
}

export interface IngestFunctionProps extends PartProps {
  bucket: s3.Bucket;
  /** Where it writes runs' samples objects, and deletes those of removed runs. */
  resultsBucket: s3.Bucket;
  queue: sqs.Queue;
  table: dynamodb.Table;
}

/**
 * The ingest function, reading the ingest queue. No reserved concurrency: labs
 * share the account's pool, and reserving a slice per lab would shrink it for
 * everyone. The event source caps it instead.
 */
export function ingestFunction(stack: Stack, props: IngestFunctionProps): LabFunction {
  const { settings, bucket, queue } = props;
  const ingest = labFunction(stack, 'Ingest', props.table, props, {
    entry: functionEntry('ingest'),
    description: `benchdrop lab ${settings.lab}: parse uploaded benchmark logs into the table`,
    roleDescription: `benchdrop lab ${settings.lab}: ingest function`,
    service: SERVICES.ingest,
    memoryMB: INGEST.memoryMB,
    timeout: INGEST.timeout,
    environment: {
      [ENV.bucketName]: bucket.bucketName,
      [ENV.resultsBucket]: props.resultsBucket.bucketName,
      [ENV.maxUploadBytes]: String(settings.maxUploadMB * MB),
      [ENV.maxSeriesPerFile]: String(settings.maxSeriesPerFile),
      [ENV.queueUrl]: queue.queueUrl,
    },
    // Samples objects are encoded on a thread of their own, from a bundle packaged beside the handler's.
    afterBundling: (inputDir, outputDir) => [encoderWorkerCommand(inputDir, outputDir)],
  });
  grantIngest(ingest.role, props);
  ingest.fn.addEventSource(
    new SqsEventSource(queue, {
      batchSize: INGEST.batchSize,
      maxBatchingWindow: INGEST.maxBatchingWindow,
      reportBatchItemFailures: true,
      maxConcurrency: INGEST.maxConcurrency,
    }),
  );
  acknowledgeBucketObjects(
    ingest.role,
    bucket,
    'Uploads may use any key (README, "Upload conventions"), so reading them needs the bucket\'s object ARN pattern; ' +
      'the statement is limited to read actions on this one bucket.',
  );
  return ingest;
}

/** Least privilege for the ingest function: each statement names its one bucket, table or queue. */
function grantIngest(role: iam.Role, props: IngestFunctionProps): void {
  const { bucket, queue } = props;
  // Read the drop bucket's objects and their versions (metadata comes with
  // GetObject; object tags are never read) ...
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'ReadUploads',
      actions: ['s3:GetObject', 's3:GetObjectVersion'],
      resources: [bucket.arnForObjects('*')],
    }),
  );
  // ... list it, only so that a key or version removed before ingest runs yields
  // NoSuchKey/NoSuchVersion (recorded as such) rather than AccessDenied ...
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ sid: 'ListUploads', actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
  );
  // ... read/write the table and query the indexes it uses, each named: no wildcard ...
  grantTable(role, props.table, TABLE_ACCESS.ingest);
  // ... write runs' samples objects and delete those of the runs it removes (never reads them) ...
  grantSamples(
    role,
    props.resultsBucket,
    [...SAMPLES_ACCESS.write, ...SAMPLES_ACCESS.remove],
    "each run's samples object is its own key under samples/ (the run id names it): ingest writes them " +
      'and deletes those of the runs it removes, nothing else of the bucket.',
  );
  // ... and send to its own queue only: a step that cannot finish before the
  // timeout (a long removal) sends itself the rest as a continuation message.
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ sid: 'SendContinuations', actions: ['sqs:SendMessage'], resources: [queue.queueArn] }),
  );
}
