/**
 * AWS SDK clients, configured once. In AWS they use the function's role and
 * region; the local lab and tests point them at s3rver and dynalite through the
 * endpoint variables in config.ts.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ENV } from './config.ts';

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
 * holds the ingest function until its 5-minute timeout, and its message comes
 * back only when the queue's visibility timeout ends, half an hour later.
 * - DynamoDB answers in milliseconds; 30 s of silence is a dead connection even
 *   from an emulator on a saturated machine (in the lab's 1,000-upload bursts
 *   whole API answers, several DynamoDB calls each, took at most 2.1 s).
 * - S3: a download's body legitimately sits unread while the ingest waits for
 *   its DynamoDB writes (backpressure), and those back off for up to half a
 *   minute when throttled: 2 minutes.
 * The API function's own 10 s timeout ends a stuck request before these do.
 */
export const CLIENT_TIMEOUTS_MS = { connection: 3_000, dynamodbSocket: 30_000, s3Socket: 120_000 } as const;

const requestHandler = (socketTimeout: number) => ({ connectionTimeout: CLIENT_TIMEOUTS_MS.connection, socketTimeout });

/**
 * DynamoDB attempts per call in the ingest function. A call that still fails makes
 * SQS redeliver the whole file, parsed and written again from its start, and after
 * three receives the upload lands in the dead-letter queue: the function rides out
 * a throttling burst instead (the SDK's standard retries back off from 1 s up to
 * 20 s on throttling, about half a minute over 8 attempts). Measured with
 * test/support/fault-proxy.ts throttling 40% of the requests of 40 uploads: 4
 * attempts needed 18 redeliveries and dead-lettered one upload; 8 needed one.
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
    region: options.region ?? process.env['AWS_REGION'] ?? 'us-east-1',
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
    region: options.region ?? process.env['AWS_REGION'] ?? 'us-east-1',
    ...(options.dynamodbEndpoint ? { endpoint: options.dynamodbEndpoint } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
    requestHandler: requestHandler(options.socketTimeoutMs ?? CLIENT_TIMEOUTS_MS.dynamodbSocket),
  });
  // Whole numbers beyond 2^53 (a file size, a counter in a log) are stored as the nearest double, not refused with an exception.
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true, allowImpreciseNumbers: true } });
}

/** The table a function works on, from its environment: its name and a client. */
export function storeFromEnv(env: NodeJS.ProcessEnv = process.env, maxAttempts?: number): { db: DynamoDBDocumentClient; tableName: string } {
  const tableName = env[ENV.tableName];
  if (!tableName) throw new Error(`${ENV.tableName} is not set`);
  return { db: createDocumentClient({ ...optionsFromEnv(env), ...(maxAttempts !== undefined ? { maxAttempts } : {}) }), tableName };
}
