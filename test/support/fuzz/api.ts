/**
 * Fuzzing the HTTP API: requests with any query parameters (the real names with
 * selectors, metrics, limits and statuses pushed past their limits, unknown names,
 * repeated names, broken percent-encoding), any path, any method, and any body for
 * POST /uploads. Each request becomes an API Gateway HTTP API (payload 2.0) event
 * the way the local lab builds one (infra/local/http.ts apiEvent, the same code
 * that serves `npm start`) and goes to the deployed handler (functions/api/handler.ts)
 * against the emulators, with real data ingested.
 *
 * The property: the handler answers (never throws), with a 2xx or a 4xx, never a
 * 5xx; the body is JSON; a 4xx is `{"error":{"code","message"}}` whose message holds
 * no stack trace, source path or internal name; a listing's page is under 1 MB.
 * `next` cursors are fuzzed too: real ones (used with other routes and filters),
 * truncated or altered ones, and base64url JSON of any shape.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { APIGatewayProxyStructuredResultV2, Context, SQSBatchResponse } from 'aws-lambda';
import fc from 'fast-check';
import { handler as apiHandler, setApiDeps } from '../../../functions/api/handler.ts';
import { handler as ingestHandler, setIngestDeps } from '../../../functions/ingest/handler.ts';
import { s3EventRecord, sequencerGenerator, sqsEvent } from '../../../infra/local/events.ts';
import { apiEvent } from '../../../infra/local/http.ts';
import { MAX_PAGE, ROUTES } from '../../../shared/api.ts';
import { objectRefOf } from '../../../shared/ingest.ts';
import { METRIC_GROUPS, DISKPERF_METRICS, IOSTAT_METRICS } from '../../../shared/metrics.ts';
import { FORMATS } from '../../../shared/model.ts';
import { runId } from '../../../shared/store/keys.ts';
import { parsePattern } from '../../../shared/selectors.ts';
import { encodeCursor } from '../../../shared/store/cursors.ts';
import { listDevices, pageDevices, pageRuns, pageUploads } from '../../../shared/listings.ts';
import { UPLOAD_STATUSES } from '../../../shared/upload-status.ts';
import { startEmulators } from '../../../harness/emulators.ts';
import { FIXTURES_DIR } from '../fixtures.ts';
import { lambdaContext } from '../../../harness/lambda.ts';
import { globArb, selectorTextArb } from './selectors.ts';

export interface ApiRequest {
  method: string;
  /** Path and query as they would stand in the request line. */
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** Device labels, run ids and `next` cursors the fixture data has, so that some requests reach real answers. */
export interface KnownData {
  devices: string[];
  runIds: string[];
  cursors: string[];
}

const ANY_TEXT = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);

const limitArb = fc.oneof(
  fc.constantFrom(
    '1',
    '100',
    String(MAX_PAGE),
    String(MAX_PAGE + 1),
    '0',
    '-1',
    '1.5',
    '1e2',
    '0x10',
    ' 5',
    '5 ',
    '',
    'NaN',
    'Infinity',
    '-0',
    '00',
    '9'.repeat(400),
    '1,2',
  ),
  fc.integer({ min: -10, max: MAX_PAGE * 3 }).map(String),
  ANY_TEXT,
);

/** `next` values: real cursors (on any route, with any filters), cut or altered ones, and made-up ones of every shape. */
function cursorArb(known: KnownData): fc.Arbitrary<string> {
  const real = fc.constantFrom(...known.cursors);
  const position = fc.oneof(
    fc.constant(null),
    fc.json({ maxDepth: 2 }).map((j) => JSON.parse(j) as unknown),
    fc.record(
      { label: fc.oneof(ANY_TEXT, fc.constantFrom(...known.devices)), after: fc.oneof(ANY_TEXT, fc.constant('~')) },
      { requiredKeys: [] },
    ),
  );
  return fc.oneof(
    { weight: 3, arbitrary: real },
    { weight: 1, arbitrary: fc.tuple(real, fc.nat()).map(([c, n]) => c.slice(0, n % (c.length + 1))) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(real, fc.nat(), fc.constantFrom('A', '_', '-', '0', '%', '='))
        .map(([c, n, x]) => `${c.slice(0, n % c.length)}${x}${c.slice((n % c.length) + 1)}`),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom('devices', 'runs', 'uploads'), fc.option(globArb, { nil: undefined }), position)
        .map(([name, device, p]) =>
          encodeCursor(
            name as 'runs',
            name === 'runs' ? { device, format: undefined } : name === 'uploads' ? { status: undefined } : {},
            p,
          ),
        ),
    },
    {
      weight: 1,
      arbitrary: fc.oneof(
        ANY_TEXT,
        fc.json().map((j) => Buffer.from(j).toString('base64url')),
        fc.constant('x'.repeat(4097)),
      ),
    },
  );
}

