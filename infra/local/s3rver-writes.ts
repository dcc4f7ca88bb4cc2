/**
 * s3rver answers a PUT, and emits its ObjectCreated event, before its write stream
 * has finished (filesystem store: `writeStream.end(content)`, then resolve), and a
 * GET or HEAD reports the file's size at that moment. Under load a reader right
 * behind the event gets a short object. S3 never does this: its events follow a
 * durable write. So the lab, and the test emulators after a put, wait until the
 * stored size is the size written.
 */
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/**
 * Resolves once `key` holds `size` bytes; false when it still does not after
 * `timeoutMs` or when it is gone (another PUT or a DELETE may have come meanwhile:
 * the caller decides).
 */
export async function untilStored(
  s3: S3Client,
  bucket: string,
  key: string,
  size: number,
  timeoutMs = 2_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let stored: number | undefined;
    try {
      stored = (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength;
    } catch (error) {
      // Deleted again already: nothing to wait for; the event still goes out, as S3's would.
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
      throw error;
    }
    if (stored === size) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
