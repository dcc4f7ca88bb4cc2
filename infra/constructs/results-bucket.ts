/**
 * The results bucket: what the pipeline itself writes, one samples object per
 * iostat run (shared/store/samples-schema.ts). Private, SSL only, owned by the
 * bucket owner, unversioned (a run's object is written once and deleted with
 * the run), and without event notifications: nothing written here is ever an
 * upload. A multipart upload a dead ingest left unfinished is aborted after a day.
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { SAMPLES_PREFIX } from '../../shared/store/samples-schema.ts';
import type { PartProps } from './lab-function.ts';

/** Days after which S3 aborts an unfinished multipart upload (its parts cost until then). */
export const ABORT_UPLOADS_AFTER_DAYS = 1;

export function resultsBucket(stack: Stack, props: PartProps, logsBucket: s3.Bucket): s3.Bucket {
  const { settings, dataRemoval } = props;
  return new s3.Bucket(stack, 'ResultsBucket', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    versioned: false,
    lifecycleRules: [
      {
        id: 'abort-incomplete-uploads',
        abortIncompleteMultipartUploadAfter: Duration.days(ABORT_UPLOADS_AFTER_DAYS),
      },
    ],
    serverAccessLogsBucket: logsBucket,
    serverAccessLogsPrefix: 'results/',
    removalPolicy: dataRemoval,
    autoDeleteObjects: !settings.retainData,
  });
}

/** What a function does with samples objects: ingest writes them, every step that removes runs deletes them. */
export const SAMPLES_ACCESS = {
  // lib-storage's Upload sends PutObject, or CreateMultipartUpload/UploadPart/Complete (s3:PutObject)
  // and AbortMultipartUpload when it gives up.
  write: ['s3:AbortMultipartUpload', 's3:PutObject'],
  remove: ['s3:DeleteObject'],
} as const;

/** Actions on the samples objects (samples/*) of the results bucket, nothing else of it. */
export function grantSamples(role: iam.Role, bucket: s3.Bucket, actions: readonly string[], reason: string): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'SamplesObjects',
      actions: [...actions],
      resources: [bucket.arnForObjects(`${SAMPLES_PREFIX}*`)],
    }),
  );
  const policy = role.node.tryFindChild('DefaultPolicy');
  if (!policy) return;
  const bucketId = Stack.of(bucket).getLogicalId(bucket.node.defaultChild as s3.CfnBucket);
  Validations.of(policy).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${SAMPLES_PREFIX}*]`,
    reason,
  });
}
