/**
 * The lab's HTTP API from the command line (routes and shapes in shared/api.ts).
 * A local lab's API is plain http on the loopback; an AWS lab's HTTP API uses IAM
 * auth, so each request is signed with SigV4 (service execute-api) using the
 * default credential chain. Every failure becomes a CliError with a message a
 * person can act on: the API's own error message, or which URL could not be
 * reached and how to point the CLI elsewhere.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { SignatureV4 } from '@smithy/signature-v4';
import { MAX_PAGE, type ApiError } from '../shared/api.ts';
import { CliError } from './io.ts';
import { TARGET_HELP, type ApiTarget, type CredentialSource } from './target.ts';

export interface ApiClientDeps {
  fetch?: typeof fetch;
  /** For signing; the default credential chain when absent. */
  credentials?: CredentialSource;
  /** Per request; an API Gateway answers within 30 s. */
  timeoutMs?: number;
  /** Fixed signing time (tests). */
  signingDate?: Date;
}

export type Query = Record<string, string | number | undefined>;

/** What ApiClient.list gathered, and the cursor of the listing's rest. */
export interface Listed<T> {
  items: T[];
  next?: string;
}

export interface BuiltRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** The API answered with an error status. */
export class ApiRequestError extends CliError {
  override readonly name = 'ApiRequestError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
  }
}

export class ApiClient {
  private credentials?: CredentialSource;

  constructor(
    readonly target: ApiTarget,
    private readonly deps: ApiClientDeps = {},
  ) {
    if (deps.credentials) this.credentials = deps.credentials;
  }

  /** The request as it goes on the wire: URL with query, headers (signed for an AWS API). */
  async build(method: string, path: string, query: Query = {}, body?: unknown): Promise<BuiltRequest> {
    const url = new URL(this.target.url + path);
    // RFC 3986 encoding (spaces as %20, `*` as %2A): the query goes out exactly as SigV4 canonicalises it.
    url.search = Object.entries(query)
      .filter(([, value]) => value !== undefined && value !== '')
      .map(([name, value]) => `${rfc3986(name)}=${rfc3986(String(value))}`)
      .join('&');
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (text !== undefined) headers['content-type'] = 'application/json';
    const sent = this.target.sign ? await this.signed(method, url, headers, text) : headers;
    return { url: url.href, method, headers: sent, ...(text !== undefined ? { body: text } : {}) };
  }

  /** The headers signed with SigV4 for execute-api, in lower case and without `host` (fetch sets it). */
  private async signed(
    method: string,
    url: URL,
    headers: Record<string, string>,
    text: string | undefined,
  ): Promise<Record<string, string>> {
    this.credentials ??= fromNodeProviderChain();
    const signer = new SignatureV4({
      service: 'execute-api',
      region: this.target.region,
      credentials: this.credentials,
      sha256: Sha256,
    });
    const query: Record<string, string> = {};
    for (const [name, value] of url.searchParams) query[name] = value;
    const request = {
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query,
      headers: { ...headers, host: url.host },
      ...(text !== undefined ? { body: text } : {}),
    };
    let signed;
    try {
      signed = await signer.sign(request, this.deps.signingDate ? { signingDate: this.deps.signingDate } : {});
    } catch (error) {
      throw new CliError(
        `no AWS credentials to sign the request to ${this.target.url} (${(error as Error).message}); ` +
          `configure them (aws configure, AWS_PROFILE or AWS_ACCESS_KEY_ID) or ${TARGET_HELP}`,
      );
    }
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers))
      if (name.toLowerCase() !== 'host') out[name.toLowerCase()] = String(value);
    return out;
  }

  async get<T>(path: string, query: Query = {}): Promise<T> {
    return this.request<T>('GET', path, query);
  }

  /**
   * Up to `max` items of a paged listing (shared/api.ts: `{ <field>: T[], next? }`),
   * from its start or from the cursor `from`, asking page after page, each for
   * what is still wanted (at most MAX_PAGE); `next` is where the listing goes on
   * after them, absent when it has no more.
   */
  async list<T>(path: string, field: string, query: Query = {}, max = Infinity, from?: string): Promise<Listed<T>> {
    const items: T[] = [];
    let next = from;
    do {
      const page = await this.get<Record<string, unknown>>(path, {
        ...query,
        limit: Math.min(MAX_PAGE, max - items.length),
        next,
      });
      const got = page[field];
      if (!Array.isArray(got)) throw this.notBenchdrop(path, `without a ${field} list`);
      items.push(...(got as T[]));
      next = typeof page['next'] === 'string' ? page['next'] : undefined;
    } while (next !== undefined && items.length < max);
    return { items, ...(next !== undefined ? { next } : {}) };
  }

  async request<T>(method: string, path: string, query: Query = {}, body?: unknown): Promise<T> {
    const request = await this.build(method, path, query, body);
    const doFetch = this.deps.fetch ?? fetch;
    let response: Response;
    try {
      response = await doFetch(request.url, {
        method: request.method,
        headers: request.headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
        signal: AbortSignal.timeout(this.deps.timeoutMs ?? 30_000),
      });
    } catch (error) {
      throw new CliError(
        `could not reach the benchdrop API at ${this.target.url} (from ${this.target.source}): ${reason(error)}; ` +
          `${this.target.notAnswering ?? `is the lab running? Otherwise ${TARGET_HELP}`}`,
      );
    }
    const text = await response.text();
    const json = jsonOrUndefined(text);
    if (!response.ok) throw errorOf(response, json, text, request.url);
    if (json === undefined)
      throw this.notBenchdrop(path, `with something that is not JSON (${text.slice(0, 80) || 'an empty body'})`);
    return json as T;
  }

  /** An answer no benchdrop API gives: the URL most likely names something else. */
  private notBenchdrop(path: string, how: string): CliError {
    return new CliError(
      `the API at ${this.target.url} answered ${path} ${how}; ` +
        `is ${this.target.url} a benchdrop API? Otherwise ${TARGET_HELP}`,
    );
  }
}

function jsonOrUndefined(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function rfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function reason(error: unknown): string {
  const e = error as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'no answer in time';
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

function errorOf(response: Response, json: unknown, text: string, url: string): ApiRequestError {
  const body = json as Partial<ApiError> & { message?: unknown; Message?: unknown };
  if (body && typeof body === 'object' && body.error && typeof body.error.message === 'string') {
    return new ApiRequestError(body.error.message, response.status, body.error.code ?? String(response.status));
  }
  // API Gateway's own answers (IAM auth, throttling): {"message": "..."}.
  const gateway =
    body && typeof body === 'object'
      ? typeof body.message === 'string'
        ? body.message
        : typeof body.Message === 'string'
          ? body.Message
          : undefined
      : undefined;
  if (gateway) {
    const hint =
      response.status === 403 ? ' (the API uses IAM auth: check your AWS credentials and region, or the stack)' : '';
    return new ApiRequestError(`${gateway}${hint}`, response.status, String(response.status));
  }
  const snippet = text.trim().slice(0, 120);
  return new ApiRequestError(
    `the API answered ${response.status} ${response.statusText} for ${url}${snippet ? `: ${snippet}` : ''}`,
    response.status,
    String(response.status),
  );
}
