/**
 * The API Lambda: one function for every route of shared/api.ts, behind an API
 * Gateway HTTP API (payload format 2.0). middy routes the request, each route
 * validates its parameters, calls shared/ and shapes the answer (routes.ts);
 * every error becomes `{"error":{"code","message"}}` (http.ts): 400 for a bad
 * parameter, selector or comparison, 404 for an unknown run or route, 500
 * "internal error" for anything else, logged and never echoed.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import httpRouterHandler, { type Method, type Route } from '@middy/http-router';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { Context } from 'aws-lambda';
import { ROUTES } from '../../shared/api.ts';
import { createDocumentClient, createS3Client } from '../../shared/aws.ts';
import { ENV, SERVICES, uploadLimitsFromEnv } from '../../shared/config.ts';
import { apiErrors, notFound, type ApiEvent, type ApiResult } from './http.ts';
import {
  compare,
  createReport,
  createUpload,
  devices,
  report,
  run,
  runs,
  samples,
  uploads,
  type ApiDeps,
} from './routes.ts';

export type { ApiDeps } from './routes.ts';

export const logger = new Logger({ serviceName: SERVICES.api });

let deps: ApiDeps | undefined;

/** Clients and settings, created once per container (or injected by the local lab and tests). */
export function apiDeps(env: NodeJS.ProcessEnv = process.env): ApiDeps {
  const tableName = env[ENV.tableName];
  const bucket = env[ENV.bucketName];
  const resultsBucket = env[ENV.resultsBucket];
  if (!tableName) throw new Error(`${ENV.tableName} is not set`);
  if (!bucket) throw new Error(`${ENV.bucketName} is not set`);
  if (!resultsBucket) throw new Error(`${ENV.resultsBucket} is not set`);
  const limit = uploadLimitsFromEnv(env).maxUploadBytes;
  return {
    s3: createS3Client(),
    db: createDocumentClient(),
    tableName,
    bucket,
    resultsBucket,
    maxUploadBytes: limit,
  };
}

export function setApiDeps(value: ApiDeps | undefined): void {
  deps = value;
}

type RouteFn = (event: ApiEvent, deps: ApiDeps) => Promise<ApiResult>;

const IMPLEMENTATIONS: Record<keyof typeof ROUTES, RouteFn> = {
  devices,
  runs,
  run,
  samples,
  compare,
  uploads,
  createUpload,
  createReport,
  report,
};

/**
 * The parser's options. middy 6 honours disableContentTypeCheck (it is among the
 * parser's defaults) though its type declarations leave it out.
 */
type JsonBodyOptions = NonNullable<Parameters<typeof httpJsonBodyParser>[0]> & { disableContentTypeCheck?: boolean };
const JSON_BODY: JsonBodyOptions = { disableContentTypeCheck: true };

/** The JSON body of POST /uploads, whatever content type the client declared (curl -d sends a form type). */
const withJsonBody = (fn: RouteFn) =>
  middy<ApiEvent, ApiResult>()
    .use(httpJsonBodyParser(JSON_BODY))
    .handler((event) => fn(event, (deps ??= apiDeps())));

const routes: Route<ApiEvent, ApiResult>[] = (Object.keys(ROUTES) as (keyof typeof ROUTES)[]).map((name) => {
  const [method, path] = ROUTES[name].split(' ') as [Method, string];
  const fn = IMPLEMENTATIONS[name];
  return {
    method,
    path,
    handler: method === 'POST' ? withJsonBody(fn) : (event: ApiEvent) => fn(event, (deps ??= apiDeps())),
  };
});

// Thrown, not returned: apiErrors() answers it like any other 404 (and middy 6 types
// this callback as one that never returns).
const router = httpRouterHandler<ApiEvent, ApiResult>({
  routes,
  notFoundResponse: ({ method, path }) => {
    throw notFound(`no route ${method} ${path.slice(0, 200)}; routes: ${Object.values(ROUTES).join(', ')}`);
  },
});

export const handler = middy<ApiEvent, ApiResult, Error, Context>()
  .use(injectLambdaContext(logger))
  .use(apiErrors(logger))
  .handler(router);
