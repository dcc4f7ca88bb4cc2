/**
 * Checks a presigned S3 URL the way S3 does (AWS Signature Version 4, query-string
 * authentication), from the request a client actually sends: its method, the path
 * after URL normalisation, its query and the values of the signed headers. s3rver
 * accepts any V4 signature, so the tests use this to prove what a presigned PUT
 * allows on AWS. Written from the published algorithm with node:crypto, not with
 * the SDK signer it checks.
 */
import { createHash, createHmac } from 'node:crypto';

/** A request as it goes on the wire. */
export interface SentRequest {
  method: string;
  url: string;
  /** Header names in any case; `host` comes from the URL. */
  headers: Record<string, string>;
}

export type Verdict = { ok: true } | { ok: false; reason: string };

/** RFC 3986 percent-encoding, as SigV4 canonicalises names, values and path segments. */
function rfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: Buffer | string, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

/** `20261130T025802Z` -> epoch milliseconds. */
function amzDateMs(text: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : Number.NaN;
}

/**
 * Whether S3 would accept `request` under the signature in its URL, given the
 * secret key of the credentials that signed it and the server's clock.
 */
export function verifyPresignedRequest(request: SentRequest, secretAccessKey: string, now: Date = new Date()): Verdict {
  // What the client puts on the wire: the WHATWG URL parser removes . and .. segments.
  const url = new URL(request.url);
  const query = url.searchParams;
  const signature = query.get('X-Amz-Signature');
  const credential = query.get('X-Amz-Credential');
  const amzDate = query.get('X-Amz-Date');
  const expires = Number(query.get('X-Amz-Expires'));
  const signedHeaders = query.get('X-Amz-SignedHeaders');
  if (query.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256' || !signature || !credential || !amzDate || !signedHeaders)
    return { ok: false, reason: 'not a SigV4 presigned URL' };
  if (!Number.isInteger(expires) || expires < 1 || expires > 604_800)
    return { ok: false, reason: `X-Amz-Expires ${query.get('X-Amz-Expires')} out of range` };
  const signedAt = amzDateMs(amzDate);
  if (!(now.getTime() <= signedAt + expires * 1000)) return { ok: false, reason: 'Request has expired' };

  const [, ...scopeParts] = credential.split('/');
  const [shortDate, region, service, terminator] = scopeParts;
  if (
    scopeParts.length !== 4 ||
    terminator !== 'aws4_request' ||
    shortDate !== amzDate.slice(0, 8) ||
    !region ||
    !service
  )
    return { ok: false, reason: `bad credential scope ${credential}` };

  const sent = new Map(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
  sent.set('host', url.host);
  const names = signedHeaders.split(';');
  const missing = names.filter((name) => !sent.has(name));
  if (missing.length > 0) return { ok: false, reason: `signed header(s) not sent: ${missing.join(', ')}` };

  // S3 does not normalise the path; each segment is encoded once.
  const canonicalUri = url.pathname
    .split('/')
    .map((segment) => rfc3986(decodeURIComponent(segment)))
    .join('/');
  const canonicalQuery = [...query]
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [rfc3986(name), rfc3986(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalHeaders = names.map((name) => `${name}:${sent.get(name)!.trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalUri,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders,
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const scope = scopeParts.join('/');
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, shortDate), region), service), 'aws4_request');
  const expected = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  return expected === signature ? { ok: true } : { ok: false, reason: 'SignatureDoesNotMatch' };
}