const metricArb = fc.oneof(
  fc.constantFrom(
    ...METRIC_GROUPS,
    ...DISKPERF_METRICS,
    ...IOSTAT_METRICS,
    'constructor',
    '__proto__',
    'toString',
    'ALL',
    'all ',
    '',
  ),
  ANY_TEXT,
);

function selectorArb(known: KnownData): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...known.devices) },
    { weight: 1, arbitrary: fc.constantFrom(...known.runIds).map((id) => `run=${id}`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...known.devices), fc.constantFrom('*', '?', '', '/*'))
        .map(([d, w]) => `${d.slice(0, Math.max(1, d.length - 2))}${w}`),
    },
    { weight: 3, arbitrary: selectorTextArb },
  );
}

/** Query parameters: the route's own, others, each maybe repeated. */
function queryArb(known: KnownData): fc.Arbitrary<[string, string][]> {
  const param = fc.oneof(
    fc.tuple(fc.constantFrom('a', 'b'), selectorArb(known)),
    fc.tuple(fc.constant('metric'), metricArb),
    fc.tuple(fc.constant('limit'), limitArb),
    fc.tuple(fc.constant('status'), fc.oneof(fc.constantFrom(...UPLOAD_STATUSES), ANY_TEXT)),
    fc.tuple(fc.constant('format'), fc.oneof(fc.constantFrom(...FORMATS), ANY_TEXT)),
    fc.tuple(fc.constant('device'), fc.oneof(fc.constantFrom(...known.devices), globArb, ANY_TEXT)),
    fc.tuple(fc.constant('next'), cursorArb(known)),
    fc.tuple(
      fc.oneof(fc.constantFrom('A', 'metrics', 'id', 'key', '__proto__', 'constructor', ''), ANY_TEXT),
      ANY_TEXT,
    ),
  );
  return fc.array(param, { maxLength: 5 });
}

/** Raw query strings no client library would build: stray `%`, `=`, `&`, `+`. */
const brokenQueryArb = fc
  .array(
    fc.constantFrom(
      'a=',
      'b=',
      '%',
      '%zz',
      '%E0%A4%A',
      '%00',
      '&',
      '&&',
      '=',
      '==',
      '+',
      'metric=%',
      'limit=%FF',
      'a=%F0%9F%98',
      'x',
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((parts) => parts.join(''));

const pathArb = (known: KnownData) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('/devices', '/runs', '/compare', '/uploads') },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.constantFrom(...known.runIds),
          ANY_TEXT,
          fc.constantFrom('%E0%A4%A', '%', '..', '%2F', 'r0', 'r'.padEnd(25, 'z')),
        )
        .map((id) => `/runs/${/%|^\.\.$/.test(id) ? id : encodeURIComponent(id)}`),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '/',
        '//devices',
        '/devices/',
        '/DEVICES',
        '/runs/',
        '/runs/a/b',
        '/%',
        '/%zz',
        '/compare%00',
        '/uploads/..%2F..',
        '/favicon.ico',
        `/${'x'.repeat(3000)}`,
      ),
    },
  );

/** Bodies for POST /uploads: well-formed ones pushed to their limits, and anything else. */
const uploadBodyArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record(
        {
          key: fc.oneof(
            fc.constantFrom(
              'sas10k/run1.txt',
              'a',
              '',
              ' ',
              '/',
              '../x',
              'x'.repeat(1024),
              'é'.repeat(600),
              'a\u0000b',
              'a\nb',
            ),
            ANY_TEXT,
            fc.integer(),
            fc.constant(null),
          ),
          device: fc.oneof(fc.constantFrom('sas10k', '', ' ', 'x'.repeat(129), 'dé'), ANY_TEXT, fc.integer()),
          tags: fc.oneof(
            fc.dictionary(
              fc.oneof(fc.constantFrom('interface', 'rpm', '', 'a;b', 'a=b'), ANY_TEXT),
              fc.oneof(fc.constantFrom('SAS', '', ';', '='), ANY_TEXT, fc.integer() as fc.Arbitrary<unknown>),
              { maxKeys: 5 },
            ),
            fc.constant([]),
            fc.constant('interface=SAS'),
          ),
          size: fc.oneof(
            fc.integer({ min: -1, max: 2 ** 31 }),
            fc.constantFrom(1e300, -0, 0.5, Number.MAX_SAFE_INTEGER + 2),
            fc.constantFrom('10', null),
          ),
          extra: ANY_TEXT,
        },
        { requiredKeys: [] },
      )
      .map((body) => JSON.stringify(body)),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      'null',
      '[]',
      '{',
      '}',
      'true',
      '"key"',
      '{"key":',
      '{"key":"a"}garbage',
      '{"__proto__":{"key":"x"}}',
      '{"constructor":{}}',
      '1e999',
      '\u0000',
    ),
  },
  { weight: 1, arbitrary: fc.oneof(fc.json({ maxDepth: 3 }), ANY_TEXT) },
);

