/**
 * POST /uploads: a presigned PUT of one key in the lab's bucket, for exactly
 * `size` bytes. The Content-Length is a signed header, so S3 refuses a body of
 * any other length (the ingest function checks the size again before it reads
 * an object); the device label and tags travel as signed metadata headers,
 * refused here rather than by ingestion after the upload.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { PresignedUpload } from './api.ts';
import { formatTags, LabelError, parseTags } from './labels.ts';

/**
 * Presigned PUTs live this long (seconds): long enough to start a big upload, short enough to be of
 * little use if leaked.
 */
export const UPLOAD_URL_SECONDS = 900;

/** A request the lab cannot sign, naming the field: the API answers it as a 400. */
export class UploadError extends Error {
  override readonly name = 'UploadError';
}

export interface UploadDeps {
  s3: S3Client;
  /** The lab's upload bucket (presigned PUTs go there). */
  bucket: string;
  /** Largest upload the lab ingests, in bytes. */
  maxUploadBytes: number;
}

/** What a client asks to upload (shared/api.ts CreateUploadBody, validated). */
export interface UploadRequest {
  key: string;
  size: number;
  device?: string | undefined;
  tags?: Record<string, string> | undefined;
}

/** Printable ASCII: what an `x-amz-meta-*` header carries unchanged. */
const HEADER_VALUE = /^[\x20-\x7e]*$/;

/**
 * The metadata the PUT must carry, as object metadata (`device`, `tags`); a value it cannot carry
 * is an UploadError.
 */
function uploadMetadata(request: UploadRequest): Record<string, string> {
  const metadata: Record<string, string> = {};
  if (request.device !== undefined) {
    if (!HEADER_VALUE.test(request.device) || request.device.trim() === '')
      throw new UploadError('device: printable ASCII characters only (other names can be the first folder of the key)');
    metadata['device'] = request.device;
  }
  if (request.tags !== undefined && Object.keys(request.tags).length > 0) {
    const text = formatTags(request.tags);
    try {
      parseTags(text);
    } catch (error) {
      if (error instanceof LabelError) throw new UploadError(`tags: ${error.message}`);
      throw error;
    }
    metadata['tags'] = text;
  }
  return metadata;
}

/** The presigned PUT for this upload; one the lab would not ingest is an UploadError. */
export async function createUpload(deps: UploadDeps, request: UploadRequest): Promise<PresignedUpload> {
  if (request.size > deps.maxUploadBytes)
    throw new UploadError(`size: ${request.size} bytes is more than this lab's limit of ${deps.maxUploadBytes} bytes`);
  const metadata = uploadMetadata(request);
  const headers = Object.fromEntries(Object.entries(metadata).map(([name, value]) => [`x-amz-meta-${name}`, value]));
  const command = new PutObjectCommand({
    Bucket: deps.bucket,
    Key: request.key,
    ContentLength: request.size,
    ...(Object.keys(metadata).length > 0 ? { Metadata: metadata } : {}),
  });
  const url = await getSignedUrl(deps.s3, command, {
    expiresIn: UPLOAD_URL_SECONDS,
    // Signed as headers, not hoisted into the URL: the client must send them as given.
    unhoistableHeaders: new Set(Object.keys(headers)),
  });
  // Clients send Content-Length themselves; it is listed because it is signed.
  headers['content-length'] = String(request.size);
  return { url, method: 'PUT', headers, bucket: deps.bucket, key: request.key, expiresIn: UPLOAD_URL_SECONDS };
}
