/**
 * The drop bucket, where uploads land, and the bucket its server access logs go
 * to. Both private, SSL only, owned by the bucket owner; the drop bucket keeps
 * replaced and deleted versions for a while, as ingest reads a version by its id.
 */
import { Duration, type Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { PartProps } from './lab-function.ts';

/** Days S3 server access logs are kept in the logs bucket. */
export const ACCESS_LOG_DAYS = 365;

export interface DropBucket {
  bucket: s3.Bucket;
  logsBucket: s3.Bucket;
}

export function dropBucket(stack: Stack, props: PartProps): DropBucket {
  const { settings, dataRemoval } = props;
  // Server access logs go to their own bucket (S3 writes them with SSE-S3 only).
  // cdk-nag accepts it without logs of its own because it is a log destination.
  const logsBucket = new s3.Bucket(stack, 'AccessLogsBucket', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(ACCESS_LOG_DAYS) }],
    removalPolicy: dataRemoval,
    autoDeleteObjects: !settings.retainData,
  });
  const bucket = new s3.Bucket(stack, 'DropBucket', {
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
    serverAccessLogsBucket: logsBucket,
    serverAccessLogsPrefix: 'drop/',
    removalPolicy: dataRemoval,
    autoDeleteObjects: !settings.retainData,
  });
  return { bucket, logsBucket };
}
