/**
 * The API's attack surface against the real handlers and emulators (SECURITY.md):
 * requests go over HTTP through the local lab's API front (infra/local/http.ts,
 * which builds API Gateway v2 events) to the deployed API handler, reading a
 * dynalite table that the real ingest handler filled from s3rver.
 *
 * - Errors: a table of bad requests (unknown routes, bad selectors, huge and
 *   repeated parameters, malformed bodies) and forced internal failures (a table
 *   that does not exist, credentials that cannot be loaded): no answer carries a
 *   stack trace, a file path, a table, bucket or endpoint name, or an SDK error
 *   name; a 500 says "internal error" and a request id, which the log line shares.
 * - Key spaces: labels, tags and selectors holding the key separator `#` (so the
 *   prefixes of every other kind of item), control characters or too many
 *   characters are a 400, decided before any read: the answer is the same with
 *   the table gone. Ingest refuses such labels too.
 * - Presigned PUTs: one key in the lab's bucket, exactly `size` bytes (signed),
 *   15 minutes. s3rver does not check V4 signatures, so a SigV4 verifier written
 *   from the algorithm (test/support/sigv4.ts) checks what S3 would; s3rver does
 *   check the expiry, and ingest checks the size again.
 */
import { serveApi, type ServedApi } from '../../harness/api-server.ts';
import '../../harness/quiet.ts';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import type { SQSBatchResponse } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { logger as apiLogger, setApiDeps, type ApiDeps } from '../../functions/api/handler.ts';
import type { ApiEvent } from '../../functions/api/http.ts';
import { createUpload, UPLOAD_URL_SECONDS } from '../../functions/api/routes.ts';
import { handler as ingestHandler, setIngestDeps } from '../../functions/ingest/handler.ts';
import { s3EventRecord, sequencerGenerator, sqsEvent } from '../../infra/local/events.ts';
import {
  MAX_PAGE,
  type ApiError,
  type DeviceEntry,
  type PresignedUpload,
  type RunListing,
  type UploadListing,
} from '../../shared/api.ts';
import { objectRefOf } from '../../shared/ingest.ts';
import { MAX_MESSAGE_LENGTH } from '../../shared/ingest/deps.ts';
import { MAX_PATTERN_LENGTH, MAX_SELECTOR_LENGTH } from '../../shared/selectors.ts';
import {
  devicePk,
  DEVICES_PK,
  KEY_SEPARATOR,
  objectPk,
  runId,
  runPk,
  seriesSk,
  statusPk,
  uploadPk,
  uploadSk,
} from '../../shared/store/keys.ts';
import { createS3Client } from '../../shared/aws.ts';
import {
  REGION,
  S3RVER_CREDENTIALS,
  startEmulators,
  type Emulators,
  type PutOptions,
} from '../../harness/emulators.ts';
import { lambdaContext } from '../../harness/lambda.ts';
import { verifyPresignedRequest, type SentRequest } from '../support/sigv4.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURES = join(ROOT, 'test/fixtures');
const REDUX = readFileSync(join(FIXTURES, 'irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt'));
const X4100 = readFileSync(join(FIXTURES, 'solaris/solaris-10-x4100-sas-maxcontig.iostat.txt'));
/** The lab's upload limit here: small, so the limit itself can be uploaded. */
const MAX_UPLOAD = 1_000_000;

let env: Emulators;
let deps: ApiDeps;
let served: ServedApi | undefined;
let api: string;
/** The version the pipeline filed the diskperf sample under. */
let reduxVersion: string;
const sequencer = sequencerGenerator(0x3000000000000n);
const uid = () => randomUUID().slice(0, 8);
/** A table name no emulator has: every read fails inside the SDK. */
const MISSING_TABLE = `benchdrop-missing-${uid()}`;

async function ingest(key: string, body: Uint8Array, options: PutOptions = {}): Promise<string> {
  const put = await env.put(key, body, options);
  const event = s3EventRecord({
    eventName: 'ObjectCreated:Put',
    bucket: env.bucket,
    key,
    size: put.size,
    eTag: put.eTag,
    sequencer: sequencer(),
  });
  const response = (await ingestHandler(sqsEvent([event]), lambdaContext())) as SQSBatchResponse;
  expect(response).toEqual({ batchItemFailures: [] });
  return objectRefOf(event).version;
}

