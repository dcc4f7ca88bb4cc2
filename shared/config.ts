/**
 * Settings shared by the stack (which sets them), the functions (which read them
 * from their environment) and the local lab: names and defaults live here once.
 */

/** Environment variables of the Lambda functions (and of the local lab's handlers). */
export const ENV = {
  tableName: 'BENCHDROP_TABLE',
  bucketName: 'BENCHDROP_BUCKET',
  maxUploadBytes: 'BENCHDROP_MAX_UPLOAD_BYTES',
  lab: 'BENCHDROP_LAB',
  /** Local lab and tests only: emulator endpoints. Unset in AWS. */
  s3Endpoint: 'BENCHDROP_S3_ENDPOINT',
  dynamodbEndpoint: 'BENCHDROP_DYNAMODB_ENDPOINT',
} as const;

/** Per-lab settings, from CDK context (`-c maxUploadMB=...`) or their defaults. */
export interface LabSettings {
  lab: string;
  /** Largest upload accepted, after decompression, in MB (10^6 bytes). */
  maxUploadMB: number;
  /** Days a replaced or deleted object version is kept before S3 expires it. */
  noncurrentVersionDays: number;
  /** Where alarms are e-mailed; no subscription when unset. */
  alarmEmail?: string;
  /** Keep the bucket and table when the stack is deleted. */
  retainData: boolean;
  /** DynamoDB deletion protection on the table. */
  deletionProtection: boolean;
}

export const LAB_DEFAULTS: Omit<LabSettings, 'lab'> = {
  maxUploadMB: 1024,
  noncurrentVersionDays: 90,
  retainData: true,
  deletionProtection: true,
};

/** Lab names become stack names and tags: letters, digits and dashes. */
export const LAB_NAME = /^[a-z][a-z0-9-]{0,30}$/;

export const MB = 1_000_000;
