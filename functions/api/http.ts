/**
 * HTTP plumbing of the API function: JSON answers, the error shape of the
 * contract (`{"error":{"code","message"}}`), query and body validation that
 * names the parameter and what it allows, and the middleware that turns every
 * thrown error into an answer (a 500 never says more than "internal error").
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type * as z from 'zod/mini';
import { MAX_KEY_BYTES, MAX_PAGE, MAX_SAMPLES, type ApiError } from '../../shared/api.ts';
import { ANSWER_FORMATS, CompareError, METRIC_SPEC_HELP } from '../../shared/compare.ts';
import { SAMPLE_METRIC_HELP, SamplesError } from '../../shared/listings.ts';
import { FORMATS } from '../../shared/model.ts';
import { KEY_SEPARATOR, MAX_LABEL_LENGTH } from '../../shared/labels.ts';
import { MAX_PATTERN_LENGTH, MAX_SELECTOR_LENGTH, SELECTOR_HELP, SelectorError } from '../../shared/selectors.ts';
import { ReadLimitError } from '../../shared/compare/selection.ts';
import { CursorError, MAX_CURSOR_LENGTH } from '../../shared/store/cursors.ts';
import { UPLOAD_STATUSES } from '../../shared/upload-status.ts';
import { UploadError } from '../../shared/uploads.ts';

export type ApiEvent = APIGatewayProxyEventV2;
export type ApiResult = APIGatewayProxyStructuredResultV2;

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' } as const;

export function json(statusCode: number, body: unknown): ApiResult {
  return jsonText(statusCode, JSON.stringify(body));
}

/** An answer whose JSON is already serialised. */
export function jsonText(statusCode: number, body: string): ApiResult {
  return { statusCode, headers: { ...JSON_HEADERS }, body };
}

/** A text answer (a comparison's table as CSV or Markdown): its content type names its charset. */
export function textResult(statusCode: number, body: string, contentType: `${string}; charset=utf-8`): ApiResult {
  return { statusCode, headers: { 'content-type': contentType, 'cache-control': 'no-store' }, body };
}

export function errorResult(statusCode: number, code: string, message: string, requestId?: string): ApiResult {
  const body: ApiError = { error: { code, message, ...(requestId !== undefined ? { requestId } : {}) } };
  return json(statusCode, body);
}

/** An error with its HTTP answer: thrown by routes, answered by apiErrors(). */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new HttpError(400, 'bad_request', message);
export const notFound = (message: string) => new HttpError(404, 'not_found', message);

/** What each parameter allows, said when a value is refused. */
const ALLOWED: Record<string, string> = {
  device:
    `a device label or pattern (* and ? as wildcards, \\ before * ? \\ to make them literal), ` +
    `1-${MAX_PATTERN_LENGTH} characters without control characters or "${KEY_SEPARATOR}"`,
  format: `one of ${FORMATS.join(', ')}`,
  limit: `a whole number from 1 to ${MAX_PAGE}`,
  next: `the next value of the previous page's answer, as it came (at most ${MAX_CURSOR_LENGTH} characters)`,
  status: `one of ${UPLOAD_STATUSES.join(', ')}`,
  history: "true (every version of each key) or false (each key's current state, the default)",
  a: `a selector of at most ${MAX_SELECTOR_LENGTH} characters: ${SELECTOR_HELP}`,
  b: `a selector of at most ${MAX_SELECTOR_LENGTH} characters: ${SELECTOR_HELP}`,
  metric: METRIC_SPEC_HELP,
  key: `an object key of 1 to ${MAX_KEY_BYTES} bytes without control characters, a leading / or . and .. segments`,
  device_: `a device label of 1-${MAX_LABEL_LENGTH} characters without control characters or "${KEY_SEPARATOR}"`,
  tags: 'an object of tag names to values, e.g. {"interface":"SAS","rpm":"10000"}',
  size: 'the number of bytes the PUT will send, a whole number (it is signed: the upload must be exactly this long)',
};

/** What GET /compare's parameters allow, where they differ from the listings'. */
export const COMPARE_ALLOWED: Record<string, string> = {
  format: `one of ${ANSWER_FORMATS.join(', ')}`,
};

/** What GET /runs/{id}/samples' parameters allow, where they differ from the listings'. */
export const SAMPLES_ALLOWED: Record<string, string> = {
  series: 'a series of the run: its native name (sda) or its label (<label>/sda), as GET /runs/{id} lists it',
  metric: SAMPLE_METRIC_HELP,
  limit: `a whole number from 1 to ${MAX_SAMPLES}`,
};