/** Any request, most of them to a real route with parameters of its own kind. */
export function apiRequestArb(known: KnownData): fc.Arbitrary<ApiRequest> {
  const get = fc
    .record({
      path: pathArb(known),
      query: queryArb(known),
      broken: fc.option(brokenQueryArb, { freq: 8, nil: undefined }),
      method: fc.oneof(
        { weight: 12, arbitrary: fc.constant('GET') },
        { weight: 1, arbitrary: fc.constantFrom('HEAD', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'TRACE') },
      ),
    })
    .map(({ path, query, broken, method }) => {
      const search = new URLSearchParams(query).toString();
      const raw = [search, broken].filter(Boolean).join('&');
      return { method, url: raw ? `${path}?${raw}` : path, headers: { accept: 'application/json' } };
    });
  const post = fc
    .record({
      body: fc.option(uploadBodyArb, { freq: 12, nil: undefined }),
      contentType: fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'application/x-www-form-urlencoded',
        'text/plain',
        'application/xml',
        '',
      ),
      path: fc.constantFrom('/uploads', '/uploads', '/uploads', '/devices', '/compare?a=x&b=y', '/runs'),
    })
    .map(({ body, contentType, path }) => ({
      method: 'POST',
      url: path,
      headers: { ...(contentType ? { 'content-type': contentType } : {}), accept: 'application/json' },
      ...(body !== undefined ? { body } : {}),
    }));
  return fc.oneof({ weight: 3, arbitrary: get }, { weight: 1, arbitrary: post });
}

/** The event the lab's HTTP server builds for this request (infra/local/http.ts). */
export function eventFor(request: ApiRequest) {
  const body = Buffer.from(request.body ?? '', 'utf8');
  const headers: Record<string, string> = {
    host: '127.0.0.1:4580',
    'user-agent': 'benchdrop-fuzz/1.0',
    ...request.headers,
  };
  if (body.length > 0) headers['content-length'] = String(body.length);
  const req = {
    method: request.method,
    url: request.url,
    headers,
    httpVersion: '1.1',
    socket: { remoteAddress: '127.0.0.1' },
  } as unknown as IncomingMessage;
  return apiEvent(req, body, Object.values(ROUTES));
}

