/**
 * Keeps requests to the lab's S3 endpoint inside its data folder. s3rver joins a
 * request's bucket and key (and a multipart upload's id and part number) to its
 * directory as they come, so `PUT /bucket/../../../x` writes outside it. Before
 * s3rver sees a request, the lab refuses, with an S3-style XML error:
 *
 * - an object key (of the path, or of x-amz-copy-source, as header or query
 *   parameter) that the API's presigner would not sign, or that holds a backslash;
 * - a bucket name S3 would not accept (`..` is none);
 * - an uploadId or partNumber that is not what s3rver hands out;
 * - POST on a bucket (browser form uploads, DeleteObjects): its keys are in the
 *   body, which s3rver writes or unlinks before anything could check them (and it
 *   sends no event for DeleteObjects).
 */
import { CreateUploadBody } from '../../shared/api.ts';

export interface Refusal {
  status: number;
  code: string;
  message: string;
}

/**
 * What the guard reads of a request: the path s3rver routes (after its virtual-host rewrite), still
 * percent-encoded.
 */
export interface GuardedRequest {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  headers: Record<string, string | string[] | undefined>;
}

/** The part of a Koa context the guard uses, as s3rver's middleware sees it. */
interface KoaContext extends GuardedRequest {
  status: number;
  type: string;
  body: unknown;
}

type KoaMiddleware = ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>) & { router?: unknown };

/**
 * S3's bucket naming rule: 3-63 lower-case letters, digits, dots and hyphens, a letter or digit at
 * each end, no `..`.
 */
const BUCKET_NAME = /^(?!.*\.\.)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** s3rver's upload ids are 16 random bytes in hex. */
const UPLOAD_ID = /^[0-9a-f]{32}$/;
/** S3's part numbers: 1 to 10,000. */
const PART_NUMBER = /^(?:[1-9]\d{0,3}|10000)$/;
const COPY_SOURCE = 'x-amz-copy-source';

/**
 * Why the lab refuses an object key, or undefined: the rule the API's presigner
 * signs keys by (shared/api.ts), and no backslash, a path separator on Windows.
 */
export function keyProblem(key: string): string | undefined {
  const checked = CreateUploadBody.shape.key.safeParse(key);
  if (!checked.success) return checked.error.issues[0]?.message ?? 'not a valid key';
  if (key.includes('\\')) return 'no backslash';
  return undefined;
}

/** Why the lab refuses a request, or undefined to let s3rver have it. */
export function refusal(request: GuardedRequest): Refusal | undefined {
  if (request.path === '/') return undefined;
  const [, rawBucket = '', ...rawKey] = request.path.split('/');
  const bucket = decoded(rawBucket);
  if (bucket === undefined || !BUCKET_NAME.test(bucket))
    return invalid('InvalidBucketName', 'The specified bucket is not valid.');
  const key = rawKey.join('/');
  if (key === '') return bucketRefusal(request);
  return objectKeyRefusal(decoded(key), 'key') ?? uploadRefusal(request) ?? copySourceRefusal(request);
}

/**
 * Installs the guard in s3rver (a Koa application) just before its router, so that
 * it sees the path the router will route. Call before s3rver's run().
 */
export function installKeyGuard(s3rver: object): void {
  const middleware = (s3rver as { middleware?: KoaMiddleware[] }).middleware;
  const routerAt = middleware?.findIndex((m) => m.router !== undefined) ?? -1;
  if (!middleware || routerAt < 0)
    throw new Error('cannot guard s3rver: its router middleware was not found (has s3rver changed?)');
  middleware.splice(routerAt, 0, keyGuard);
}

async function keyGuard(ctx: KoaContext, next: () => Promise<void>): Promise<void> {
  const refused = refusal(ctx);
  if (!refused) return next();
  ctx.status = refused.status;
  ctx.type = 'application/xml';
  ctx.body = s3ErrorXml(refused);
}

function bucketRefusal(request: GuardedRequest): Refusal | undefined {
  if (request.method !== 'POST') return undefined;
  return {
    status: 501,
    code: 'NotImplemented',
    message:
      'The local lab takes no POST on a bucket (browser form uploads, DeleteObjects): ' +
      'their keys cannot be checked before s3rver uses them. Upload with PUT, delete one key at a time.',
  };
}

function objectKeyRefusal(key: string | undefined, what: string): Refusal | undefined {
  if (key === undefined) return invalid('InvalidArgument', `The ${what} is not validly percent-encoded.`);
  const problem = keyProblem(key);
  return problem === undefined
    ? undefined
    : invalid(
        'InvalidArgument',
        `The ${what} is refused by the local lab (${problem}): it must stay inside the bucket.`,
      );
}

function uploadRefusal(request: GuardedRequest): Refusal | undefined {
  const { uploadId, partNumber } = request.query;
  if (uploadId !== undefined && (typeof uploadId !== 'string' || !UPLOAD_ID.test(uploadId)))
    return invalid('NoSuchUpload', 'The specified upload does not exist.');
  if (partNumber !== undefined && (typeof partNumber !== 'string' || !PART_NUMBER.test(partNumber)))
    return invalid('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive.');
  return undefined;
}

/** s3rver reads x-amz-copy-source from the header or, taking precedence, from any-case query parameters. */
function copySourceRefusal(request: GuardedRequest): Refusal | undefined {
  const values = [
    request.headers[COPY_SOURCE],
    ...Object.entries(request.query)
      .filter(([name]) => name.toLowerCase() === COPY_SOURCE)
      .map(([, value]) => value),
  ];
  for (const value of values) {
    if (value === undefined) continue;
    // A repeated one reaches s3rver joined with commas.
    const source = decoded(Array.isArray(value) ? value.join(',') : value);
    if (source === undefined) return invalid('InvalidArgument', 'The copy source is not validly percent-encoded.');
    const [bucket = '', ...key] = source.replace(/^\//, '').split('/');
    if (!BUCKET_NAME.test(bucket)) return invalid('InvalidBucketName', 'The copy source bucket is not valid.');
    const refused = objectKeyRefusal(key.join('/'), 'copy source key');
    if (refused) return refused;
  }
  return undefined;
}

/** Percent-decoded, or undefined when the escapes are malformed. */
function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function invalid(code: string, message: string): Refusal {
  return { status: 400, code, message };
}

function s3ErrorXml(refused: Refusal): string {
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${escape(refused.code)}</Code><Message>${escape(refused.message)}</Message></Error>`
  );
}