function quote(value: unknown): string {
  if (value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return ` (got ${JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}...` : text)})`;
}

/** One sentence for the first issue: `<param>: <what is wrong or allowed>`. */
function describeIssue(
  issue: z.core.$ZodIssue,
  input: Record<string, unknown>,
  where: 'query' | 'body',
  allowedKeys: readonly string[],
  allowed: Record<string, string> = {},
): string {
  if (issue.code === 'unrecognized_keys') {
    const noun = where === 'query' ? 'parameter' : 'field';
    // A few names are enough to act on; a request with hundreds is not echoed back whole.
    const names = issue.keys.slice(0, 5).map((k) => (k.length > 40 ? `${k.slice(0, 40)}...` : k));
    const more = issue.keys.length > names.length ? ` and ${issue.keys.length - names.length} more` : '';
    return (
      `${names.join(', ')}${more}: unknown ${noun}${issue.keys.length > 1 ? 's' : ''}; ` +
      `expected ${allowedKeys.join(', ')}`
    );
  }
  const param = String(issue.path[0] ?? where);
  const value = input[param];
  if (issue.path.length === 0) return `${where}: expected a JSON object with ${allowedKeys.join(', ')}`;
  const expected = allowed[param] ?? allowedFor(param, where);
  if (issue.code === 'invalid_type' && value === undefined) return `${param}: required; expected ${expected}`;
  if (issue.code === 'custom') return `${param}: ${issue.message}${quote(value)}`;
  return `${param}: expected ${expected}${quote(value)}`;
}

const allowedFor = (param: string, where: 'query' | 'body') =>
  where === 'body' && param === 'device' ? ALLOWED['device_']! : (ALLOWED[param] ?? 'a valid value');

/** A schema that refuses unknown keys (z.strictObject). */
type StrictSchema = z.ZodMiniObject<z.core.$ZodLooseShape, z.core.$strict>;

/**
 * The query parameters, validated: unknown ones and bad values are a 400 naming
 * them and what they allow (`allowed`: a route's own wording, over ALLOWED's).
 */
export function parseQuery<S extends StrictSchema>(
  schema: S,
  event: ApiEvent,
  allowed?: Record<string, string>,
): z.output<S> {
  const input: Record<string, unknown> = { ...(event.queryStringParameters ?? {}) };
  const result = schema.safeParse(input);
  if (!result.success)
    throw badRequest(describeIssue(result.error.issues[0]!, input, 'query', Object.keys(schema.shape), allowed));
  return result.data as z.output<S>;
}

/** The JSON body (parsed by http-json-body-parser), validated like a query. */
export function parseBody<S extends StrictSchema>(schema: S, body: unknown): z.output<S> {
  const input =
    body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const result = schema.safeParse(body);
  if (!result.success)
    throw badRequest(describeIssue(result.error.issues[0]!, input, 'body', Object.keys(schema.shape)));
  return result.data as z.output<S>;
}

/** A refused request, as it goes to the log (no user data beyond the route). */
export interface ErrorLog {
  error(message: string, details: Record<string, unknown>): void;
  info(message: string, details: Record<string, unknown>): void;
}

/** What an API Gateway request id looks like; anything else is not echoed. */
const REQUEST_ID = /^[A-Za-z0-9=+/_-]{1,64}$/;

/**
 * The answer for any error a route throws. An unexpected one is a 500 that says
 * only "internal error" and the request id (API Gateway's, also in the access log
 * and in the function's log line with the details): no message, name or stack.
 */
export function answerFor(error: unknown, requestId?: string): { result: ApiResult; internal: boolean } {
  if (error instanceof HttpError)
    return { result: errorResult(error.statusCode, error.code, error.message), internal: false };
  if (
    error instanceof SelectorError ||
    error instanceof CompareError ||
    error instanceof ReadLimitError ||
    error instanceof UploadError
  )
    return { result: errorResult(400, 'bad_request', error.message), internal: false };
  if (error instanceof SamplesError)
    return {
      result: errorResult(error.missing ? 404 : 400, error.missing ? 'not_found' : 'bad_request', error.message),
      internal: false,
    };
  if (error instanceof CursorError)
    return { result: errorResult(400, 'bad_request', `next: ${error.message}`), internal: false };
  // The body parser refuses a body that is not JSON: 415 in middy 6, 422 for a malformed one in 7.
  const middy = error as { statusCode?: number; cause?: { package?: string } };
  if (
    middy?.cause?.package === '@middy/http-json-body-parser' &&
    (middy.statusCode === 415 || middy.statusCode === 422)
  ) {
    return {
      result: errorResult(400, 'bad_request', 'body: expected a JSON object with key, size, device?, tags?'),
      internal: false,
    };
  }
  const id = requestId !== undefined && REQUEST_ID.test(requestId) ? requestId : 'unknown';
  return { result: errorResult(500, 'internal', `internal error (request id ${id})`, id), internal: true };
}

/** Every error becomes a contract answer; unexpected ones are logged, never echoed. */
export function apiErrors(log: ErrorLog): MiddlewareObj<ApiEvent, ApiResult> {
  return {
    onError: (request) => {
      const requestId = request.event.requestContext?.requestId;
      const { result, internal } = answerFor(request.error, requestId);
      const http = request.event.requestContext?.http;
      const route = `${http?.method ?? '?'} ${http?.path ?? '?'}`;
      if (internal) log.error('request failed', { route, requestId, error: request.error });
      else
        log.info('request refused', {
          route,
          status: result.statusCode,
          reason: (JSON.parse(result.body!) as ApiError).error.message,
        });
      request.response = result;
    },
  };
}
