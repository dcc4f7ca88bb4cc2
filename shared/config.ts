/**
 * Settings shared by the stack (which sets them), the functions (which read them
 * from their environment) and the local lab: names and defaults live here once.
 */

/** Environment variables of the Lambda functions (and of the local lab's handlers). */
export const ENV = {
  tableName: 'BENCHDROP_TABLE',
  bucketName: 'BENCHDROP_BUCKET',
  maxUploadBytes: 'BENCHDROP_MAX_UPLOAD_BYTES',
  maxSeriesPerFile: 'BENCHDROP_MAX_SERIES_PER_FILE',
  /** The ingest queue: where a step that could not finish in time sends its continuation. */
  queueUrl: 'BENCHDROP_QUEUE_URL',
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
  /** Most series (device x run) one file may hold: what bounds ingest memory. */
  maxSeriesPerFile: number;
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
  // What one invocation can write before its timeout: a run's chunks share one
  // partition (1,000 WCU/s, about 1.8 MB of log a second; BENCHMARKS.md, cost).
  maxUploadMB: 500,
  maxSeriesPerFile: 20_000,
  noncurrentVersionDays: 90,
  retainData: true,
  deletionProtection: true,
};

/** Lab names become stack names and tags: letters, digits and dashes. */
export const LAB_NAME = /^[a-z][a-z0-9-]{0,30}$/;

export const MB = 1_000_000;

/**
 * The ingest function's limits, which the queue, the sweeper and the alarms
 * follow. A delivery that fails is retried once the queue's visibility timeout
 * (visibilityFactor x the function timeout) has passed, up to maxReceiveCount
 * deliveries in all.
 */
export const INGEST_LIMITS = {
  timeoutSeconds: 300,
  /** Deliveries before a message moves to the dead-letter queue. */
  maxReceiveCount: 3,
  /** AWS guidance for SQS event sources: a visibility timeout of at least 6x the function timeout. */
  visibilityFactor: 6,
} as const;

/** How long all the deliveries of one message take, back to back. */
export const ALL_DELIVERIES_MS = INGEST_LIMITS.timeoutSeconds * INGEST_LIMITS.maxReceiveCount * 1000;

/**
 * How old a `processing` record may be before the sweeper ends it as failed: the
 * last delivery can start a visibility timeout after each failed one and run a
 * function timeout, so a record older than that has no delivery left to finish it.
 */
export const STUCK_AFTER_MS = ((INGEST_LIMITS.maxReceiveCount - 1) * INGEST_LIMITS.visibilityFactor + 1) * INGEST_LIMITS.timeoutSeconds * 1000;
