/**
 * The routes of shared/api.ts, HTTP only: each parses its parameters, calls
 * its use case (shared/compare.ts, shared/listings.ts, shared/uploads.ts) and
 * answers JSON. What a use case refuses is answered by http.ts answerFor.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import {
  ANSWER_HEADER,
  CompareQuery,
  CreateUploadBody,
  DevicesQuery,
  RunsQuery,
  UploadsQuery,
} from '../../shared/api.ts';
import { AnswerCache, compare as compareUseCase, type MetricSpec } from '../../shared/compare.ts';
import { getRun, pageDevices, pageRuns, pageUploads } from '../../shared/listings.ts';
import { isRunId, RUN_ID_RULE } from '../../shared/model.ts';
import { parsePattern, SelectorError } from '../../shared/selectors.ts';
import type { ReadStore } from '../../shared/store/store.ts';
import { createUpload as presignUpload } from '../../shared/uploads.ts';
import { badRequest, json, jsonText, notFound, parseBody, parseQuery, type ApiEvent, type ApiResult } from './http.ts';

export { UPLOAD_URL_SECONDS } from '../../shared/uploads.ts';

export interface ApiDeps extends ReadStore {
  s3: S3Client;
  /** The lab's upload bucket (presigned PUTs go there). */
  bucket: string;
  /** Largest upload the lab ingests, in bytes. */
  maxUploadBytes: number;
  /**
   * Keep recent comparison answers (default true; shared/compare/kept-answers.ts); false reads and
   * computes every one (benchmarks show both).
   */
  cacheAnswers?: boolean;
  /** The clock, epoch ms (tests move it). */
  now?: () => number;
}

export async function devices(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const query = parseQuery(DevicesQuery, event);
  return json(200, await pageDevices(deps, query));
}

export async function runs(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const { device, ...query } = parseQuery(RunsQuery, event);
  return json(
    200,
    await pageRuns(deps, { ...query, ...(device !== undefined ? { device: devicePattern(device) } : {}) }),
  );
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
  if (!isRunId(id)) throw badRequest(`id: ${RUN_ID_RULE}${id ? ` (got ${JSON.stringify(id.slice(0, 40))})` : ''}`);
  const detail = await getRun(deps, id);
  if (detail === undefined) throw notFound(`run ${id} does not exist (or is still being written)`);
  return json(200, detail);
}

/** Kept for the life of this function instance (shared/compare/kept-answers.ts). */
const answers = new AnswerCache();

export async function compare(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const query = parseQuery(CompareQuery, event);
  const answer = await compareUseCase(
    { ...deps, ...(deps.cacheAnswers !== false ? { answers } : {}) },
    { a: query.a, b: query.b, metric: query.metric as MetricSpec },
  );
  return withHeader(jsonText(200, answer.body), ANSWER_HEADER, answer.made);
}

const withHeader = (result: ApiResult, name: string, value: string): ApiResult => ({
  ...result,
  headers: { ...result.headers, [name]: value },
});

export async function uploads(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const { history, ...query } = parseQuery(UploadsQuery, event);
  return json(200, await pageUploads(deps, { ...query, history: history === 'true' }));
}

export async function createUpload(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const body = parseBody(CreateUploadBody, (event as { body?: unknown }).body);
  return json(200, await presignUpload(deps, body));
}