/** What no answer may show: a stack trace, a source path, or a name of the lab's insides. */
export function leaks(text: string, internalNames: readonly string[]): string | undefined {
  if (/\n\s+at [^\n]+[(:]/.test(text) || /\bat (?:async )?[\w.<>]+ \(/.test(text)) return 'a stack trace';
  if (/(?:\/work\/|node_modules|\.ts:\d+|file:\/\/)/.test(text)) return 'a source path';
  for (const name of internalNames) if (text.includes(name)) return `the internal name ${JSON.stringify(name)}`;
  return undefined;
}

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** One request through the event builder and the handler; throws if the answer breaks the contract. */
export async function apiHoldsUp(
  request: ApiRequest,
  internalNames: readonly string[],
  context: () => Context = () => lambdaContext('benchdrop-api'),
): Promise<ApiAnswer> {
  const event = eventFor(request);
  const result = (await apiHandler(event, context())) as APIGatewayProxyStructuredResultV2;
  const status = result?.statusCode ?? 0;
  const text = result?.body ?? '';
  check(status >= 200 && status < 500, `HTTP ${status}: ${text.slice(0, 300)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`HTTP ${status} with a body that is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (status === 200 && /^\/(devices|runs|uploads)(\?|$)/.test(request.url)) {
    check(
      Buffer.byteLength(text) < 1_000_000,
      `a page of ${Buffer.byteLength(text)} bytes: ${request.url.slice(0, 200)}`,
    );
  }
  if (status >= 400) {
    const error = (body as { error?: { code?: unknown; message?: unknown } }).error;
    check(
      typeof error?.code === 'string' && typeof error.message === 'string' && error.message.length > 0,
      `HTTP ${status} without {"error":{"code","message"}}: ${text.slice(0, 300)}`,
    );
    const leak = leaks(error.message, internalNames);
    check(leak === undefined, `HTTP ${status} shows ${leak}: ${error.message.slice(0, 300)}`);
  }
  return { status, body };
}

/** The property: any request answered within the contract. Counts answers by status class. */
export function apiProperty(
  known: KnownData,
  internalNames: readonly string[],
  statuses: Map<number, number> = new Map(),
) {
  return fc.asyncProperty(apiRequestArb(known), async (request) => {
    try {
      const { status } = await apiHoldsUp(request, internalNames);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    } catch (error) {
      throw new Error(
        `${request.method} ${request.url}${request.body !== undefined ? ` body ${JSON.stringify(request.body).slice(0, 300)}` : ''}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  });
}

/** The logs the API fuzz reads: two diskperf devices, a Solaris host's disks, a Linux host's. */
const DATA = [
  { key: 'irix-indy-scsi2sd-redux.diskperf.txt', fixture: 'irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt' },
  { key: 'irix-indy-300G-10K.diskperf.txt', fixture: 'irix/irix-6.5-indy-300G-10K.diskperf.txt' },
  {
    key: 'x4100/solaris-10-x4100-sas-maxcontig.iostat.txt',
    fixture: 'solaris/solaris-10-x4100-sas-maxcontig.iostat.txt',
    metadata: { tags: 'interface=SAS;rpm=10000' },
  },
  { key: 'fedora/linux-sysstat-12.7.5-x.txt', fixture: 'linux/linux-sysstat-12.7.5-x.txt' },
];

export interface ApiFuzzBench {
  known: KnownData;
  /** Names of the lab's insides no 4xx may show: table, bucket, emulator endpoints. */
  internalNames: string[];
  stop(): Promise<void>;
}

/** The emulators with DATA ingested by the real ingest handler, and the API handler pointed at them. */
export async function startApiFuzzBench(): Promise<ApiFuzzBench> {
  const env = await startEmulators({ tableName: 'benchdrop-fuzz-table', bucket: 'benchdrop-fuzz-bucket' });
  try {
    setIngestDeps(env.deps);
    setApiDeps(env.apiDeps);
    const sequencer = sequencerGenerator();
    const runIds: string[] = [];
    for (const { key, fixture, metadata } of DATA) {
      const put = await env.put(key, readFileSync(join(FIXTURES_DIR, fixture)), metadata ? { metadata } : {});
      const record = s3EventRecord({
        eventName: 'ObjectCreated:Put',
        bucket: env.bucket,
        key,
        size: put.size,
        eTag: put.eTag,
        sequencer: sequencer(),
      });
      const response = (await ingestHandler(sqsEvent([record]), lambdaContext())) as SQSBatchResponse;
      if (response.batchItemFailures.length > 0) throw new Error(`ingesting ${key} failed`);
      runIds.push(runId(env.bucket, key, objectRefOf(record).version, 0));
    }
    const devices = (await listDevices(env.deps)).map((d) => d.label);
    if (devices.length < 4) throw new Error(`expected the fixture devices, found ${devices.join(', ')}`);
    // One real cursor of each listing, and of a runs listing filtered by a pattern.
    const cursors = [
      (await pageDevices(env.deps, { limit: 1 })).next,
      (await pageRuns(env.deps, { limit: 1 })).next,
      (await pageRuns(env.deps, { limit: 1, device: parsePattern('x4100/*') })).next,
      (await pageUploads(env.deps, { limit: 1 })).next,
    ].filter((c): c is string => c !== undefined);
    if (cursors.length < 4) throw new Error(`expected a cursor of each listing, found ${cursors.length}`);
    const hostPort = (url: string) => new URL(url).host;
    return {
      known: { devices, runIds, cursors },
      internalNames: [env.tableName, env.bucket, hostPort(env.dynamodbEndpoint), hostPort(env.s3Endpoint)],
      stop: async () => {
        setApiDeps(undefined);
        setIngestDeps(undefined);
        await env.stop();
      },
    };
  } catch (error) {
    await env.stop();
    throw error;
  }
}
