/**
 * The routes of shared/api.ts: validate, call shared/, shape the answer.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { CompareQuery, CreateUploadBody, DevicesQuery, RunsQuery, UploadsQuery, type PresignedUpload, type RunDetail } from '../../shared/api.ts';
import { AnswerCache, compare as compareUseCase, type MetricSpec } from '../../shared/compare.ts';
import { LabelError, parseTags } from '../../shared/labels.ts';
import { parsePattern, SelectorError } from '../../shared/selectors.ts';
import { getRun, pageDevices, pageRuns, pageUploads, type ReadStore } from '../../shared/store/read.ts';
import { badRequest, json, jsonText, notFound, parseBody, parseQuery, type ApiEvent, type ApiResult } from './http.ts';

export interface ApiDeps extends ReadStore {
  s3: S3Client;
  /** The lab's upload bucket (presigned PUTs go there). */
  bucket: string;
  /** Largest upload the lab ingests, in bytes. */
  maxUploadBytes: number;
  /** Keep recent comparison answers (default true; shared/comparison/kept-answers.ts); false reads and computes every one (benchmarks show both). */
  cacheAnswers?: boolean;
  /** The clock, epoch ms (tests move it). */
  now?: () => number;
}

/** Presigned PUTs live this long (seconds): long enough to start a big upload, short enough to be of little use if leaked. */
export const UPLOAD_URL_SECONDS = 900;
const RUN_ID = /^r[0-9a-f]{24}$/;

export async function devices(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const query = parseQuery(DevicesQuery, event);
  return json(200, await pageDevices(deps, query));
}

export async function runs(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const { device, ...query } = parseQuery(RunsQuery, event);
  return json(200, await pageRuns(deps, { ...query, ...(device !== undefined ? { device: devicePattern(device) } : {}) }));
}

/** The `device` parameter as a pattern; one it cannot be is a 400 naming the parameter. */
function devicePattern(text: string) {
  try {
    return parsePattern(text);
  } catch (error) {
    if (error instanceof SelectorError) throw badRequest(`device: ${error.message}`);
    throw error;
  }
}

export async function run(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const id = event.pathParameters?.['id'] ?? '';
  if (!RUN_ID.test(id)) throw badRequest(`id: a run id is r followed by 24 hex digits${id ? ` (got ${JSON.stringify(id.slice(0, 40))})` : ''}`);
  const detail: RunDetail | undefined = await getRun(deps, id);
  if (detail === undefined) throw notFound(`run ${id} does not exist (or is still being written)`);
  return json(200, detail);
}

/** Says whether an answer was computed for this request or reused. */
export const ANSWER_HEADER = 'x-benchdrop-answer';

/** Kept for the life of this function instance (shared/comparison/kept-answers.ts). */
const answers = new AnswerCache();

export async function compare(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const query = parseQuery(CompareQuery, event);
  const answer = await compareUseCase({ ...deps, ...(deps.cacheAnswers !== false ? { answers } : {}) }, { a: query.a, b: query.b, metric: query.metric as MetricSpec });
  return withHeader(jsonText(200, answer.body), ANSWER_HEADER, answer.made);
}

const withHeader = (result: ApiResult, name: string, value: string): ApiResult => ({ ...result, headers: { ...result.headers, [name]: value } });

export async function uploads(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const { history, ...query } = parseQuery(UploadsQuery, event);
  return json(200, await pageUploads(deps, { ...query, history: history === 'true' }));
}

/** Printable ASCII: what an `x-amz-meta-*` header carries unchanged. */
const HEADER_VALUE = /^[\x20-\x7e]*$/;

/**
 * A presigned PUT of one key in the lab's bucket, for exactly `size` bytes: the
 * Content-Length is a signed header, so S3 refuses a body of any other length
 * (the ingest function checks the size again before it reads an object).
 */
export async function createUpload(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const body = parseBody(CreateUploadBody, (event as { body?: unknown }).body);
  if (body.size > deps.maxUploadBytes) {
    throw badRequest(`size: ${body.size} bytes is more than this lab's limit of ${deps.maxUploadBytes} bytes`);
  }
  const headers: Record<string, string> = {};
  if (body.device !== undefined) {
    if (!HEADER_VALUE.test(body.device) || body.device.trim() === '') throw badRequest('device: printable ASCII characters only (other names can be the first folder of the key)');
    headers['x-amz-meta-device'] = body.device;
  }
  if (body.tags !== undefined && Object.keys(body.tags).length > 0) {
    const text = Object.entries(body.tags)
      .map(([k, v]) => `${k}=${v}`)
      .join(';');
    try {
      // Refused here rather than by ingestion after the upload.
      parseTags(text);
    } catch (error) {
      if (error instanceof LabelError) throw badRequest(`tags: ${error.message}`);
      throw error;
    }
    headers['x-amz-meta-tags'] = text;
  }
  const metadata: Record<string, string> = {};
  if (headers['x-amz-meta-device'] !== undefined) metadata['device'] = headers['x-amz-meta-device'];
  if (headers['x-amz-meta-tags'] !== undefined) metadata['tags'] = headers['x-amz-meta-tags'];
  const command = new PutObjectCommand({ Bucket: deps.bucket, Key: body.key, ContentLength: body.size, ...(Object.keys(metadata).length > 0 ? { Metadata: metadata } : {}) });
  const url = await getSignedUrl(deps.s3, command, {
    expiresIn: UPLOAD_URL_SECONDS,
    // Signed as headers, not hoisted into the URL: the client must send them as given.
    unhoistableHeaders: new Set(Object.keys(headers)),
  });
  // Clients send Content-Length themselves; it is listed because it is signed.
  headers['content-length'] = String(body.size);
  const answer: PresignedUpload = { url, method: 'PUT', headers, bucket: deps.bucket, key: body.key, expiresIn: UPLOAD_URL_SECONDS };
  return json(200, answer);
}
