/**
 * The S3 event notification, as S3 sends it to the ingest queue, stated once:
 * the ingest handler validates messages with these schemas, the dead-letter path
 * picks out the records ingestion could have read, and the local lab's event
 * producer builds records of the full type. Types are inferred from the schemas.
 *
 * zod's mini build keeps the ingest bundle small; these are all it validates.
 */
import * as z from 'zod/mini';

const nonEmpty = z.string().check(z.minLength(1));

/** The part of an S3 event record ingestion reads. ObjectRemoved records carry no size or eTag. */
export const S3ObjectEvent = z.object({
  eventName: z.string(),
  s3: z.object({
    bucket: z.object({ name: nonEmpty }),
    object: z.object({
      key: nonEmpty,
      size: z.optional(z.number()),
      eTag: z.optional(z.string()),
      versionId: z.optional(z.string()),
      sequencer: z.optional(z.string()),
    }),
  }),
});
export type S3ObjectEvent = z.infer<typeof S3ObjectEvent>;

/** A whole record as S3 sends it (event message structure 2.1): the part above and the rest. */
export const S3EventRecord = z.object({
  eventVersion: z.string(),
  eventSource: z.literal('aws:s3'),
  awsRegion: z.string(),
  eventTime: z.string(),
  eventName: z.string(),
  userIdentity: z.object({ principalId: z.string() }),
  requestParameters: z.object({ sourceIPAddress: z.string() }),
  responseElements: z.object({ 'x-amz-request-id': z.string(), 'x-amz-id-2': z.string() }),
  s3: z.object({
    s3SchemaVersion: z.string(),
    configurationId: z.string(),
    bucket: z.object({ name: nonEmpty, ownerIdentity: z.object({ principalId: z.string() }), arn: z.string() }),
    // S3 always sends a sequencer; ingestion does without one.
    object: z.extend(S3ObjectEvent.shape.s3.shape.object, { sequencer: z.string() }),
  }),
});
export type S3EventRecord = z.infer<typeof S3EventRecord>;

/** What S3 puts in an SQS message body for object events: one or more records. */
export const S3Notification = z.object({ Records: z.array(S3ObjectEvent) });
export type S3Notification = z.infer<typeof S3Notification>;

/** What S3 puts in an SQS message body once, when the notification is configured: all ingest looks at. */
export const S3TestEvent = z.object({ Event: z.literal('s3:TestEvent') });

/** The whole test event as S3 sends it. */
export const S3TestEventMessage = z.extend(S3TestEvent, {
  Service: z.literal('Amazon S3'),
  Time: z.string(),
  Bucket: z.string(),
  RequestId: z.string(),
  HostId: z.string(),
});
export type S3TestEventMessage = z.infer<typeof S3TestEventMessage>;

/**
 * The records of a message body that ingestion could read, the others left out:
 * for a body that is no notification at all, none.
 */
export function readableRecords(body: unknown): S3ObjectEvent[] {
  const records = (body as { Records?: unknown } | null | undefined)?.Records;
  if (!Array.isArray(records)) return [];
  return records.flatMap((record: unknown) => {
    const parsed = S3ObjectEvent.safeParse(record);
    return parsed.success ? [parsed.data] : [];
  });
}

/**
 * An object key as S3 writes it into event notifications: URL-encoded
 * (UTF-8 percent-escapes), spaces as `+`, `/` left as it is.
 */
export function encodeEventKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/gi, '/');
}

/** The object key of an event notification (encodeEventKey undone). */
export function decodeKey(key: string): string {
  return decodeURIComponent(key.replace(/\+/g, ' '));
}
