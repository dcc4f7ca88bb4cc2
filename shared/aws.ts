/**
 * AWS SDK clients, configured once. In AWS they use the function's role and
 * region; the local lab and tests point them at s3rver and dynalite through the
 * endpoint variables in config.ts.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_REGION, ENV, envString } from './config.ts';

export interface ClientOptions {
  region?: string;
  s3Endpoint?: string;
  dynamodbEndpoint?: string;
  /** Emulators accept any credentials but s3rver wants its own pair. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Attempts per call, the first included (the SDK's default when unset: 4 for DynamoDB, 3 for S3). */
  maxAttempts?: number;
  /** Socket inactivity after which a call's attempt is given up (default CLIENT_TIMEOUTS_MS; tests shorten it). */
  socketTimeoutMs?: number;
}

/**
 * How long a connection may take to open, and a socket may sit silent in the
 * middle of a call, before the attempt fails with a TimeoutError, which the SDK
 * retries like any transient error. Without them a connection that never answers
 * holds the ingest function until its timeout, and its message comes back only
 * when the queue's visibility timeout ends (INGEST_LIMITS).
 * - DynamoDB answers at once; this much silence is a dead connection even from
 *   an emulator on a saturated machine (the lab's burst stress test).
 * - S3: a download's body legitimately sits unread while the ingest waits for
 *   its DynamoDB writes (backpressure), and those back off when throttled: the
 *   S3 limit is longer than that backoff.
 * The API function's own timeout (API_LIMITS) ends a stuck request before these do.
 */
export const CLIENT_TIMEOUTS_MS = { connection: 3_000, dynamodbSocket: 30_000, s3Socket: 120_000 } as const;

/** The function's region in AWS; the emulators take any, so tests and the lab may leave it out. */
const regionOf = (options: ClientOptions) => options.region ?? process.env['AWS_REGION'] ?? DEFAULT_REGION;

const requestHandler = (socketTimeout: number) => ({ connectionTimeout: CLIENT_TIMEOUTS_MS.connection, socketTimeout });

/**
 * DynamoDB attempts per call in the ingest function. A call that still fails makes
 * SQS redeliver the whole file, parsed and written again from its start, and after
 * three receives the upload lands in the dead-letter queue: the function rides out
 * a throttling burst instead, as the SDK's standard retries back off longer on
 * throttling with every attempt. The count comes from runs with
 * test/support/fault-proxy.ts throttling the table: with the SDK's default,
 * uploads were redelivered and some dead-lettered; with this, hardly redelivered.
 * The API keeps the default: a reader would rather get a quick error than wait.
 */
export const INGEST_DYNAMODB_ATTEMPTS = 8;

export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): ClientOptions {
  const options: ClientOptions = {};
  if (env[ENV.s3Endpoint]) options.s3Endpoint = env[ENV.s3Endpoint];
  if (env[ENV.dynamodbEndpoint]) options.dynamodbEndpoint = env[ENV.dynamodbEndpoint];
  return options;
}

export function createS3Client(options: ClientOptions = optionsFromEnv()): S3Client {
  return new S3Client({
    region: regionOf(options),
    // Only checksum when S3 requires it: otherwise streamed uploads get aws-chunked
    // framing on emulators and presigned PUTs sign an empty-body checksum on AWS.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(options.s3Endpoint ? { endpoint: options.s3Endpoint, forcePathStyle: true } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
    requestHandler: requestHandler(options.socketTimeoutMs ?? CLIENT_TIMEOUTS_MS.s3Socket),
  });
}

export function createDocumentClient(options: ClientOptions = optionsFromEnv()): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    region: regionOf(options),
    ...(options.dynamodbEndpoint ? { endpoint: options.dynamodbEndpoint } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
    requestHandler: requestHandler(options.socketTimeoutMs ?? CLIENT_TIMEOUTS_MS.dynamodbSocket),
  });
  // Whole numbers beyond 2^53 (a file size, a counter in a log) are stored as the nearest double,
  // not refused with an exception.
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true, allowImpreciseNumbers: true },
  });
}

/** The table a function works on, from its environment: its name and a client. */
export function storeFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  maxAttempts?: number,
): { db: DynamoDBDocumentClient; tableName: string } {
  const tableName = envString(env, ENV.tableName);
  return {
    db: createDocumentClient({ ...optionsFromEnv(env), ...(maxAttempts !== undefined ? { maxAttempts } : {}) }),
    tableName,
  };
}
