/**
 * The lab's S3 endpoint: s3rver on disk, path-style only, confined to its folder
 * (key-guard.ts), with the drop bucket and the results bucket, and the drop
 * bucket's object events turned into the S3 notifications S3 would send to the
 * queue. s3rver emits events for every bucket; the results bucket has no
 * notifications in the stack, so its events are dropped here.
 *
 * s3rver emits an object's event synchronously inside the request, after its
 * store call returned and before the response is written (lib/controllers/object.js:
 * `await ctx.store.putObject(...)`, `triggerS3Event(...)`, then `ctx.body`; Koa
 * answers once the middleware chain has returned). So whatever the listener does
 * synchronously happens before the client hears "200": the lab journals the
 * message there. Should that throw, the request fails with a 500 and the client
 * tries again, as it would when S3 could not take a write.
 */
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';
import { decodeKey } from '../../shared/ingest/s3-event.ts';
import {
  s3EventRecord,
  sequencerGenerator,
  type S3EventName,
  type S3Notification,
  type S3NotificationRecord,
} from './events.ts';
import { installKeyGuard } from './key-guard.ts';
import { untilStored } from './s3rver-writes.ts';

/** An object event as s3rver emits it (lib/models/event.js). */
interface S3rverRecord {
  eventName: string;
  eventTime?: string;
  requestParameters?: { sourceIPAddress?: string };
  s3: { bucket: { name: string }; object: { key: string; size?: number; eTag?: string } };
}

export interface LabS3Options {
  host: string;
  port: number;
  directory: string;
  bucket: string;
  /** The bucket the pipeline writes samples objects to: created, its events never delivered. */
  resultsBucket: string;
  /** Called inside the request, before it is answered, with each event as S3 would send it. */
  onEvent: (record: S3NotificationRecord) => void;
}

export interface LabS3 {
  s3rver: S3rver;
  address: AddressInfo;
}

/**
 * How long the first delivery of an ObjectCreated event waits for s3rver's write to be whole (see
 * s3rver-writes.ts).
 */
const STORED_WAIT_MS = 30_000;

export async function startLabS3(options: LabS3Options): Promise<LabS3> {
  // vhostBuckets off: the bucket comes from the path, never from a Host header.
  const s3rver = new S3rver({
    port: options.port,
    address: options.host,
    directory: options.directory,
    silent: true,
    vhostBuckets: false,
    configureBuckets: [
      { name: options.bucket, configs: [] },
      { name: options.resultsBucket, configs: [] },
    ],
  });
  installKeyGuard(s3rver);
  const nextSequencer = sequencerGenerator();
  s3rver.on('event', (event: { Records: S3rverRecord[] }) => {
    for (const record of event.Records)
      if (record.s3.bucket.name === options.bucket) options.onEvent(notificationRecord(record, nextSequencer()));
  });
  const address = (await s3rver.run()) as AddressInfo;
  return { s3rver, address };
}

/**
 * The record S3 would send. s3rver's copy events carry no eTag: it stays empty
 * here, and prepareNotification asks for it before the first delivery.
 */
function notificationRecord(record: S3rverRecord, sequencer: string): S3NotificationRecord {
  const eventName = localEventName(record.eventName);
  const { size, eTag } = record.s3.object;
  const created = eventName.startsWith('ObjectCreated');
  return s3EventRecord({
    eventName,
    bucket: record.s3.bucket.name,
    key: record.s3.object.key,
    ...(created ? { size: size ?? 0, eTag: eTag ?? '' } : {}),
    sequencer,
    ...(record.eventTime !== undefined ? { eventTime: record.eventTime } : {}),
    ...(record.requestParameters?.sourceIPAddress !== undefined
      ? { sourceIPAddress: record.requestParameters.sourceIPAddress }
      : {}),
  });
}

/**
 * s3rver names a completed multipart upload ObjectCreated:Post (the guard refuses form POSTs); S3
 * says CompleteMultipartUpload.
 */
function localEventName(name: string): S3EventName {
  if (name === 'ObjectCreated:Post') return 'ObjectCreated:CompleteMultipartUpload';
  return name as S3EventName;
}

/**
 * Before an S3 notification's first delivery: the eTag a copy event lacks, and a
 * wait until each created object is whole. Undefined when a copied object is gone
 * already (nothing left to ingest; its ObjectRemoved event follows).
 */
export async function prepareNotification(s3: S3Client, body: string): Promise<string | undefined> {
  const notification = JSON.parse(body) as S3Notification;
  for (const record of notification.Records) {
    if (!record.eventName.startsWith('ObjectCreated')) continue;
    const bucket = record.s3.bucket.name;
    const object = record.s3.object;
    const key = decodeKey(object.key);
    if (!object.eTag) {
      const head = await headIfThere(s3, bucket, key);
      if (!head) return undefined;
      object.eTag = head.eTag;
      object.size = head.size;
    }
    // Whole, or given up on after a while (a later PUT may have replaced it): the event goes out
    // either way, as S3's would.
    await untilStored(s3, bucket, key, object.size ?? 0, STORED_WAIT_MS);
  }
  return JSON.stringify(notification);
}

async function headIfThere(
  s3: S3Client,
  bucket: string,
  key: string,
): Promise<{ eTag: string; size: number } | undefined> {
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return { eTag: (head.ETag ?? '').replace(/"/g, ''), size: head.ContentLength ?? 0 };
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
    throw error;
  }
}
