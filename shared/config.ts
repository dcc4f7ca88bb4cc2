/**
 * Settings shared by the stack (which sets them), the functions (which read them
 * from their environment) and the local lab: names and defaults live here once.
 */

/** The region a client uses when none is configured (the local lab's emulators accept any). */
export const DEFAULT_REGION = 'us-east-1';

/** The one key pair s3rver accepts: the local lab's S3 and DynamoDB are reached with it. */
export const LAB_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** Environment variables of the Lambda functions (and of the local lab's handlers). */
export const ENV = {
  tableName: 'BENCHDROP_TABLE',
  bucketName: 'BENCHDROP_BUCKET',
  /**
   * The bucket the pipeline owns (no events, never the drop bucket): each iostat run's samples
   * (shared/store/samples-schema.ts) and the frozen reports of POST /reports.
   */
  resultsBucket: 'BENCHDROP_RESULTS_BUCKET',
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
  // What one invocation can write before its timeout, as a run's chunks share one
  // partition (BENCHMARKS.md, cost).
  maxUploadMB: 500,
  maxSeriesPerFile: 20_000,
  noncurrentVersionDays: 90,
  retainData: true,
  deletionProtection: true,
};

/** The CloudWatch namespace of every function's metrics; labs tell theirs apart by a `lab` dimension. */
export const METRICS_NAMESPACE = 'Benchdrop';

/** Each function's service name: in its logs, and as a dimension of its metrics. */
export const SERVICES = {
  ingest: 'benchdrop-ingest',
  api: 'benchdrop-api',
  deadLetter: 'benchdrop-dead-letter',
  sweeper: 'benchdrop-sweeper',
} as const;

/** Lab names become stack names and tags: letters, digits and dashes. */
export const LAB_NAME = /^[a-z][a-z0-9-]{0,30}$/;

export const MB = 1_000_000;

/**
 * The ingest function's limits and its queue's settings, which the stack sets,
 * the local lab's queue follows, and the sweeper and the alarms reason from. A
 * delivery that fails is retried once the queue's visibility timeout
 * (visibilityFactor x the function timeout) has passed, up to maxReceiveCount
 * deliveries in all.
 */
export const INGEST_LIMITS = {
  timeoutSeconds: 300,
  /**
   * Two vCPUs' worth (Lambda gives one per 1,769 MB): an iostat log's samples
   * object is encoded on a second thread while the first parses.
   */
  memoryMB: 3584,
  /** Deliveries before a message moves to the dead-letter queue. */
  maxReceiveCount: 3,
  /** AWS guidance for SQS event sources: a visibility timeout of at least 6x the function timeout. */
  visibilityFactor: 6,
  /** Messages per batch: the SQS event source's default. */
  batchSize: 10,
  maxBatchingWindowSeconds: 5,
  /**
   * Concurrent invocations per lab, so that a burst of uploads cannot starve other
   * labs' functions or the table (no reserved concurrency: labs share the account's pool).
   */
  maxConcurrency: 10,
} as const;

/**
 * Dead-letter function limits. Ending an upload removes every item it wrote, the
 * same removal that may take the ingest function its whole timeout, and this
 * function has no continuation to hand the rest to: the same timeout. Dead letters
 * are rare, so two at a time (the least an SQS event source allows) is plenty.
 */
export const DEAD_LETTER_LIMITS = {
  timeoutSeconds: INGEST_LIMITS.timeoutSeconds,
  memoryMB: 256,
  batchSize: 10,
  maxConcurrency: 2,
} as const;

/**
 * Sweeper limits. A run starts at most `maxEventAgeSeconds` after its time at
 * EventBridge and as long again in Lambda's queue of asynchronous invocations, and
 * stops at its timeout: together less than the time between runs, so runs never
 * overlap. A removal cut off by the timeout is picked up where it stopped by the next run.
 */
export const SWEEPER_LIMITS = {
  everyMinutes: 5,
  timeoutSeconds: 120,
  maxEventAgeSeconds: 60,
  memoryMB: 256,
} as const;

/** API function limits: queries and presigning are short, and API Gateway gives up after 30 s anyway. */
export const API_LIMITS = {
  timeoutSeconds: 10,
  memoryMB: 512,
} as const;

/** How long all the deliveries of one message take, back to back. */
export const ALL_DELIVERIES_MS = INGEST_LIMITS.timeoutSeconds * INGEST_LIMITS.maxReceiveCount * 1000;

/**
 * How old a `processing` record may be before the sweeper ends it as failed: the
 * last delivery can start a visibility timeout after each failed one and run a
 * function timeout, so a record older than that has no delivery left to finish it.
 */
export const STUCK_AFTER_MS =
  ((INGEST_LIMITS.maxReceiveCount - 1) * INGEST_LIMITS.visibilityFactor + 1) * INGEST_LIMITS.timeoutSeconds * 1000;

/** A function's environment variable is missing or junk; the message names it and the bad value. */
export class EnvError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'EnvError';
  }
}

/** A whole number written in decimal digits (blanks around them allowed), or NaN for anything else. */
export function wholeNumber(text: string): number {
  return /^\s*\d+\s*$/.test(text) ? Number(text) : Number.NaN;
}

/** A variable that must be set to something (the table's name, say). */
export function envString(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') throw new EnvError(name, `${name} is not set`);
  return value;
}

/**
 * A whole number from the environment, `fallback` when the variable is unset.
 * Anything else that is not a whole number from `min` to `max` is refused: read
 * as NaN, a limit would compare false with everything and switch itself off.
 */
export function envInteger(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  range: { min?: number; max?: number } = {},
): number {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const { min = 0, max = Number.MAX_SAFE_INTEGER } = range;
  const value = wholeNumber(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new EnvError(
      name,
      `${name}=${JSON.stringify(raw)} is invalid: expected a whole number from ${min} to ${max}`,
    );
  }
  return value;
}

/** The upload limits the stack hands the ingest and API functions, or the lab's defaults when unset. */
export function uploadLimitsFromEnv(env: NodeJS.ProcessEnv): { maxUploadBytes: number; maxSeriesPerFile: number } {
  return {
    maxUploadBytes: envInteger(env, ENV.maxUploadBytes, LAB_DEFAULTS.maxUploadMB * MB, { min: 1 }),
    maxSeriesPerFile: envInteger(env, ENV.maxSeriesPerFile, LAB_DEFAULTS.maxSeriesPerFile, { min: 1 }),
  };
}
