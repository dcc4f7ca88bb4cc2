/**
 * Real-shaped AWS events for the local lab and the integration tests: S3 event
 * notification records as S3 sends them to an SQS queue, S3's one-off test event,
 * and the SQS batches a Lambda event source mapping delivers.
 *
 * Shapes follow the S3 "event message structure" (eventVersion 2.1) and the SQS
 * Lambda event: keys URL-encoded with `+` for spaces, eTags without quotes,
 * sequencers as upper-case hex that grow with every event on a key, size and eTag
 * only on ObjectCreated events, versionId only for versioned buckets.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { DEFAULT_REGION } from '../../shared/config.ts';
import {
  encodeEventKey,
  type S3EventRecord,
  type S3Notification as S3ObjectNotification,
  type S3TestEventMessage,
} from '../../shared/ingest/s3-event.ts';

export { encodeEventKey } from '../../shared/ingest/s3-event.ts';

export const DEFAULT_ACCOUNT = '123456789012';
export const DEFAULT_QUEUE_ARN = `arn:aws:sqs:${DEFAULT_REGION}:${DEFAULT_ACCOUNT}:benchdrop-ingest`;

/** The event names S3 uses for what the pipeline subscribes to (and a few neighbours). */
export type S3EventName =
  | 'ObjectCreated:Put'
  | 'ObjectCreated:Post'
  | 'ObjectCreated:Copy'
  | 'ObjectCreated:CompleteMultipartUpload'
  | 'ObjectRemoved:Delete'
  | 'ObjectRemoved:DeleteMarkerCreated';

/** An S3 notification record, whole (shared/ingest/s3-event.ts). */
export type S3NotificationRecord = S3EventRecord;

/** What S3 puts in an SQS message body for object events, with whole records. */
export interface S3Notification extends S3ObjectNotification {
  Records: S3NotificationRecord[];
}

/** What S3 puts in an SQS message body once, when the notification is configured. */
export type S3TestEvent = S3TestEventMessage;

export interface S3EventRecordInput {
  eventName: S3EventName;
  bucket: string;
  /** The object key as stored (not encoded): it is encoded here the way S3 does. */
  key: string;
  /** Required for ObjectCreated events; ignored for ObjectRemoved (S3 sends none). */
  size?: number;
  /** With or without the quotes S3 puts around it in HTTP headers. */
  eTag?: string;
  /** Only for versioned buckets (and for delete markers, the marker's version). */
  versionId?: string;
  /** Upper-case hex; a fresh one from the shared generator when left out. */
  sequencer?: string;
  eventTime?: Date | string;
  region?: string;
  sourceIPAddress?: string;
  principalId?: string;
  configurationId?: string;
  ownerPrincipalId?: string;
}

/**
 * A generator of S3-like sequencers: upper-case hex, 18 digits, strictly
 * increasing with every call (S3 only promises order per key; this one is global,
 * which satisfies that). `start` sets the first value (default: from the clock).
 */
export function sequencerGenerator(start?: bigint | number): () => string {
  // Clock in microseconds shifted left leaves room for many events per microsecond.
  let next = start !== undefined ? BigInt(start) : (BigInt(Date.now()) * 1000n) << 8n;
  return () => {
    const value = next;
    next += 1n;
    return value.toString(16).toUpperCase().padStart(18, '0');
  };
}

/** The process-wide sequencer, used when an event builder is given none. */
export const nextSequencer = sequencerGenerator();

const upperHex = (bytes: number) => randomBytes(bytes).toString('hex').toUpperCase();
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const upperAlnum = (length: number) => Array.from(randomBytes(length), (b) => ALNUM[b % ALNUM.length]).join('');

/** x-amz-id-2: a base64 host/request id (S3's is 76 characters). */
const amzId2 = () => randomBytes(57).toString('base64');

function isoTime(time: Date | string | undefined): string {
  if (time === undefined) return new Date().toISOString();
  return typeof time === 'string' ? new Date(time).toISOString() : time.toISOString();
}