beforeAll(async () => {
  env = await startEmulators({ maxUploadBytes: MAX_UPLOAD });
  setIngestDeps(env.deps);
  deps = env.apiDeps;
  setApiDeps(deps);
  // Something in every kind of item: uploads, objects, runs, series, chunks, devices.
  reduxVersion = await ingest('irix-indy-scsi2sd-redux.diskperf.txt', REDUX);
  await ingest('x4100/solaris-10-x4100-sas-maxcontig.iostat.txt', X4100, {
    metadata: { tags: 'interface=SAS;rpm=10000' },
  });
  served = await serveApi();
  api = served.url;
}, 60_000);

afterAll(async () => {
  setApiDeps(undefined);
  setIngestDeps(undefined);
  await served?.close();
  await env?.stop();
});

/** With the API reading through other deps for the length of `fn`. */
async function withDeps<T>(changed: Partial<ApiDeps>, fn: () => Promise<T>): Promise<T> {
  setApiDeps({ ...deps, ...changed });
  try {
    return await fn();
  } finally {
    setApiDeps(deps);
  }
}

// ---------------------------------------------------------------- requests

interface Req {
  method: string;
  /** Sent exactly as written: no URL normalisation. */
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request with node:http, so paths like /../x reach the server as written. */
function send(req: Req): Promise<Res> {
  const url = new URL(api);
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: { ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}), ...req.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

const get = (path: string, query: Record<string, string> = {}): Req => ({
  method: 'GET',
  path: `${path}${Object.keys(query).length > 0 ? `?${new URLSearchParams(query)}` : ''}`,
});
const post = (body: unknown): Req => ({
  method: 'POST',
  path: '/uploads',
  body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
});

/** The request as text, so a name the caller sent may be echoed back (it is theirs, not ours). */
function requestText(req: Req): string {
  let path = req.path;
  try {
    path = decodeURIComponent(req.path.replace(/\+/g, ' '));
  } catch {
    // not percent-decodable: compared as sent
  }
  return `${req.method} ${path} ${req.path} ${req.body === undefined ? '' : req.body.toString()}`;
}

/** What no answer may contain (unless the request itself holds it). */
function leakPatterns(): [string, RegExp | string][] {
  return [
    [
      'a stack frame',
      /\n\s*at\s|\bat\s+(?:async\s+)?[\w.$<>]+\s+\(|\(?(?:file:\/\/|node:)?\/?[\w./@-]+\.(?:ts|js|mjs|cjs):\d+:\d+/,
    ],
    ['a file path', /(?:^|[\s"'(=])\/(?:[\w.@-]+\/)+[\w.@-]+\.(?:ts|js|mjs|cjs|json)\b/],
    ['node_modules', 'node_modules'],
    ['the repository path', ROOT],
    ['the temp directory', tmpdir()],
    ['an error class name', /\b[A-Z][A-Za-z]*(?:Exception|Error)\b/],
    [
      'SDK or library internals',
      /\$metadata|\$fault|httpStatusCode|smithy|aws-sdk|@aws-|dynalite|s3rver|middy|powertools/i,
    ],
    ['the table name', env.tableName],
    ['the missing table name', MISSING_TABLE],
    ['the bucket name', env.bucket],
    ['the DynamoDB endpoint', new URL(env.dynamodbEndpoint).host],
    ['the S3 endpoint', new URL(env.s3Endpoint).host],
    ['an index or key attribute', /\b(?:gsi[12]p?[ks]|byDevice|byStatus)\b/],
    ['an environment variable', /BENCHDROP_[A-Z_]+|AWS_[A-Z_]+/],
    ['a key prefix', /\b(?:UPLOAD|OBJECT|RUN|DEVICE|STATUS|SERIES|CHUNK|VERSION)#|\bDEVICES\b/],
  ];
}

/** The leaks in an answer: patterns it matches that the request does not. */
function leaksIn(res: Res, req: Req): string[] {
  const asked = requestText(req);
  const found: string[] = [];
  for (const [name, pattern] of leakPatterns()) {
    const hit = (text: string) => (typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text));
    if (hit(res.text) && !hit(asked)) found.push(`${name}: ${res.text.slice(0, 300)}`);
  }
  return found;
}

/** Checks one refused request: status, the contract's shape, no leak; returns the body. */
function checkRefusal(res: Res, req: Req, status: number): ApiError {
  const label = `${req.method} ${req.path.slice(0, 120)} ${req.body?.toString().slice(0, 80) ?? ''}`;
  expect(res.status, label).toBe(status);
  expect(res.headers['content-type'], label).toBe('application/json');
  expect(res.headers['x-powered-by'], label).toBeUndefined();
  expect(leaksIn(res, req), label).toEqual([]);
  const body = JSON.parse(res.text) as ApiError;
  expect(Object.keys(body), label).toEqual(['error']);
  expect(typeof body.error.code, label).toBe('string');
  expect(typeof body.error.message, label).toBe('string');
  // Messages are for people: bounded, one line.
  expect(body.error.message.length, label).toBeLessThanOrEqual(1500);
  expect(body.error.message, label).not.toContain('\n');
  if (status === 500) {
    expect(body.error.requestId, label).toMatch(/^[\w=+/-]{1,64}$/);
    expect(body, label).toEqual({
      error: {
        code: 'internal',
        message: `internal error (request id ${body.error.requestId})`,
        requestId: body.error.requestId,
      },
    });
  } else {
    expect(body.error.requestId, label).toBeUndefined();
  }
  return body;
}

// ---------------------------------------------------------------- errors

const VALID_RUN = () => runId(env.bucket, 'irix-indy-scsi2sd-redux.diskperf.txt', reduxVersion, 0);

/** Selector texts that are refused, each with what the message starts with. */
const BAD_SELECTORS: string[] = [
  '',
  ' ',
  ',',
  'x,,y',
  'colour=red',
  'device=',
  'device=a=b',
  'run=42',
  `run=r${'0'.repeat(23)}`,
  'format=zfs',
  'format=diskperf;drop',
  'host~x',
  'context~',
  'tag.=x',
  'tag.k=',
  'tag.k=v v',
  `tag.${'k'.repeat(65)}=v`,
  'x'.repeat(MAX_PATTERN_LENGTH + 1),
  'x'.repeat(MAX_SELECTOR_LENGTH + 1),
  'x,'.repeat(11) + 'x',
  '\u0000',
  'a\u0007b',
  'a\u007fb',
  '{"$ne":null}',
];

describe('API errors reveal nothing internal', () => {
  it("the leak check finds each kind of leak it looks for (and not the caller's own words)", () => {
    const req = get('/devices');
    const leaky = [
      `Error: boom\n    at listDevices (${ROOT}/shared/store/read.ts:120:11)`,
      'at async Promise.all (index 0)',
      'see /var/task/index.mjs',
      'ResourceNotFoundException: Requested resource not found',
      'CredentialsProviderError',
      `table ${env.tableName}`,
      `bucket ${env.bucket}`,
      `connect ECONNREFUSED ${new URL(env.dynamodbEndpoint).host}`,
      '{"$metadata":{"httpStatusCode":400}}',
      'query on byDevice failed',
      'BENCHDROP_TABLE is not set',
      `no item ${runPk('r1')}`,
    ];
    for (const text of leaky) expect(leaksIn({ status: 500, headers: {}, text }, req), text).not.toEqual([]);
    // What the caller sent may come back: it is theirs.
    expect(
      leaksIn(
        { status: 400, headers: {}, text: 'a: "RUN#x": not a device or host pattern' },
        get('/compare', { a: 'RUN#x' }),
      ),
    ).toEqual([]);
    expect(leaksIn({ status: 400, headers: {}, text: 'internal error (request id 1b2c)' }, req)).toEqual([]);
  });

  it('unknown routes and methods are a 404 (or 400 for a bad run id), without internals', async () => {
    const cases: [Req, number][] = [
      [get('/nope'), 404],
      [{ method: 'DELETE', path: '/devices' }, 404],
      [{ method: 'PUT', path: '/uploads' }, 404],
      [{ method: 'PATCH', path: '/compare' }, 404],
      [{ method: 'POST', path: '/devices', body: '{}' }, 404],
      [{ method: 'OPTIONS', path: '/devices' }, 404],
      [get('/runs/a/b'), 404],
      [get('/../../../etc/passwd'), 404],
      [get('/%2e%2e/%2e%2e/etc/passwd'), 404],
      [get(`/${'x'.repeat(8000)}`), 404],
      [get('/runs/%00'), 400],
      [get('/runs/..%2f..%2fdevices'), 400],
      [get(`/runs/${VALID_RUN()}${encodeURIComponent(KEY_SEPARATOR)}`), 400],
      [get(`/runs/${encodeURIComponent(runPk(VALID_RUN()))}`), 400],
      [get(`/runs/${'r'.repeat(5000)}`), 400],
      [get('/runs/%ZZ'), 400],
    ];
    for (const [req, status] of cases) checkRefusal(await send(req), req, status);
    expect(cases).toHaveLength(16);
  });

  it('bad query parameters, huge and repeated ones, are a 400 naming the parameter', async () => {
    const cases: Req[] = [
      ...BAD_SELECTORS.map((a) => get('/compare', { a, b: 'scsi2sd_redux' })),
      ...BAD_SELECTORS.map((b) => get('/compare', { a: 'scsi2sd_redux', b })),
      get('/compare', { a: 'scsi2sd_redux' }),
      get('/compare', { a: 'scsi2sd_redux', b: 'x4100/*', metric: 'bogus' }),
      get('/compare', { a: 'scsi2sd_redux', b: 'x4100/*', metric: 'm'.repeat(5000) }),
      get('/compare', { a: 'a'.repeat(8000), b: 'x' }),
      get('/compare', { a: 'no-such-device', b: 'scsi2sd_redux' }),
      get(`/compare?${Array.from({ length: 300 }, (_, i) => `p${i}=${i}`).join('&')}`),
      get(`/compare?a=scsi2sd_redux&b=${'%2C'.repeat(20)}`),
      get(`/runs?${'device=x&'.repeat(200)}`),
      get('/runs', { format: 'zfs' }),
      get('/runs', { limit: '0' }),
      get('/runs', { limit: '-1' }),
      get('/runs', { limit: '1e309' }),
      get('/runs', { limit: '5.5' }),
      get('/runs', { limit: '9'.repeat(400) }),
      get('/runs', { device: 'x'.repeat(MAX_PATTERN_LENGTH + 1) }),
      get('/runs', { devices: 'x' }),
      get('/uploads', { status: 'lost' }),
      get('/uploads', { status: 'failed#' }),
      get('/uploads', { limit: String(MAX_PAGE + 1) }),
      get('/devices', { next: 'not-a-cursor' }),
    ];
    for (const req of cases) {
      const body = checkRefusal(await send(req), req, 400);
      expect(body.error.code).toBe('bad_request');
      expect(body.error.message, req.path.slice(0, 100)).toMatch(
        /^(?:[A-Za-z][\w.-]*(?:, [\w.-]+)*(?: and \d+ more)?: |A \(|B \()/,
      );
    }
    expect(cases).toHaveLength(BAD_SELECTORS.length * 2 + 20);
  });

  it('malformed, oversized and hostile POST /uploads bodies are a 400 (413 over the local 1 MiB cap)', async () => {
    const nested = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const cases: [Req, number][] = [
      ...[
        '',
        '{',
        '}',
        '[]',
        '[1,2]',
        '"key"',
        'null',
        'true',
        '1',
        '{"key":"a","size":1',
        "{'key':'a'}",
        '{"key":"a","size":1}}',
        nested,
      ].map((body) => [post(body), 400] as [Req, number]),
      [post(Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0x81])), 400],
      [post(Buffer.from('\ufeff{"key":"a.txt","size":1}', 'utf16le')), 400],
      [post({ key: 1, size: 1 }), 400],
      [post({ key: 'a.txt', size: '1' }), 400],
      [post('{"key":"a.txt","size":1e400}'), 400],
      [post({ key: 'a.txt', size: 1.5 }), 400],
      [post({ key: 'a.txt', size: -1 }), 400],
      [post({ key: 'a.txt', size: 1e21 }), 400],
      [post({ key: 'a.txt', size: MAX_UPLOAD + 1 }), 400],
      [post({ key: 'a.txt', size: 1, bucket: 'another-bucket' }), 400],
      [post({ key: 'a.txt', size: 1, Bucket: 'another-bucket' }), 400],
      [post('{"key":"a.txt","size":1,"__proto__":{"polluted":true}}'), 400],
      [post({ key: 'a.txt', size: 1, constructor: { prototype: { polluted: true } } }), 400],
      [
        post({ key: 'a.txt', size: 1, tags: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, 'v'])) }),
        400,
      ],
      [post({ key: 'a.txt', size: 1, tags: { k: { nested: 'x' } } }), 400],
      [post({ key: 'k'.repeat(900_000), size: 1 }), 400],
      [
        { ...post({ key: 'a.txt', size: 1, device: 'x'.repeat(2000) }), headers: { 'content-type': 'text/plain' } },
        400,
      ],
      [post({ key: 'k'.repeat(1_100_000), size: 1 }), 413],
    ];
    for (const [req, status] of cases) checkRefusal(await send(req), req, status);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(cases).toHaveLength(31);
  });

  it('forced internal failures (a missing table, credentials that cannot be loaded) are a 500 with only a request id, which the log line carries with the details', async () => {
    const logged = vi.spyOn(apiLogger, 'error');
    try {
      const reads: Req[] = [
        get('/devices'),
        get('/runs'),
        get('/runs', { device: 'scsi2sd_redux' }),
        get('/runs', { device: 'x4100/*' }),
        get(`/runs/${VALID_RUN()}`),
        get('/compare', { a: 'scsi2sd_redux', b: 'x4100/c0t0d0' }),
        get('/compare', { a: 'tag.interface=SAS', b: 'format=diskperf' }),
        get('/uploads'),
        get('/uploads', { status: 'failed', limit: '5' }),
      ];
      const ids: string[] = [];
      await withDeps({ tableName: MISSING_TABLE }, async () => {
        for (const req of reads) ids.push(checkRefusal(await send(req), req, 500).error.requestId!);
      });
      // The role's credentials unavailable: presigning fails inside the SDK.
      const noCredentials = createS3Client({ region: REGION, s3Endpoint: env.s3Endpoint });
      noCredentials.config.credentials = () =>
        Promise.reject(
          Object.assign(new Error(`Could not load credentials from any providers for ${env.bucket}`), {
            name: 'CredentialsProviderError',
          }),
        );
      try {
        await withDeps({ s3: noCredentials }, async () => {
          const req = post({ key: 'a.txt', size: 10 });
          ids.push(checkRefusal(await send(req), req, 500).error.requestId!);
        });
      } finally {
        noCredentials.destroy();
      }
      expect(new Set(ids).size).toBe(reads.length + 1);
      // Each 500 is one log line with the same request id and the real error.
      const lines = logged.mock.calls.filter(([message]) => message === 'request failed');
      expect(lines.map(([, details]) => (details as { requestId: string }).requestId)).toEqual(ids);
      for (const [, details] of lines) expect((details as { error: unknown }).error).toBeInstanceOf(Error);
      expect(String((lines.at(-1)![1] as { error: Error }).error.message)).toContain('Could not load credentials');
    } finally {
      logged.mockRestore();
    }
  });
});

// ---------------------------------------------------------------- key spaces

/** Every kind of key the table holds, built by shared/store/keys.ts: each uses the separator. */
const KEY_KINDS = () => [
  uploadPk(env.bucket, 'k'),
  uploadSk('v'),
  objectPk(env.bucket, 'k'),
  runPk(VALID_RUN()),
  seriesSk('sda'),
  devicePk('scsi2sd_redux'),
  statusPk('failed'),
];

/** Label-like values that must never become part of a key: separators, key prefixes, control characters, too long. */
const HOSTILE_LABELS = () => [
  KEY_SEPARATOR,
  `x${KEY_SEPARATOR}y`,
  `scsi2sd_redux${KEY_SEPARATOR}`,
  `${KEY_SEPARATOR}scsi2sd_redux`,
  ...KEY_KINDS(),
  `${DEVICES_PK}${KEY_SEPARATOR}`,
  `x4100/${KEY_SEPARATOR}*`,
  `*${KEY_SEPARATOR}*`,
  'a\u0000b',
  'a\u001fb',
  'a\u007fb',
  'x'.repeat(MAX_PATTERN_LENGTH + 1),
  'é'.repeat(MAX_PATTERN_LENGTH + 1),
];

describe('labels and selectors cannot reach other key spaces', () => {
  it('every key kind is separated by KEY_SEPARATOR, which no label may hold', () => {
    for (const key of KEY_KINDS()) expect(key).toContain(KEY_SEPARATOR);
  });

  /** Refused selectors, GET /runs devices and POST /uploads labels and tags. */
  const hostileRequests = (): [Req, RegExp][] => {
    const out: [Req, RegExp][] = [];
    for (const v of HOSTILE_LABELS()) {
      for (const term of [
        v,
        `device=${v}`,
        `host=${v}`,
        `tag.${v}=x`,
        `tag.k=${v}`,
        `run=${v}`,
        `scsi2sd_redux,device=${v}`,
      ]) {
        out.push([get('/compare', { a: term, b: 'scsi2sd_redux' }), /^a: /]);
        out.push([get('/compare', { a: 'scsi2sd_redux', b: term }), /^b: /]);
      }
      out.push([get('/runs', { device: v }), /^device: /]);
      out.push([post({ key: 'a.txt', size: 1, device: v }), /^device: /]);
      out.push([post({ key: 'a.txt', size: 1, tags: { [v]: 'x' } }), /^tags: /]);
      out.push([post({ key: 'a.txt', size: 1, tags: { k: v } }), /^tags: /]);
    }
    return out;
  };

  it('a label or selector holding the key separator, a key prefix, control characters or too many characters is a 400, decided before any read', async () => {
    const cases = hostileRequests();
    for (const [req, message] of cases) {
      const body = checkRefusal(await send(req), req, 400);
      expect(body.error.message, requestText(req).slice(0, 200)).toMatch(message);
    }
    // The same answers with the table gone: nothing was read to refuse them.
    await withDeps({ tableName: MISSING_TABLE }, async () => {
      for (const [req, message] of cases)
        expect(checkRefusal(await send(req), req, 400).error.message).toMatch(message);
    });
    expect(cases.length).toBe(HOSTILE_LABELS().length * 18);
  });

  it('names that merely look like key prefixes are ordinary labels in the device key space', async () => {
    for (const name of ['DEVICES', 'RUN', 'UPLOAD', 'DEVICE', 'STATUS']) {
      const runs = await send(get('/runs', { device: name }));
      expect(runs.status).toBe(200);
      expect((JSON.parse(runs.text) as { runs: RunListing[] }).runs).toEqual([]);
      const compare = await send(get('/compare', { a: name, b: 'scsi2sd_redux' }));
      expect(JSON.parse(compare.text)).toEqual({
        error: { code: 'bad_request', message: expect.stringMatching(new RegExp(`^A \\(${name}\\) matches no run`)) },
      });
    }
    // A pattern matching everything reaches device labels only, never uploads, objects or runs.
    const all = JSON.parse((await send(get('/runs', { device: '*', limit: '500' }))).text) as { runs: RunListing[] };
    // (Each run once: the iostat upload's runs under its label.)
    expect(new Set(all.runs.map((r) => r.device))).toEqual(new Set(['scsi2sd_redux', 'x4100']));
    // context~TEXT may hold the separator: it filters context lines in memory and is never a key.
    const context = await send(get('/compare', { a: `context~${KEY_SEPARATOR} tunefs`, b: 'scsi2sd_redux' }));
    expect(JSON.parse(context.text).error.message).toMatch(/^A \(context~# tunefs\) matches no run/);
  });

  it('ingest refuses a label holding the separator, from metadata or from the key, with a reason, and indexes nothing', async () => {
    const fromMetadata = `hostile-${uid()}/redux.txt`;
    const fromFolder = `disk${KEY_SEPARATOR}${uid()}/redux.txt`;
    await ingest(fromMetadata, REDUX, { metadata: { device: runPk(VALID_RUN()) } });
    await ingest(fromFolder, REDUX);
    const failed = JSON.parse((await send(get('/uploads', { status: 'failed' }))).text) as { uploads: UploadListing[] };
    for (const key of [fromMetadata, fromFolder]) {
      expect(
        failed.uploads.find((u) => u.key === key),
        key,
      ).toMatchObject({
        status: 'failed',
        runCount: 0,
        message: expect.stringMatching(/contains "#", which benchdrop keeps for its table keys/),
      });
    }
    const devices = JSON.parse((await send(get('/devices'))).text) as { devices: DeviceEntry[] };
    expect(devices.devices.map((d) => d.label).filter((l) => l.includes(KEY_SEPARATOR))).toEqual([]);
  });
});

// ---------------------------------------------------------------- presigned PUTs

describe('presigned PUTs', () => {
  const presign = async (body: Record<string, unknown>) => {
    const res = await send(post(body));
    expect(res.status, res.text).toBe(200);
    return JSON.parse(res.text) as PresignedUpload;
  };
  /** The PUT a client sends with the answer: its headers, and the length of the body it sends. */
  const put = (answer: PresignedUpload, bodyLength: number, change: Partial<SentRequest> = {}): SentRequest => ({
    method: 'PUT',
    url: answer.url,
    headers: { ...answer.headers, 'content-length': String(bodyLength) },
    ...change,
  });
  const verify = (request: SentRequest, now?: Date) =>
    verifyPresignedRequest(request, S3RVER_CREDENTIALS.secretAccessKey, now);

  it("are signed for the lab's bucket, the key asked for, 15 minutes and exactly the declared size", async () => {
    const key = `limits-${uid()}/disk one (1).txt`;
    const answer = await presign({ key, size: REDUX.length, device: 'indy', tags: { bus: 'scsi' } });
    const url = new URL(answer.url);
    expect(`${url.protocol}//${url.host}`).toBe(env.s3Endpoint);
    expect(decodeURIComponent(url.pathname)).toBe(`/${env.bucket}/${key}`);
    expect(answer).toMatchObject({ bucket: env.bucket, key, expiresIn: UPLOAD_URL_SECONDS, method: 'PUT' });
    expect(UPLOAD_URL_SECONDS).toBeLessThanOrEqual(15 * 60);
    expect(url.searchParams.get('X-Amz-Expires')).toBe(String(UPLOAD_URL_SECONDS));
    expect(url.searchParams.get('X-Amz-SignedHeaders')!.split(';')).toEqual([
      'content-length',
      'host',
      'x-amz-meta-device',
      'x-amz-meta-tags',
    ]);
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(
      new RegExp(`^${S3RVER_CREDENTIALS.accessKeyId}/\\d{8}/${REGION}/s3/aws4_request$`),
    );
    expect(answer.headers['content-length']).toBe(String(REDUX.length));

    // What S3 would say (the verifier checks the URL's signature against the request sent).
    const exact = put(answer, REDUX.length);
    expect(verify(exact)).toEqual({ ok: true });
    const other = (path: string) => answer.url.replace(url.pathname, path);
    const refused: [string, SentRequest, Date?][] = [
      ['one byte more', put(answer, REDUX.length + 1)],
      ['one byte less', put(answer, REDUX.length - 1)],
      ['ten times as much', put(answer, REDUX.length * 10)],
      ['another key', put(answer, REDUX.length, { url: other(`/${env.bucket}/limits-other/x.txt`) })],
      ['a key under the one asked for', put(answer, REDUX.length, { url: other(`${url.pathname}/more`) })],
      ['another bucket', put(answer, REDUX.length, { url: other(url.pathname.replace(env.bucket, 'another-bucket')) })],
      ['a GET', put(answer, REDUX.length, { method: 'GET' })],
      ['a DELETE', put(answer, REDUX.length, { method: 'DELETE' })],
      ['another device', { ...exact, headers: { ...exact.headers, 'x-amz-meta-device': 'someone-else' } }],
      [
        'without the tags',
        {
          ...exact,
          headers: Object.fromEntries(Object.entries(exact.headers).filter(([n]) => n !== 'x-amz-meta-tags')),
        },
      ],
      [
        'a longer expiry',
        { ...exact, url: answer.url.replace(`X-Amz-Expires=${UPLOAD_URL_SECONDS}`, 'X-Amz-Expires=604800') },
      ],
      ['after 15 minutes', exact, new Date(Date.now() + (UPLOAD_URL_SECONDS + 5) * 1000)],
    ];
    for (const [what, request, now] of refused) expect(verify(request, now), what).toMatchObject({ ok: false });

    // s3rver stores the exact upload ...
    const stored = await fetch(answer.url, { method: 'PUT', headers: answer.headers, body: REDUX });
    expect(stored.status).toBe(200);
    await stored.arrayBuffer();
    const head = await env.s3.send(new HeadObjectCommand({ Bucket: env.bucket, Key: key }));
    expect(head.ContentLength).toBe(REDUX.length);
    // ... and, checking no V4 signature, a bigger one too: on s3rver only the verifier above stands for S3.
    const bigger = Buffer.concat([REDUX, Buffer.from('x')]);
    const unchecked = await fetch(answer.url, {
      method: 'PUT',
      headers: { ...answer.headers, 'content-length': String(bigger.length) },
      body: bigger,
    });
    expect(unchecked.status).toBe(200);
    await unchecked.arrayBuffer();
  });

  it('expire after 15 minutes: s3rver checks that much', async () => {
    const signedAgo = async (seconds: number, key: string) => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() - seconds * 1000);
      try {
        const result = await createUpload({ body: { key, size: 3 } } as unknown as ApiEvent, deps);
        return JSON.parse(result.body!) as PresignedUpload;
      } finally {
        vi.useRealTimers();
      }
    };
    const fresh = await signedAgo(UPLOAD_URL_SECONDS - 30, `expiry-${uid()}.txt`);
    const stale = await signedAgo(UPLOAD_URL_SECONDS + 5, `expiry-${uid()}.txt`);
    const ok = await fetch(fresh.url, { method: 'PUT', headers: fresh.headers, body: 'abc' });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    const expired = await fetch(stale.url, { method: 'PUT', headers: stale.headers, body: 'abc' });
    expect(expired.status).toBe(403);
    expect(await expired.text()).toMatch(/<Code>AccessDenied<\/Code>[\s\S]*Request has expired/);
    expect(verify(put(stale, 3))).toEqual({ ok: false, reason: 'Request has expired' });
  });

  it("are refused for sizes over the lab's limit and keys that would land elsewhere", async () => {
    expect((await presign({ key: `limit-${uid()}.txt`, size: MAX_UPLOAD })).headers['content-length']).toBe(
      String(MAX_UPLOAD),
    );
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { key: 'big.txt', size: MAX_UPLOAD + 1 },
        new RegExp(`^size: ${MAX_UPLOAD + 1} bytes is more than this lab's limit of ${MAX_UPLOAD} bytes$`),
      ],
      [{ key: 'big.txt', size: Number.MAX_SAFE_INTEGER }, /^size: \d+ bytes is more than this lab's limit/],
      [{ key: 'no-size.txt' }, /^size: required/],
      [{ key: '/absolute.txt', size: 1 }, /^key: no leading \//],
      [{ key: '../another-bucket/x.txt', size: 1 }, /^key: no \. or \.\. path segments/],
      [{ key: 'a/../../another-bucket/x.txt', size: 1 }, /^key: no \. or \.\. path segments/],
      [{ key: 'a/./b.txt', size: 1 }, /^key: no \. or \.\. path segments/],
      [{ key: 'a/..', size: 1 }, /^key: no \. or \.\. path segments/],
      [{ key: '..', size: 1 }, /^key: no \. or \.\. path segments/],
      [{ key: 'a\u0000b.txt', size: 1 }, /^key: no control characters/],
      [{ key: 'a\nb.txt', size: 1 }, /^key: no control characters/],
      [{ key: 'é'.repeat(513), size: 1 }, /^key: at most 1024 bytes/],
      [{ key: 'a.txt', size: 1, bucket: 'another-bucket' }, /^bucket: unknown field/],
    ];
    for (const [body, message] of cases) {
      const req = post(body);
      expect(checkRefusal(await send(req), req, 400).error.message, JSON.stringify(body).slice(0, 100)).toMatch(
        message,
      );
    }
    // Dots inside names are fine, and so are 1024 bytes of UTF-8.
    await presign({ key: `dots-${uid()}/.hidden/..name/run..1.txt`, size: 1 });
    await presign({ key: 'é'.repeat(512), size: 1 });
  });

  it('ingest refuses an object over the limit even when the store let it in (the second line of defence)', async () => {
    const key = `oversized-${uid()}.txt`;
    const answer = await presign({ key, size: MAX_UPLOAD });
    const body = Buffer.alloc(MAX_UPLOAD + 1, 0x41);
    // s3rver does not check the signed length; S3 would refuse this PUT (verifier: SignatureDoesNotMatch).
    expect(verify(put(answer, body.length))).toEqual({ ok: false, reason: 'SignatureDoesNotMatch' });
    const stored = await fetch(answer.url, {
      method: 'PUT',
      headers: { ...answer.headers, 'content-length': String(body.length) },
      body,
    });
    expect(stored.status).toBe(200);
    await stored.arrayBuffer();
    const head = await env.s3.send(new HeadObjectCommand({ Bucket: env.bucket, Key: key }));
    const event = s3EventRecord({
      eventName: 'ObjectCreated:Put',
      bucket: env.bucket,
      key,
      size: head.ContentLength!,
      eTag: head.ETag!.replace(/"/g, ''),
      sequencer: sequencer(),
    });
    expect(await ingestHandler(sqsEvent([event]), lambdaContext())).toEqual({ batchItemFailures: [] });
    const failed = JSON.parse((await send(get('/uploads', { status: 'failed' }))).text) as { uploads: UploadListing[] };
    const record = failed.uploads.find((u) => u.key === key);
    // The short message says the size, the limit and what to do; the listing names the key, the message never does.
    const sizeMessage = `${MAX_UPLOAD + 1} bytes, more than this lab's limit of ${MAX_UPLOAD} bytes; split the log into smaller files, or raise the lab's maxUploadMB`;
    expect(record).toMatchObject({
      status: 'failed',
      key,
      line: 0,
      runCount: 0,
      message: sizeMessage,
      details: sizeMessage,
    });
    expect(record!.message).not.toContain(key);
    expect(Array.from(record!.message!).length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
  });
});
