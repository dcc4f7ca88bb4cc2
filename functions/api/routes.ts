/**
 * The routes of shared/api.ts, HTTP only: each parses its parameters, calls
 * its use case (shared/compare.ts, shared/listings.ts, shared/uploads.ts) and
 * answers JSON. What a use case refuses is answered by http.ts answerFor.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import {
  ANSWER_HEADER,
  CompareQuery,
  CreateReportBody,
  type CreatedReport,
  CreateUploadBody,
  DevicesQuery,
  ReportQuery,
  RunsQuery,
  SamplesQuery,
  UploadsQuery,
} from '../../shared/api.ts';
import {
  AnswerCache,
  compare as compareUseCase,
  printComparison,
  TABLE_CONTENT_TYPES,
  type Comparison,
  type MetricSpec,
} from '../../shared/compare.ts';
import { getRun, getSamples, pageDevices, pageRuns, pageUploads } from '../../shared/listings.ts';
import { isRunId, RUN_ID_RULE } from '../../shared/model.ts';
import { parsePattern, SelectorError } from '../../shared/selectors.ts';
import type { ReadStore } from '../../shared/store/store.ts';
import { createUpload as presignUpload } from '../../shared/uploads.ts';
import { packagedReportRenderer } from './report-page.ts';
import { freezeReport, isReportId, readReport, REPORT_ID_RULE, type ReportRenderer } from '../../shared/reports.ts';
import {
  badRequest,
  COMPARE_ALLOWED,
  json,
  jsonText,
  notFound,
  parseBody,
  parseQuery,
  SAMPLES_ALLOWED,
  textResult,
  type ApiEvent,
  type ApiResult,
} from './http.ts';

export { UPLOAD_URL_SECONDS } from '../../shared/uploads.ts';

export interface ApiDeps extends ReadStore {
  s3: S3Client;
  /** The lab's upload bucket (presigned PUTs go there). */
  bucket: string;
  /** The lab's results bucket: runs' samples objects (GET /runs/{id}/samples) and frozen reports. */
  resultsBucket: string;
  /** Largest upload the lab ingests, in bytes. */
  maxUploadBytes: number;
  /**
   * Keep recent comparison answers (default true; shared/compare/kept-answers.ts); false reads and
   * computes every one (benchmarks show both).
   */
  cacheAnswers?: boolean;
  /** The clock, epoch ms (tests move it). */
  now?: () => number;
  /**
   * Makes a frozen report's page (POST /reports): the lab gives its own; without one, the bundle packaged beside
   * the function (report-page.ts).
   */
  renderReport?: ReportRenderer;
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
  const id = runIdOf(event);
  const detail = await getRun(deps, id);
  if (detail === undefined) throw notFound(`run ${id} does not exist (or is still being written)`);
  return json(200, detail);
}

/** The `{id}` path parameter; one that cannot be a run id is a 400 saying what one is. */
function runIdOf(event: ApiEvent): string {
  const id = event.pathParameters?.['id'] ?? '';
  if (!isRunId(id)) throw badRequest(`id: ${RUN_ID_RULE}${id ? ` (got ${JSON.stringify(id.slice(0, 40))})` : ''}`);
  return id;
}

export async function samples(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const runId = runIdOf(event);
  const query = parseQuery(SamplesQuery, event, SAMPLES_ALLOWED);
  return json(200, await getSamples(deps, { runId, ...query }));
}

/** Kept for the life of this function instance (shared/compare/kept-answers.ts). */
const answers = new AnswerCache();

export async function compare(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const query = parseQuery(CompareQuery, event, COMPARE_ALLOWED);
  const answer = await compareUseCase(
    { ...deps, ...(deps.cacheAnswers !== false ? { answers } : {}) },
    { a: query.a, b: query.b, metric: query.metric as MetricSpec },
  );
  const result =
    query.format === 'json'
      ? jsonText(200, answer.body)
      : textResult(
          200,
          printComparison(JSON.parse(answer.body) as Comparison, query.format),
          TABLE_CONTENT_TYPES[query.format],
        );
  return withHeader(result, ANSWER_HEADER, answer.made);
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

let packaged: ReportRenderer | undefined;

/** POST /reports: the comparison GET /compare would answer, frozen (shared/reports.ts); 201 with its id. */
export async function createReport(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const query = parseBody(CreateReportBody, (event as { body?: unknown }).body);
  const answer = await compareUseCase(
    { ...deps, ...(deps.cacheAnswers !== false ? { answers } : {}) },
    { a: query.a, b: query.b, metric: query.metric as MetricSpec },
  );
  const comparison = JSON.parse(answer.body) as Comparison;
  const report = await freezeReport(
    deps,
    query,
    comparison,
    deps.renderReport ?? (packaged ??= packagedReportRenderer()),
  );
  return json(201, { ...report, path: `/reports/${report.id}` } satisfies CreatedReport);
}

/** GET /reports/{id}: the frozen page, or with format=json what it embeds, exactly as stored. */
export async function report(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const id = event.pathParameters?.['id'] ?? '';
  if (!isReportId(id))
    throw badRequest(`id: ${REPORT_ID_RULE}${id ? ` (got ${JSON.stringify(id.slice(0, 40))})` : ''}`);
  const { format } = parseQuery(ReportQuery, event);
  const stored = await readReport(deps, id, format);
  if (stored === undefined) throw notFound(`report ${id} does not exist`);
  return {
    statusCode: 200,
    headers: { 'content-type': stored.contentType, 'cache-control': 'private, max-age=31536000, immutable' },
    body: stored.body,
  };
}