/** One S3 event notification record, as S3 sends it. */
export function s3EventRecord(input: S3EventRecordInput): S3NotificationRecord {
  const created = input.eventName.startsWith('ObjectCreated:');
  const object: S3NotificationRecord['s3']['object'] = {
    key: encodeEventKey(input.key),
    sequencer: input.sequencer ?? nextSequencer(),
  };
  if (created) {
    if (input.size === undefined || input.eTag === undefined)
      throw new Error(`${input.eventName} for ${input.key}: S3 sends size and eTag with every ObjectCreated event`);
    if (!Number.isSafeInteger(input.size) || input.size < 0)
      throw new Error(`${input.key}: size ${input.size} is not a byte count`);
    object.size = input.size;
    object.eTag = input.eTag.replace(/"/g, '');
  }
  if (input.versionId !== undefined) object.versionId = input.versionId;
  if (!/^[0-9A-F]+$/.test(object.sequencer)) throw new Error(`sequencer "${object.sequencer}" is not upper-case hex`);
  // Key order as S3 writes it: key, size, eTag, versionId, sequencer.
  const ordered = {
    key: object.key,
    ...(object.size !== undefined ? { size: object.size } : {}),
    ...(object.eTag !== undefined ? { eTag: object.eTag } : {}),
    ...(object.versionId !== undefined ? { versionId: object.versionId } : {}),
    sequencer: object.sequencer,
  };
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: input.region ?? DEFAULT_REGION,
    eventTime: isoTime(input.eventTime),
    eventName: input.eventName,
    userIdentity: { principalId: input.principalId ?? `AWS:AIDA${upperAlnum(17)}` },
    requestParameters: { sourceIPAddress: input.sourceIPAddress ?? '127.0.0.1' },
    responseElements: { 'x-amz-request-id': upperHex(8), 'x-amz-id-2': amzId2() },
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: input.configurationId ?? 'benchdrop-ingest',
      bucket: {
        name: input.bucket,
        ownerIdentity: { principalId: input.ownerPrincipalId ?? upperAlnum(14) },
        arn: `arn:aws:s3:::${input.bucket}`,
      },
      object: ordered,
    },
  };
}

/** The message body S3 sends for object events: one or more records. */
export function s3Notification(...records: S3NotificationRecord[]): S3Notification {
  return { Records: records };
}

/** The message S3 sends once to a queue when the bucket notification is configured. */
export function s3TestEvent(bucket = 'benchdrop-uploads', time: Date | string = new Date()): S3TestEvent {
  return {
    Service: 'Amazon S3',
    Event: 's3:TestEvent',
    Time: isoTime(time),
    Bucket: bucket,
    RequestId: upperHex(8),
    HostId: amzId2(),
  };
}

export interface SqsEventOptions {
  region?: string;
  queueArn?: string;
  /** ApproximateReceiveCount of every record (2 and up for a redelivery). */
  receiveCount?: number;
  /** When the messages were sent (default: now). */
  sentAt?: Date;
  /** Reuse message ids, e.g. to redeliver the same messages. */
  messageIds?: string[];
}

/** A message body: an object is sent as its JSON, a string as it is. */
export type SqsBody = S3Notification | S3TestEvent | S3NotificationRecord | object | string;

/** One SQS record as the Lambda event source mapping delivers it. */
export function sqsRecord(body: SqsBody, options: SqsEventOptions & { messageId?: string } = {}): SQSRecord {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const sent = (options.sentAt ?? new Date()).getTime();
  const region = options.region ?? DEFAULT_REGION;
  return {
    messageId: options.messageId ?? randomUUID(),
    // Real receipt handles are long opaque base64 strings starting with AQEB.
    receiptHandle: `AQEB${randomBytes(132).toString('base64')}`,
    body: text,
    attributes: {
      ApproximateReceiveCount: String(options.receiveCount ?? 1),
      SentTimestamp: String(sent),
      SenderId: `AIDA${upperAlnum(17)}`,
      ApproximateFirstReceiveTimestamp: String(sent + 7),
    },
    messageAttributes: {},
    md5OfBody: createHash('md5').update(text, 'utf8').digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: options.queueArn ?? DEFAULT_QUEUE_ARN.replace(`:${DEFAULT_REGION}:`, `:${region}:`),
    awsRegion: region,
  };
}

/**
 * An SQS batch, one message per body. A bare S3 record is wrapped in its
 * notification (`{ Records: [record] }`), as S3 never sends a record alone.
 */
export function sqsEvent(bodies: SqsBody[], options: SqsEventOptions = {}): SQSEvent {
  return {
    Records: bodies.map((body, i) => {
      const wrapped = isS3Record(body) ? s3Notification(body) : body;
      const messageId = options.messageIds?.[i];
      return sqsRecord(wrapped, { ...options, ...(messageId !== undefined ? { messageId } : {}) });
    }),
  };
}

function isS3Record(body: SqsBody): body is S3NotificationRecord {
  return (
    typeof body === 'object' &&
    body !== null &&
    (body as { eventSource?: unknown }).eventSource === 'aws:s3' &&
    's3' in body
  );
}
