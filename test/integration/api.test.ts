/**
 * The API Lambda handler against real emulators: the sample logs are uploaded to
 * s3rver and ingested by the real ingest handler (SQS-wrapped S3 events), then
 * the API handler (functions/api/handler.ts, the one deployed) answers real-shaped
 * API Gateway HTTP API events (payload format 2.0). Reads are counted by wrapping
 * the DynamoDB client's send; nothing else is mocked.
 */
import { serveApi, type ServedApi } from '../../harness/api-server.ts';
import '../../harness/quiet.ts';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSBatchResponse } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_AGE_MS, SETTLE_MS } from '../../shared/compare/kept-answers.ts';
import { handler as apiHandler, setApiDeps, type ApiDeps } from '../../functions/api/handler.ts';
import { handler as ingestHandler, setIngestDeps } from '../../functions/ingest/handler.ts';
import { s3EventRecord, sequencerGenerator, sqsEvent } from '../../infra/local/events.ts';
import { createLocalTable } from '../../infra/local/table.ts';
import {
  MAX_PAGE,
  ROUTES,
  type DeviceEntry,
  type PresignedUpload,
  type RunDetail,
  type RunListing,
  type UploadListing,
} from '../../shared/api.ts';
import { comparisonTable, tableCsv, tableMarkdown, type Comparison, type Observation } from '../../shared/compare.ts';
import { objectRefOf, type IngestDeps } from '../../shared/ingest.ts';
import { BatchWriter } from '../../shared/store/batch.ts';
import { encodeCursor } from '../../shared/store/cursors.ts';
import { devicePk, deviceSk, runId, runPk, seriesSk, tagKey } from '../../shared/store/keys.ts';
import { MAX_LABELS } from '../../shared/store/session.ts';
import { MAX_OBSERVATIONS, resolveSelector } from '../../shared/compare/selection.ts';
import { deviceItem, uploadRecord } from '../../shared/store/items.ts';
import { exactPattern, MAX_PATTERN_LENGTH, parseSelector } from '../../shared/selectors.ts';
import { createTableInput, INDEXES } from '../../shared/store/table.ts';
import { startEmulators, type Emulators, type PutOptions } from '../../harness/emulators.ts';
import { fixture, FIXTURES_DIR } from '../support/fixtures.ts';
import { lambdaContext } from '../../harness/lambda.ts';
import { solarisIostatLog, writeIops } from '../../harness/logs.ts';

const REDUX = fixture('irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt');
const INDY_300G = fixture('irix/irix-6.5-indy-300G-10K.diskperf.txt');
const SYNC_10M = fixture('irix/irix-6.5-indy-scsi2sd-10M-sync.diskperf.txt');
const X4100 = fixture('solaris/solaris-10-x4100-sas-maxcontig.iostat.txt');
const SOLARIS_XN = fixture('solaris/solaris-10-xn.iostat.txt');
const LINUX = fixture('linux/linux-sysstat-12.7.5-x.txt');
const PROSE = fixture('bad/prose-only.txt');
const X4100_CONTEXTS = (
  JSON.parse(
    readFileSync(join(FIXTURES_DIR, 'solaris/solaris-10-x4100-sas-maxcontig.iostat.expected.json'), 'utf8'),
  ) as { runs: { context: string[] }[] }
).runs.map((r) => r.context);
const X4100_NATIVES = ['d10', 'd11', 'd12', 'c0t0d0', 'c0t1d0'];

let env: Emulators;
let ingestDeps: IngestDeps;
let deps: ApiDeps;
const sequencer = sequencerGenerator(0x2000000000000n);
const uid = () => randomUUID().slice(0, 8);
/** Keys of the sample uploads and the versions the pipeline filed them under. */
const uploaded = new Map<string, string>();

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
  const version = objectRefOf(event).version;
  uploaded.set(key, version);
  return version;
}

const idsOf = (key: string, count: number) =>
  Array.from({ length: count }, (_, i) => runId(env.bucket, key, uploaded.get(key)!, i));

beforeAll(async () => {
  env = await startEmulators({ maxUploadBytes: 10_000_000 });
  ingestDeps = env.deps;
  setIngestDeps(ingestDeps);
  deps = env.apiDeps;
  setApiDeps(deps);
  // No folder: diskperf runs are labelled by their test name (-n).
  await ingest('irix-indy-scsi2sd-redux.diskperf.txt', REDUX);
  await ingest('irix-indy-scsi2sd-10M-sync.diskperf.txt', SYNC_10M);
  await ingest('irix-indy-300G-10K.diskperf.txt', INDY_300G);
  // The first folder labels every series: x4100/c0t0d0 ...
  await ingest('x4100/solaris-10-x4100-sas-maxcontig.iostat.txt', X4100);
  await ingest('fedora/linux-sysstat-12.7.5-x.txt', LINUX, {
    metadata: { device: 'fedora-ws', tags: 'bus=nvme;medium=ssd' },
  });
  await ingest('garbage/prose-only.txt', PROSE);
}, 30_000);

afterAll(async () => {
  setApiDeps(undefined);
  setIngestDeps(undefined);
  await env?.stop();
});

// ---------------------------------------------------------------- API Gateway v2 events

interface Call {
  query?: Record<string, string>;
  body?: unknown;
  /** The body exactly as sent (overrides body). */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** The route key API Gateway matched for a request, and its path parameters. */
function matchRoute(method: string, path: string): { routeKey: string; params?: Record<string, string> } {
  for (const routeKey of Object.values(ROUTES)) {
    const [m, pattern] = routeKey.split(' ') as [string, string];
    if (m !== method) continue;
    const names: string[] = [];
    const re = new RegExp(`^${pattern.replace(/\{(\w+)\}/g, (_, name: string) => (names.push(name), '([^/]+)'))}$`);
    const match = re.exec(path);
    if (match)
      return names.length > 0
        ? { routeKey, params: Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(match[i + 1]!)])) }
        : { routeKey };
  }
  return { routeKey: '$default' };
}

/** An API Gateway HTTP API (payload format 2.0) event, as the service builds it. */
function apiEvent(method: string, path: string, call: Call = {}): APIGatewayProxyEventV2 {
  const rawQueryString = new URLSearchParams(call.query ?? {}).toString();
  const body = call.rawBody ?? (call.body !== undefined ? JSON.stringify(call.body) : undefined);
  const headers: Record<string, string> = {
    accept: 'application/json',
    host: 'abcdef1234.execute-api.us-east-1.amazonaws.com',
    'user-agent': 'benchdrop-test/1.0',
    'x-amzn-trace-id': `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    'x-forwarded-for': '203.0.113.7',
    'x-forwarded-port': '443',
    'x-forwarded-proto': 'https',
    ...(body !== undefined
      ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }
      : {}),
    ...call.headers,
  };
  const { routeKey, params } = matchRoute(method, path);
  const now = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString,
    headers,
    ...(call.query && Object.keys(call.query).length > 0 ? { queryStringParameters: { ...call.query } } : {}),
    ...(params ? { pathParameters: params } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'abcdef1234',
      domainName: 'abcdef1234.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'abcdef1234',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'benchdrop-test/1.0' },
      requestId: `${randomUUID().slice(0, 8)}=`,
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body !== undefined ? { body } : {}),
    isBase64Encoded: false,
  };
}

interface Answer<T> {
  status: number;
  headers: Record<string, unknown>;
  text: string;
  body: T;
}

async function call<T = unknown>(method: string, path: string, c: Call = {}): Promise<Answer<T>> {
  const result = (await apiHandler(
    apiEvent(method, path, c),
    lambdaContext('benchdrop-api'),
  )) as APIGatewayProxyStructuredResultV2;
  const text = result.body ?? '';
  return { status: result.statusCode ?? 0, headers: result.headers ?? {}, text, body: JSON.parse(text) as T };
}

const get = <T>(path: string, query?: Record<string, string>) => call<T>('GET', path, query ? { query } : {});
type ErrorBody = { error: { code: string; message: string } };

/**
 * A DynamoDB client that counts the read requests it sends (Get, Query, BatchGet,
 * Scan), noting which index each reads, and sums the read units DynamoDB reports
 * for them (ReturnConsumedCapacity TOTAL).
 */
function counting(base: ApiDeps) {
  let reads: string[] = [];
  let units = 0;
  const send = base.db.send.bind(base.db) as (command: unknown, ...rest: unknown[]) => Promise<unknown>;
  const db = new Proxy(base.db, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return async (command: { constructor: { name: string }; input: Record<string, unknown> }, ...rest: unknown[]) => {
        const name = command.constructor.name;
        const isRead = /^(Get|Query|BatchGet|Scan)Command$/.test(name);
        if (!isRead) return send(command, ...rest);
        reads.push(
          `${name.replace(/Command$/, '')}${command.input['IndexName'] ? ` ${String(command.input['IndexName'])}` : ''}`,
        );
        command.input['ReturnConsumedCapacity'] = 'TOTAL';
        const output = (await send(command, ...rest)) as {
          ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[];
        };
        for (const c of [output.ConsumedCapacity ?? []].flat()) units += c.CapacityUnits ?? 0;
        return output;
      };
    },
  });
  /** Read requests since the last take. */
  const take = () => detail().reads.length;
  /** The read requests since the last take (sorted: concurrent reads finish in any order) and their read units. */
  const detail = () => {
    const out = { reads: reads.sort(), units };
    reads = [];
    units = 0;
    return out;
  };
  return { deps: { ...base, db } as ApiDeps, take, detail };
}

// ---------------------------------------------------------------- devices and runs

describe('devices and runs', () => {
  it('GET /devices lists every label with its format, as JSON', async () => {
    const r = await get<{ devices: DeviceEntry[] }>('/devices');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    const labels = r.body.devices.map((d) => d.label);
    expect(labels).toEqual(
      expect.arrayContaining([
        'scsi2sd_redux',
        'scsi2sd_10M_Sync',
        '300G_10K_SGI_Indy',
        ...X4100_NATIVES.map((n) => `x4100/${n}`),
        'fedora-ws/nvme0n1',
        'fedora-ws/sda',
      ]),
    );
    expect(labels.some((l) => l.startsWith('garbage'))).toBe(false);
    expect(r.body.devices.find((d) => d.label === 'scsi2sd_redux')).toEqual({
      label: 'scsi2sd_redux',
      format: 'diskperf',
      lastSeen: expect.stringMatching(/^\d{4}-/),
    });
    expect(r.body.devices.find((d) => d.label === 'x4100/c0t0d0')?.format).toBe('iostat');
  });

  it('GET /runs filters by device pattern and format, label by label and newest first within one; disk labels list a run per disk', async () => {
    const scsi = await get<{ runs: RunListing[] }>('/runs', { device: 'scsi2sd_*' });
    expect(scsi.status).toBe(200);
    expect(scsi.body.runs.map((r) => r.device).sort()).toEqual(['scsi2sd_10M_Sync', 'scsi2sd_redux']);
    const redux = scsi.body.runs.find((r) => r.device === 'scsi2sd_redux')!;
    expect(redux).toEqual({
      runId: idsOf('irix-indy-scsi2sd-redux.diskperf.txt', 1)[0],
      device: 'scsi2sd_redux',
      format: 'diskperf',
      name: 'scsi2sd_redux',
      host: 'IRIS',
      time: '2020-04-03T21:10:13',
      // The header's date, as printed: IRIX gives no zone.
      from: '2020-04-03T21:10:13',
      tags: {},
      context: ['diskperf -W -n scsi2sd_redux -c 1G -t 60 /tmp/testpath'],
      source: {
        bucket: env.bucket,
        key: 'irix-indy-scsi2sd-redux.diskperf.txt',
        version: uploaded.get('irix-indy-scsi2sd-redux.diskperf.txt'),
      },
    });

    const x4100 = await get<{ runs: RunListing[] }>('/runs', { device: 'x4100/*', format: 'iostat' });
    expect(x4100.body.runs).toHaveLength(4 * X4100_NATIVES.length);
    expect(new Set(x4100.body.runs.map((r) => r.runId))).toEqual(
      new Set(idsOf('x4100/solaris-10-x4100-sas-maxcontig.iostat.txt', 4)),
    );
    expect(
      x4100.body.runs.every(
        (r) => r.device.startsWith('x4100/') && r.format === 'iostat' && r.source.key.startsWith('x4100/'),
      ),
    ).toBe(true);
    // A pattern lists label after label (label order: a page goes on from the label it reached), each label's runs newest first.
    const devices = x4100.body.runs.map((r) => r.device);
    expect(devices).toEqual([...devices].sort());
    for (const native of X4100_NATIVES) {
      const times = x4100.body.runs.filter((r) => r.device === `x4100/${native}`).map((r) => r.time);
      expect([...times].sort().reverse()).toEqual(times);
    }

    // The upload's label, named exactly, lists its runs whole: one entry a run, as GET /devices lists the label.
    const whole = await get<{ runs: RunListing[] }>('/runs', { device: 'x4100' });
    expect(whole.body.runs.map((r) => r.runId).sort()).toEqual(
      [...idsOf('x4100/solaris-10-x4100-sas-maxcontig.iostat.txt', 4)].sort(),
    );
    expect(
      whole.body.runs.every(
        (r) => r.device === 'x4100' && r.format === 'iostat' && r.disks === X4100_NATIVES.length && r.reports === 1,
      ),
    ).toBe(true);
    expect(whole.body.runs.map((r) => r.context).sort()).toEqual([...X4100_CONTEXTS].sort());
    // The log prints no host and no times: neither is made up (the ingest time is only the order).
    expect(whole.body.runs.some((r) => r.host !== undefined || r.from !== undefined || r.to !== undefined)).toBe(false);
    expect((await get<{ devices: DeviceEntry[] }>('/devices')).body.devices.map((d) => d.label)).toContain('x4100');

    const c0 = await get<{ runs: RunListing[] }>('/runs', { device: 'x4100/c0t0d0' });
    expect(c0.body.runs.map((r) => r.context).sort()).toEqual([...X4100_CONTEXTS].sort());

    expect((await get<{ runs: RunListing[] }>('/runs', { device: 'x4100/*', format: 'diskperf' })).body.runs).toEqual(
      [],
    );
    expect((await get<{ runs: RunListing[] }>('/runs', { device: 'no-such-device' })).body.runs).toEqual([]);
    const diskperf = await get<{ runs: RunListing[] }>('/runs', { format: 'diskperf' });
    expect(diskperf.body.runs.map((r) => r.device)).toEqual(
      expect.arrayContaining(['scsi2sd_redux', 'scsi2sd_10M_Sync', '300G_10K_SGI_Indy']),
    );
    expect(diskperf.body.runs.every((r) => r.format === 'diskperf')).toBe(true);
    expect((await get<{ runs: RunListing[] }>('/runs', { device: '*', limit: '3' })).body.runs).toHaveLength(3);
    // Tags from the upload's metadata; the host from the Linux banner, on the run and on a disk's entry alike.
    const fedora = await get<{ runs: RunListing[] }>('/runs', { device: 'fedora-ws/sda' });
    expect(fedora.body.runs).toEqual([
      expect.objectContaining({ device: 'fedora-ws/sda', host: 'fedora-ws', tags: { bus: 'nvme', medium: 'ssd' } }),
    ]);
    expect(fedora.body.runs[0]!.disks).toBeUndefined();
    const fedoraDisks = (await get<{ devices: DeviceEntry[] }>('/devices')).body.devices.filter((d) =>
      d.label.startsWith('fedora-ws/'),
    ).length;
    expect((await get<{ runs: RunListing[] }>('/runs', { device: 'fedora-ws' })).body.runs).toEqual([
      expect.objectContaining({
        device: 'fedora-ws',
        host: 'fedora-ws',
        disks: fedoraDisks,
        tags: { bus: 'nvme', medium: 'ssd' },
      }),
    ]);
  });

  it('GET /runs without a device, or with a pattern naming upload labels, lists each run once: an iostat upload of 5 disks and 4 runs is 4 entries', async () => {
    const x4100Runs = new Set(idsOf('x4100/solaris-10-x4100-sas-maxcontig.iostat.txt', 4));
    const queries: Record<string, string>[] = [{}, { device: '*' }, { device: 'x4*' }, { format: 'iostat' }];
    for (const query of queries) {
      const { body } = await get<{ runs: RunListing[] }>('/runs', query);
      const x4100 = body.runs.filter((r) => x4100Runs.has(r.runId));
      expect(
        x4100.map((r) => r.device),
        JSON.stringify(query),
      ).toEqual(['x4100', 'x4100', 'x4100', 'x4100']);
      expect(new Set(x4100.map((r) => r.runId))).toEqual(x4100Runs);
      expect(x4100.every((r) => r.format === 'iostat' && r.disks === X4100_NATIVES.length)).toBe(true);
      // Every run once, whatever its format.
      expect(new Set(body.runs.map((r) => r.runId)).size).toBe(body.runs.length);
    }
  });

  it("GET /runs/{id} returns the documented run and its series, none of the store's keys; 404 for an unknown or half-written run", async () => {
    const facts = [
      'runId',
      'label',
      'index',
      'platform',
      'dialect',
      'name',
      'time',
      'tags',
      'context',
      'source',
      'startLine',
      'endLine',
      'warnings',
      'ingestedAt',
      'format',
      'meta',
      'columns',
    ];
    const keysOf = (o: object) => Object.keys(o).sort();
    const [first] = idsOf('x4100/solaris-10-x4100-sas-maxcontig.iostat.txt', 1);
    const r = await get<RunDetail>(`/runs/${first}`);
    expect(r.status).toBe(200);
    expect(keysOf(r.body)).toEqual(['run', 'series']);
    // Solaris iostat -xnz prints neither a host nor times: the run has neither.
    expect(keysOf(r.body.run)).toEqual([...facts, 'reports', 'seriesCount'].sort());
    expect(r.body.run).toMatchObject({
      runId: first,
      format: 'iostat',
      label: 'x4100',
      context: X4100_CONTEXTS[0],
      reports: 1,
      seriesCount: X4100_NATIVES.length,
    });
    expect(r.body.run.source).toEqual({
      bucket: env.bucket,
      key: 'x4100/solaris-10-x4100-sas-maxcontig.iostat.txt',
      version: uploaded.get('x4100/solaris-10-x4100-sas-maxcontig.iostat.txt'),
    });
    expect(r.body.series.map((s) => s.device).sort()).toEqual(X4100_NATIVES.map((n) => `x4100/${n}`).sort());
    expect(r.body.series.every((s) => keysOf(s).join() === 'device,native,sampleCount,summary')).toBe(true);
    expect(r.body.series.find((s) => s.native === 'c0t0d0')!.summary.write_iops).toMatchObject({
      mean: 84.9,
      count: 1,
    });

    const [redux] = idsOf('irix-indy-scsi2sd-redux.diskperf.txt', 1);
    const d = await get<RunDetail>(`/runs/${redux}`);
    expect(keysOf(d.body.run)).toEqual([...facts, 'host', 'from', 'rows'].sort());
    expect(d.body.run).toMatchObject({
      format: 'diskperf',
      host: 'IRIS',
      from: '2020-04-03T21:10:13',
      platform: 'irix',
    });
    expect(d.body.run.format === 'diskperf' && d.body.run.rows.length).toBe(11);
    expect(d.body.series).toEqual([]);

    const [fedora] = idsOf('fedora/linux-sysstat-12.7.5-x.txt', 1);
    const f = await get<RunDetail>(`/runs/${fedora}`);
    expect(f.body.run).toMatchObject({
      format: 'iostat',
      host: 'fedora-ws',
      name: 'fedora-ws',
      tags: { bus: 'nvme', medium: 'ssd' },
    });
    // Nothing of the store's plumbing, at any depth: keys, index attributes, item types, packed columns.
    expect(JSON.stringify([r.body, d.body, f.body])).not.toMatch(
      /"(pk|sk|gsi\d\w*|type|seriesMeans|packedRows|sequencer|eTag)":/,
    );

    const unknown = await get<ErrorBody>(`/runs/r${'0'.repeat(24)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toBe('application/json');
    expect(unknown.body.error.code).toBe('not_found');

    const malformed = await get<ErrorBody>('/runs/not-a-run');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.message).toMatch(/^id: /);

    // A run whose SERIES item is written but whose META is not (yet): invisible everywhere.
    const half = `r${'ab'.repeat(12)}`;
    const time = '2031-01-01T00:00:00.000Z';
    await env.db.send(
      new PutCommand({
        TableName: env.tableName,
        Item: {
          pk: runPk(half),
          sk: seriesSk('c0t0d0'),
          type: 'series',
          runId: half,
          device: 'x4100/c0t0d0',
          native: 'c0t0d0',
          format: 'iostat',
          tags: {},
          time,
          sampleCount: 1,
          summary: { write_iops: { count: 1, mean: 1e9, min: 1e9, max: 1e9, stddev: 0 } },
          gsi1pk: devicePk('x4100/c0t0d0'),
          gsi1sk: deviceSk(time, half),
        },
      }),
    );
    const halfAnswer = await get<ErrorBody>(`/runs/${half}`);
    expect(halfAnswer.status).toBe(404);
    expect(halfAnswer.body.error.code).toBe('not_found');
    const listed = await get<{ runs: RunListing[] }>('/runs', { device: 'x4100/c0t0d0' });
    expect(listed.body.runs.map((x) => x.runId)).not.toContain(half);
    expect(listed.body.runs).toHaveLength(4);
    // The newest entry of the label is the half-written run's: it must not take the place of a complete one.
    for (const limit of [1, 3]) {
      const newest = await get<{ runs: RunListing[] }>('/runs', { device: 'x4100/c0t0d0', limit: String(limit) });
      expect(newest.body.runs).toEqual(listed.body.runs.slice(0, limit));
    }
    expect((await get<{ runs: RunListing[] }>('/runs', { device: 'x4100/*', limit: '2' })).body.runs).toHaveLength(2);
    const c = await get<Comparison>('/compare', { a: 'x4100/c0t0d0', b: 'x4100/c0t1d0', metric: 'write_iops' });
    expect(c.status).toBe(200);
    expect(c.body.a).toMatchObject({ runs: 4, observations: 4 });
    expect(c.body.rows[0]!.a).toBeLessThan(1e4);
  });
});

// ---------------------------------------------------------------- compare

describe('GET /compare', () => {
  it('scsi2sd_redux is 1.90x scsi2sd_10M_Sync on all (54 points)', async () => {
    const r = await get<Comparison>('/compare', { a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync', metric: 'all' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body.ratio!.toFixed(2)).toBe('1.90');
    expect(r.body.points).toBe(54);
    expect(r.body.sentence).toBe('scsi2sd_redux is 1.90x scsi2sd_10M_Sync on all (54 points, 1.11x-4.41x)');
    expect(r.body.a).toMatchObject({
      selector: 'scsi2sd_redux',
      runs: 1,
      devices: ['scsi2sd_redux'],
      formats: ['diskperf'],
    });
    expect(r.body.ci).toBeNull();
    // metric defaults to all.
    expect((await get<Comparison>('/compare', { a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync' })).body.ratio).toBe(
      r.body.ratio,
    );
  });

  it('scsi2sd_redux is 0.39x the 300G 10K disk (a prefix pattern), its zero point excluded', async () => {
    const r = await get<Comparison>('/compare', { a: 'scsi2sd_redux', b: '300G*' });
    expect(r.status).toBe(200);
    expect(r.body.ratio!.toFixed(2)).toBe('0.39');
    expect(r.body.points).toBe(65);
    expect(r.body.b.devices).toEqual(['300G_10K_SGI_Indy']);
    expect(r.body.excluded).toEqual([
      expect.objectContaining({ metric: 'rnd_wt', req_size: 8192, excluded: 'zero on B' }),
    ]);
  });

  it('x4100/c0t0d0 writes 71.0x the IOPS with maxcontig 1 as with 32 (context terms pick the runs)', async () => {
    const a = 'x4100/c0t0d0,context~tunefs -a 1 /opt';
    const b = 'x4100/c0t0d0,context~tunefs -a 32';
    const r = await get<Comparison>('/compare', { a, b, metric: 'write_iops' });
    expect(r.status).toBe(200);
    expect(r.body.ratio!.toFixed(1)).toBe('71.0');
    expect(r.body.a).toMatchObject({
      selector: a,
      runs: 1,
      observations: 1,
      devices: ['x4100/c0t0d0'],
      formats: ['iostat'],
    });
    expect(r.body.b).toMatchObject({ runs: 1, observations: 1 });
    expect(r.body.rows).toHaveLength(1);
    expect(r.body.rows[0]).toMatchObject({ metric: 'write_iops', b: 84.9 });
    expect(r.body.rows[0]!.a).toBeCloseTo(6028.7, 9);
    expect(r.body.warnings.join(' ')).toMatch(/since-boot report/);
    // The same run by id.
    const [, , , maxcontig1] = idsOf('x4100/solaris-10-x4100-sas-maxcontig.iostat.txt', 4);
    const byRun = await get<Comparison>('/compare', {
      a: `run=${maxcontig1},device=x4100/c0t0d0`,
      b,
      metric: 'write_iops',
    });
    expect(byRun.body.ratio!.toFixed(1)).toBe('71.0');
  });

  it('tags from the upload metadata select series', async () => {
    const r = await get<Comparison>('/compare', {
      a: 'tag.bus=nvme,device=*/nvme0n1',
      b: 'fedora-ws/sda',
      metric: 'read_iops',
    });
    expect(r.status).toBe(200);
    expect(r.body.a.devices).toEqual(['fedora-ws/nvme0n1']);
    const [listed] = (await get<{ runs: RunListing[] }>('/runs', { device: 'fedora-ws/sda' })).body.runs;
    const { series } = (await get<RunDetail>(`/runs/${listed!.runId}`)).body;
    const mean = (native: string) => series.find((s) => s.native === native)!.summary.read_iops!.mean;
    // Answers carry 6 significant digits.
    expect(r.body.ratio).toBeCloseTo(mean('nvme0n1') / mean('sda'), 3);
    expect(r.body.ratio).toBeGreaterThan(1);
  });

  it('a selector that matches nothing is a 400 saying which side', async () => {
    const r = await get<ErrorBody>('/compare', { a: 'no-such-device', b: 'scsi2sd_redux' });
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({
      code: 'bad_request',
      message: expect.stringMatching(/^A \(no-such-device\) matches no run/),
    });
  });
});

// ---------------------------------------------------------------- observations

describe('selector observations', () => {
  const store = () => ({ db: env.db, tableName: env.tableName });
  const observe = (selector: string) => resolveSelector(store(), parseSelector(selector));
  const byUnit = (o: Observation[]) =>
    [...o].sort((x, y) => x.device.localeCompare(y.device) || x.runId.localeCompare(y.runId));
  const iostatLog = (devices: string[]) => Buffer.from(solarisIostatLog({ reports: 3, devices, host: 'bench' }));

  it('a bare iostat label selects every series filed under it; a series label selects that one; a diskperf run labelled under it stays out', async () => {
    const u = uid();
    const label = `sas-${u}`;
    await ingest(`${label}/iostat.txt`, iostatLog(['sda', 'sdb', 'sdc']), { metadata: { tags: `lab=${u}` } });
    // A diskperf run whose own label is under the iostat label's, and a label that only starts like it.
    await ingest(`other-${u}/redux.txt`, REDUX, { metadata: { device: `${label}/x` } });
    await ingest(`${label}-old/iostat.txt`, iostatLog(['sda']));
    const [run] = idsOf(`${label}/iostat.txt`, 1);

    const all = byUnit(await observe(label));
    expect(all.map((o) => o.device)).toEqual([`${label}/sda`, `${label}/sdb`, `${label}/sdc`]);
    expect(all.map((o) => o.native)).toEqual(['sda', 'sdb', 'sdc']);
    for (const o of all)
      expect(o).toMatchObject({
        runId: run,
        format: 'iostat',
        label,
        platform: 'solaris',
        context: ['iostat -xn 5 3'],
        samples: 2,
      });
    expect(all[0]!.values.write_iops).toBeCloseTo((writeIops(1, 0) + writeIops(2, 0)) / 2, 9);
    // A log that names its host (Linux sysstat's header) gives it to every series.
    const fedora = byUnit(await observe('fedora-ws'));
    expect(fedora.map((o) => o.native)).toEqual(['dm-0', 'nvme0n1', 'sda', 'sdb', 'zram0']);
    for (const o of fedora)
      expect(o).toMatchObject({
        device: `fedora-ws/${o.native}`,
        label: 'fedora-ws',
        platform: 'linux',
        host: 'fedora-ws',
        context: [],
      });

    // Every way to a run gives the same observations: by its id, by its tag.
    expect(byUnit(await observe(`run=${run}`))).toEqual(all);
    expect(byUnit(await observe(`run=${run},device=${label}`))).toEqual(all);
    expect(byUnit(await observe(`tag.lab=${u}`))).toEqual(all);
    expect(byUnit(await observe(`tag.lab=${u},${label}`))).toEqual(all);

    expect(await observe(`${label}/sdb`)).toEqual([all[1]]);
    expect(await observe(`${label},*c`)).toEqual([all[2]]);
    const diskperf = await observe(`${label}/x`);
    expect(diskperf).toEqual([
      expect.objectContaining({ device: `${label}/x`, label: `${label}/x`, format: 'diskperf' }),
    ]);
    expect((await observe(`${label}-old`)).map((o) => o.device)).toEqual([`${label}-old/sda`]);

    // `compare sas10k x4100`: both sides every series of their label.
    const r = await get<Comparison>('/compare', { a: label, b: 'x4100', metric: 'write_iops' });
    expect(r.status).toBe(200);
    expect(r.body.a).toMatchObject({ runs: 1, observations: 3, devices: all.map((o) => o.device) });
    expect(r.body.b).toMatchObject({ runs: 4, devices: X4100_NATIVES.map((n) => `x4100/${n}`).sort() });
  });

  it('diskperf runs carry their host, context, setup and announced request sizes, whichever way they are found', async () => {
    const u = uid();
    await ingest(`facts-${u}/redux.txt`, REDUX, { metadata: { tags: `lab=${u}` } });
    const [run] = idsOf(`facts-${u}/redux.txt`, 1);
    const [o, ...more] = await observe(`facts-${u}`);
    expect(more).toEqual([]);
    expect(o).toMatchObject({
      runId: run,
      device: `facts-${u}`,
      label: `facts-${u}`,
      format: 'diskperf',
      platform: 'irix',
      host: 'IRIS',
      context: ['diskperf -W -n scsi2sd_redux -c 1G -t 60 /tmp/testpath'],
      setup: { direct: 0, time: 60, scale: 1, delay: 0, 'file size': 1073741824, 'test type': 'XFS data subvolume' },
      requestSizes: { min: 4096, max: 4194304 },
    });
    expect((o!.values.fwd_wt as ReadonlyMap<number, number>).size).toBe(11);
    expect(await observe(`run=${run}`)).toEqual([o]);
    expect(await observe(`tag.lab=${u}`)).toEqual([o]);
    // The seed run (no folder: labelled by its test name) reads the same.
    expect(await observe('scsi2sd_redux')).toEqual([
      {
        ...o,
        runId: idsOf('irix-indy-scsi2sd-redux.diskperf.txt', 1)[0],
        device: 'scsi2sd_redux',
        label: 'scsi2sd_redux',
        // Its upload carried no tags.
        about: { ...o!.about, tags: {} },
      },
    ]);
    expect(o!.about).toMatchObject({ tags: { lab: u }, version: 'IRIX 6.5', objectSize: REDUX.byteLength });
  });
});

describe('GET /compare?format=csv|md', () => {
  /** An answer whose body is text, not JSON. */
  async function getText(query: Record<string, string>) {
    const result = (await apiHandler(
      apiEvent('GET', '/compare', { query }),
      lambdaContext('benchdrop-api'),
    )) as APIGatewayProxyStructuredResultV2;
    return { status: result.statusCode, headers: result.headers ?? {}, text: result.body ?? '' };
  }
  const query = { a: 'scsi2sd_redux', b: '300G_10K_SGI_Indy' };

  it('format=csv answers the table as text/csv in UTF-8: a header, a record a row, every warning in the notes', async () => {
    const json = await get<Comparison>('/compare', { ...query, format: 'json' });
    expect(json.headers['content-type']).toBe('application/json');
    const table = comparisonTable(json.body);
    const r = await getText({ ...query, format: 'csv' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(r.text).toBe(tableCsv(table));
    const records = r.text.split('\r\n');
    expect(records[0]).toBe(`${table.columns.join(',')},notes`);
    expect(records[1]).toMatch(/^fwd_wt,4096,2\.84,1,16\.22,1,0\.18x,/);
    expect(json.body.warnings.length).toBeGreaterThan(0);
    for (const w of json.body.warnings) expect(r.text).toContain(w);
    // The same answer as the JSON: a repeated question is served from the kept answer, in either format.
    expect(r.headers['x-benchdrop-answer']).toBe('cached');
  });

  it('format=md answers the GitHub table as text/markdown in UTF-8, the sentence last', async () => {
    const json = await get<Comparison>('/compare', query);
    const r = await getText({ ...query, format: 'md' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(r.text).toBe(tableMarkdown(comparisonTable(json.body)));
    expect(r.text.split('\n')[0]).toBe('### scsi2sd_redux (A) vs 300G_10K_SGI_Indy (B) on all'.replace(/_/g, '\\_'));
    expect(r.text.trimEnd().split('\n').at(-1)).toBe(json.body.sentence.replace(/_/g, '\\_'));
  });

  it('format=xml is a 400 naming the formats', async () => {
    const r = await get<ErrorBody>('/compare', { ...query, format: 'xml' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe('format: expected one of json, csv, md (got "xml")');
  });
});

// ---------------------------------------------------------------- errors

describe('bad requests', () => {
  const cases: [string, string, Record<string, string>, RegExp][] = [
    [
      'metric=bogus',
      '/compare',
      { a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync', metric: 'bogus' },
      /^metric: expected a group \(write, read, seq, random, latency, all: throughput, IOPS and latency; latency: the latencies, with fio's percentiles; queue lengths and %util only by name\) or a metric \(.*fwd_wt.*write_iops.*fio_read_bw.*\) \(got "bogus"\)$/,
    ],
    ['a missing', '/compare', { b: 'scsi2sd_10M_Sync' }, /^a: required; expected a selector/],
    [
      'unknown selector term',
      '/compare',
      { a: 'colour=red', b: 'scsi2sd_10M_Sync' },
      /^a: unknown term "colour"; expected comma-separated terms/,
    ],
    [
      'bad run id in a selector',
      '/compare',
      { a: 'scsi2sd_redux', b: 'run=42' },
      /^b: "run=42": a run id is r followed by 24 hex digits$/,
    ],
    ['format=zfs', '/runs', { format: 'zfs' }, /^format: expected one of diskperf, iostat, fio \(got "zfs"\)$/],
    ['limit=0', '/runs', { limit: '0' }, /^limit: expected a whole number from 1 to 1000 \(got "0"\)$/],
    ['limit=ten', '/runs', { limit: 'ten' }, /^limit: expected a whole number from 1 to 1000 \(got "ten"\)$/],
    ['limit=1001', '/devices', { limit: '1001' }, /^limit: expected a whole number from 1 to 1000 \(got "1001"\)$/],
    [
      'an unknown parameter',
      '/runs',
      { devices: 'x' },
      /^devices: unknown parameter; expected device, format, limit, next$/,
    ],
    [
      'an unknown parameter of /devices',
      '/devices',
      { prefix: 'x' },
      /^prefix: unknown parameter; expected limit, next$/,
    ],
    [
      'a device pattern with the key separator',
      '/runs',
      { device: 'x#y' },
      /^device: "x#y": not a device or host pattern \(it holds "#" or a control character/,
    ],
    [
      'status=lost',
      '/uploads',
      { status: 'lost' },
      /^status: expected one of processing, ready, failed, replaced, deleted \(got "lost"\)$/,
    ],
  ];
  it.each(cases)('%s -> 400 naming the parameter', async (_name, path, query, message) => {
    const r = await get<ErrorBody>(path, query);
    expect(r.status).toBe(400);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body.error.code).toBe('bad_request');
    expect(r.body.error.message).toMatch(message);
  });

  it('an unknown route or method is a 404 in the same shape', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['DELETE', '/devices'],
      ['GET', '/runs/a/b'],
    ] as const) {
      const r = await call<ErrorBody>(method, path);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('not_found');
      expect(r.body.error.message).toContain(`no route ${method} ${path}`);
    }
  });

  it('an internal error is a 500 that says nothing more than "internal error" and the request id', async () => {
    const failing = new Proxy(deps.db, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return async () => {
          throw new Error(`connect ECONNREFUSED 10.0.0.1:443 while reading ${deps.tableName}`);
        };
      },
    });
    setApiDeps({ ...deps, db: failing });
    try {
      for (const [path, query] of [
        ['/devices', undefined],
        ['/compare', { a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync' }],
        ['/runs/' + idsOf('irix-indy-scsi2sd-redux.diskperf.txt', 1)[0], undefined],
      ] as const) {
        const event = apiEvent('GET', path, query ? { query } : {});
        const result = (await apiHandler(event, lambdaContext('benchdrop-api'))) as APIGatewayProxyStructuredResultV2;
        const id = event.requestContext.requestId;
        expect(result.statusCode).toBe(500);
        expect(result.headers?.['content-type']).toBe('application/json');
        expect(result.body).toBe(
          JSON.stringify({ error: { code: 'internal', message: `internal error (request id ${id})`, requestId: id } }),
        );
      }
    } finally {
      setApiDeps(deps);
    }
  });
});

// ---------------------------------------------------------------- empty parameters

describe('a parameter given empty counts as not given (over HTTP, URLs as typed)', () => {
  let served: ServedApi | undefined;
  let base: string;

  beforeAll(async () => {
    // The local lab's API Gateway in front of the deployed handler: the query string is parsed as API Gateway does.
    served = await serveApi();
    base = served.url;
  });

  afterAll(async () => {
    await served?.close();
  });

  /** GET of a path and query exactly as written, e.g. `/uploads?status=`. */
  async function fetchAs<T>(pathAndQuery: string): Promise<{ status: number; body: T }> {
    const response = await fetch(`${base}${pathAndQuery}`);
    return { status: response.status, body: (await response.json()) as T };
  }

  it('GET /uploads?status= lists every status, as GET /uploads does', async () => {
    const empty = await fetchAs<{ uploads: UploadListing[] }>('/uploads?status=');
    const absent = await fetchAs<{ uploads: UploadListing[] }>('/uploads');
    expect(empty.status).toBe(200);
    expect(absent.status).toBe(200);
    expect(new Set(empty.body.uploads.map((u) => u.status))).toEqual(new Set(['ready', 'failed']));
    expect(empty.body).toEqual(absent.body);
  });

  it('GET /runs?device=&format= lists every run, as GET /runs does, and their cursors are one listing', async () => {
    const empty = await fetchAs<{ runs: RunListing[]; next?: string }>('/runs?device=&format=&limit=2');
    const absent = await fetchAs<{ runs: RunListing[]; next?: string }>('/runs?limit=2');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual(absent.body);
    expect(empty.body.runs).toHaveLength(2);
    // The filters are the same, so the cursor of one goes on in the other.
    const next = encodeURIComponent(empty.body.next!);
    const onAbsent = await fetchAs<{ runs: RunListing[] }>(`/runs?limit=2&next=${next}`);
    const onEmpty = await fetchAs<{ runs: RunListing[] }>(`/runs?device=&format=&limit=2&next=${next}`);
    expect(onAbsent.status).toBe(200);
    expect(onEmpty.body).toEqual(onAbsent.body);
    expect(onEmpty.body.runs.map((r) => r.runId)).not.toContain(empty.body.runs[0]!.runId);
  });

  it('an empty limit or next is the default: the first page of 100', async () => {
    const empty = await fetchAs<{ devices: DeviceEntry[] }>('/devices?limit=&next=');
    const absent = await fetchAs<{ devices: DeviceEntry[] }>('/devices');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual(absent.body);
    expect(empty.body.devices.map((d) => d.label)).toContain('scsi2sd_redux');
  });

  it('GET /compare?metric= compares on all, as with no metric', async () => {
    const empty = await fetchAs<Comparison>('/compare?a=scsi2sd_redux&b=scsi2sd_10M_Sync&metric=');
    const all = await fetchAs<Comparison>('/compare?a=scsi2sd_redux&b=scsi2sd_10M_Sync');
    expect(empty.status).toBe(200);
    expect(empty.body.metric).toBe('all');
    expect(empty.body).toEqual(all.body);
  });

  it('a required parameter given empty is still missing, and a bad non-empty value still a 400', async () => {
    const noA = await fetchAs<ErrorBody>('/compare?a=&b=scsi2sd_10M_Sync');
    expect(noA.status).toBe(400);
    expect(noA.body.error.message).toMatch(/^a: expected a selector of at most \d+ characters/);
    const lost = await fetchAs<ErrorBody>('/uploads?status=lost');
    expect(lost.status).toBe(400);
    expect(lost.body.error.message).toBe(
      'status: expected one of processing, ready, failed, replaced, deleted (got "lost")',
    );
    const unknown = await fetchAs<ErrorBody>('/runs?devices=');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toBe('devices: unknown parameter; expected device, format, limit, next');
  });
});

// ---------------------------------------------------------------- limits

describe('limits', () => {
  const crowdedId = (i: number) => `rc${i.toString(16).padStart(23, '0')}`;
  it('a side of more than 1000 observations is a 400; its label is read across pages', async () => {
    const writer = new BatchWriter(env.db, env.tableName);
    const padding = 'x'.repeat(1500);
    for (let i = 0; i < MAX_OBSERVATIONS + 1; i++) {
      const id = crowdedId(i);
      const time = `2030-01-01T00:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0')}Z`;
      writer.put({
        pk: runPk(id),
        sk: 'META',
        type: 'run',
        runId: id,
        format: 'diskperf',
        label: 'crowded',
        name: 'crowded',
        tags: {},
        context: [padding],
        rows: [{ req_size: 4096, values: { fwd_wt: 1 + i / 1000 } }],
        source: { bucket: env.bucket, key: 'crowded.txt', version: 'v1' },
        time,
        gsi1pk: devicePk('crowded'),
        gsi1sk: deviceSk(time, id),
      });
    }
    await writer.flush();
    const counter = counting(deps);
    setApiDeps(counter.deps);
    try {
      const r = await get<ErrorBody>('/compare', { a: 'crowded', b: 'scsi2sd_redux' });
      expect(r.status).toBe(400);
      expect(r.body.error).toEqual({
        code: 'bad_request',
        message: `a: "crowded" matches ${MAX_OBSERVATIONS + 1} runs and series, more than ${MAX_OBSERVATIONS}; narrow it with more terms`,
      });
      // About 1.5 MB under one label: DynamoDB (and dynalite) answer in 1 MB pages.
      expect(counter.take()).toBeGreaterThanOrEqual(3);
      const narrowed = await get<Comparison>('/compare', {
        a: `crowded,run=${crowdedId(0)}`,
        b: 'scsi2sd_redux',
        metric: 'fwd_wt',
      });
      expect(narrowed.status).toBe(200);
      const page = await get<{ runs: RunListing[] }>('/runs', { device: 'crowded', limit: '500' });
      expect(page.body.runs).toHaveLength(500);
      expect(page.body.runs[0]!.time > page.body.runs[499]!.time).toBe(true);
    } finally {
      setApiDeps(deps);
    }
  });
});

// ---------------------------------------------------------------- paging

/** A page of a listing as the API answers it. */
type Page<F extends string, T> = { [K in F]: T[] } & { next?: string };

/** A response body under 1 MB (10^6 bytes): what every page must stay within. */
const UNDER_ONE_MB = 1_000_000;

/**
 * Every page of a listing, following `next`: the items in order, the pages'
 * sizes (items and bytes), each page checked to be a 200 under 1 MB and of at
 * most `limit` items.
 */
async function allPages<T>(
  path: string,
  field: string,
  query: Record<string, string> = {},
): Promise<{ items: T[]; sizes: number[]; bytes: number[] }> {
  const items: T[] = [];
  const sizes: number[] = [];
  const bytes: number[] = [];
  let next: string | undefined;
  do {
    const r = await get<Record<string, unknown>>(path, { ...query, ...(next !== undefined ? { next } : {}) });
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    const page = r.body[field] as T[];
    expect(page.length).toBeLessThanOrEqual(Number(query['limit'] ?? 100));
    expect(Buffer.byteLength(r.text)).toBeLessThan(UNDER_ONE_MB);
    items.push(...page);
    sizes.push(page.length);
    bytes.push(Buffer.byteLength(r.text));
    next = r.body['next'] as string | undefined;
    if (next !== undefined) expect(next).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(sizes.length).toBeLessThan(200);
  } while (next !== undefined);
  return { items, sizes, bytes };
}

/** A diskperf run's META as ingest stores it (one row), under `label`, at second `n` of 2031; `context` pads it. */
function diskperfMeta(label: string, n: number, context: string[] = []) {
  const id = `r${createHash('sha256').update(`${label}\0${n}`).digest('hex').slice(0, 24)}`;
  const time = new Date(Date.UTC(2031, 0, 1) + n * 1000).toISOString();
  return {
    pk: runPk(id),
    sk: 'META',
    type: 'run',
    runId: id,
    format: 'diskperf',
    label,
    name: label,
    tags: {},
    context,
    rows: [{ req_size: 4096, values: { fwd_wt: 1 + (n % 7) / 10 } }],
    source: { bucket: env.bucket, key: `${label}/${n}.txt`, version: 'v1' },
    time,
    gsi1pk: devicePk(label),
    gsi1sk: deviceSk(time, id),
  };
}

/** Runs `fn` with the API (and ingest) reading and writing another table. */
async function onTable<T>(tableName: string, fn: () => Promise<T>): Promise<T> {
  setApiDeps({ ...deps, tableName });
  setIngestDeps({ ...ingestDeps, tableName });
  try {
    return await fn();
  } finally {
    setApiDeps(deps);
    setIngestDeps(ingestDeps);
  }
}

describe('listings over more than a thousand labels', () => {
  // A table of its own: thousands of labels the other tests must not see.
  const table = `paging-${uid()}`;
  const HOSTS = Array.from({ length: 1200 }, (_, i) => `host-${String(i).padStart(4, '0')}`);
  const OTHERS = Array.from({ length: 300 }, (_, i) => `other-${String(i).padStart(3, '0')}`);
  /** 1,001 series labels under one label with no runs of its own: more than a selector may read. */
  const WIDE = Array.from({ length: MAX_LABELS + 1 }, (_, i) => `wide/d${String(i).padStart(4, '0')}`);
  const IO_DISKS = ['sda', 'sdb', 'sdc'];
  const LAST_SEEN = '2031-02-01T00:00:00.000Z';

  beforeAll(async () => {
    await env.createTable(table);
    const writer = new BatchWriter(env.db, table);
    [...HOSTS, ...OTHERS].forEach((label, n) => {
      writer.put(diskperfMeta(label, n));
      writer.put(deviceItem(label, 'diskperf', LAST_SEEN, 'v1'));
    });
    for (const label of WIDE) writer.put(deviceItem(label, 'iostat', LAST_SEEN, 'v1'));
    await writer.flush();
    // An iostat upload, ingested: its label and one series label per disk.
    await onTable(table, () =>
      ingest(`io-host/iostat-${uid()}.txt`, Buffer.from(solarisIostatLog({ reports: 3, devices: IO_DISKS }))),
    );
  }, 60_000);

  it('GET /devices: 100 labels a page by default, up to 1,000 with limit, every label once, in label order', async () => {
    const labels = [...HOSTS, ...OTHERS, ...WIDE, 'io-host', ...IO_DISKS.map((d) => `io-host/${d}`)].sort();
    await onTable(table, async () => {
      const first = await get<Page<'devices', DeviceEntry>>('/devices');
      expect(first.body.devices.map((d) => d.label)).toEqual(labels.slice(0, 100));
      expect(first.body.next).toEqual(expect.any(String));
      const paged = await allPages<DeviceEntry>('/devices', 'devices', { limit: String(MAX_PAGE) });
      expect(paged.sizes).toEqual([1000, 1000, labels.length - 2000]);
      expect(paged.items.map((d) => d.label)).toEqual(labels);
      expect(paged.items.find((d) => d.label === 'host-0001')).toEqual({
        label: 'host-0001',
        format: 'diskperf',
        lastSeen: LAST_SEEN,
      });
      const small = await allPages<DeviceEntry>('/devices', 'devices', { limit: '61' });
      expect(small.items.map((d) => d.label)).toEqual(labels);
    });
  }, 60_000);

  it('GET /runs without a device pages across every label: each run once, label by label, newest first within one', async () => {
    await onTable(table, async () => {
      const paged = await allPages<RunListing>('/runs', 'runs', { limit: String(MAX_PAGE) });
      // One entry per run: the iostat upload's run under its label, its disks' entries skipped.
      const expected = [...HOSTS, ...OTHERS].length + 1;
      expect(paged.items).toHaveLength(expected);
      expect(new Set(paged.items.map((r) => r.runId)).size).toBe(expected);
      const devices = paged.items.map((r) => r.device);
      expect(devices).toEqual([...devices].sort());
      expect(paged.items.filter((r) => r.device.startsWith('io-host'))).toEqual([
        expect.objectContaining({ device: 'io-host', disks: IO_DISKS.length, reports: 3 }),
      ]);
      // A page reads a bounded number of labels: more than one page, none over the limit.
      expect(paged.sizes.length).toBeGreaterThan(1);

      // A prefix pattern reads only the labels under it; a leading wildcard scans for its few.
      const hosts = await allPages<RunListing>('/runs', 'runs', { device: 'host-*', limit: String(MAX_PAGE) });
      expect(hosts.items.map((r) => r.device)).toEqual(HOSTS);
      const sevens = await allPages<RunListing>('/runs', 'runs', { device: '*-0007' });
      expect(sevens.items.map((r) => r.device)).toEqual(['host-0007']);
      // A filter that drops almost every entry: short (even empty) pages that go on, then the last.
      const iostat = await allPages<RunListing>('/runs', 'runs', { format: 'iostat' });
      expect(iostat.items.map((r) => r.device)).toEqual(['io-host']);
      expect(iostat.sizes.length).toBeGreaterThan(1);
      // Disk labels named by a pattern: the run once per disk, under the disk's label.
      expect((await allPages<RunListing>('/runs', 'runs', { device: 'io-host/*' })).items.map((r) => r.device)).toEqual(
        IO_DISKS.map((d) => `io-host/${d}`),
      );
      // Exact labels as before: the upload's label lists its run whole.
      expect((await get<Page<'runs', RunListing>>('/runs', { device: 'io-host' })).body).toEqual({
        runs: [expect.objectContaining({ device: 'io-host', format: 'iostat' })],
      });
    });
  }, 60_000);

  it('a selector that would read more than 1,000 labels is a 400 saying how to narrow it, after one DEVICES page, well under 1 s', async () => {
    const counter = counting({ ...deps, tableName: table });
    setApiDeps(counter.deps);
    try {
      const refusals: [Record<string, string>, RegExp][] = [
        [
          { a: '*-0007', b: 'host-0001' },
          /^a: "\*-0007" starts its device pattern with a wildcard, so it would read every device label, and there are more than 1000: start the pattern with literal text \(sas10k\*, x4100\/\*\), or add tag\.KEY=VALUE \(the tag index finds its runs\) or run=ID$/,
        ],
        [
          { a: 'host-0001', b: 'format=diskperf,context~x' },
          /^b: "format=diskperf,context~x" names no device, tag or run, so it would read every device label, and there are more than 1000: add a device pattern starting with literal text/,
        ],
        [
          { a: 'host-*', b: 'host-0001' },
          /^a: "host-\*" reaches more than 1000 device labels starting "host-": make the literal text before its first wildcard longer, or add tag\.KEY=VALUE/,
        ],
        [
          { a: 'wide', b: 'host-0001' },
          /^a: "wide" has more than 1000 series labels under "wide\/": name one \(wide\/sda\), or the ones starting alike \(wide\/sd\*\), or add tag\.KEY=VALUE/,
        ],
      ];
      for (const [query, message] of refusals) {
        counter.detail();
        const started = performance.now();
        const r = await get<ErrorBody>('/compare', query);
        const ms = performance.now() - started;
        expect(r.status).toBe(400);
        expect(r.body.error.message).toMatch(message);
        // The refused side lists at most MAX_LABELS + 1 labels in one Query of DEVICES, and reads no label's runs.
        expect(counter.detail().reads.filter((x) => x === 'Query')).toHaveLength(1);
        expect(ms).toBeLessThan(1000);
      }
      // Narrowed by a longer literal prefix: 100 labels, answered.
      const narrowed = await get<Comparison>('/compare', { a: 'host-00*', b: 'host-01*', metric: 'fwd_wt' });
      expect(narrowed.status).toBe(200);
      expect(narrowed.body.a).toMatchObject({ runs: 100, devices: HOSTS.slice(0, 100) });
      // A leading wildcard among fewer than 1,000 labels is still read whole (the main table).
      setApiDeps(deps);
      expect((await get<Comparison>('/compare', { a: '*redux', b: 'scsi2sd_10M_Sync' })).body.ratio!.toFixed(2)).toBe(
        '1.90',
      );
    } finally {
      setApiDeps(deps);
    }
  }, 30_000);

  it('a bad next is a 400 saying so, decided before any read', async () => {
    const first = await onTable(table, () => get<Page<'runs', RunListing>>('/runs', { device: 'host-*', limit: '5' }));
    const devicesNext = (await onTable(table, () => get<Page<'devices', DeviceEntry>>('/devices', { limit: '5' }))).body
      .next!;
    const runsNext = first.body.next!;
    const forged = (position: unknown, device = 'host-*') =>
      encodeCursor('runs', { device, format: undefined }, position);
    const cases: [string, Record<string, string>, RegExp][] = [
      [
        '/runs',
        { next: 'not a cursor!' },
        /^next: not a cursor of GET \/runs: pass the next value of an answer as it came, or leave next out to start from the beginning$/,
      ],
      ['/runs', { next: runsNext.slice(0, 20) }, /^next: not a cursor/],
      ['/runs', { next: Buffer.from('{"l":"runs","q":1}').toString('base64url') }, /^next: not a cursor/],
      ['/runs', { device: 'host-*', next: devicesNext }, /^next: a cursor of GET \/devices, not of GET \/runs/],
      ['/runs', { device: 'other-*', next: runsNext }, /^next: a cursor of this listing asked with other filters/],
      [
        '/runs',
        { device: 'host-*', format: 'iostat', next: runsNext },
        /^next: a cursor of this listing asked with other filters/,
      ],
      // Made with the right filters, but a position the listing never writes: outside the prefix, a key separator, an over-long sort key.
      ['/runs', { device: 'host-*', next: forged({ label: 'other-001' }) }, /^next: not a cursor of this listing/],
      [
        '/runs',
        { device: 'host-*', next: forged({ label: 'host-#', after: 'x' }) },
        /^next: not a cursor of this listing/,
      ],
      [
        '/runs',
        { device: 'host-*', next: forged({ label: 'host-0001', after: 'x'.repeat(1025) }) },
        /^next: not a cursor of this listing/,
      ],
      [
        '/runs',
        { device: 'host-0001', next: forged({ label: 'host-0002', after: 'x' }, 'host-0001') },
        /^next: not a cursor of this listing/,
      ],
      [
        '/uploads',
        { next: encodeCursor('uploads', { status: undefined }, { after: 42 }) },
        /^next: not a cursor of this listing/,
      ],
      [
        '/devices',
        { next: encodeCursor('devices', {}, { after: `a${'\u0000'}b` }) },
        /^next: not a cursor of this listing/,
      ],
      [
        '/devices',
        { next: 'x'.repeat(5000) },
        /^next: expected the next value of the previous page's answer, as it came \(at most 4096 characters\)/,
      ],
    ];
    for (const tableName of [table, `missing-${uid()}`]) {
      await onTable(tableName, async () => {
        for (const [path, query, message] of cases) {
          const r = await get<ErrorBody>(path, query);
          expect({ path, status: r.status, message: r.body.error?.message }).toEqual({
            path,
            status: 400,
            message: expect.stringMatching(message),
          });
        }
      });
    }
    // The cursor goes on where the page stopped, for any limit.
    const second = await onTable(table, () =>
      get<Page<'runs', RunListing>>('/runs', { device: 'host-*', limit: '3', next: runsNext }),
    );
    expect([...first.body.runs, ...second.body.runs].map((r) => r.device)).toEqual(HOSTS.slice(0, 8));
  });
});

describe('every page stays under 1 MB', () => {
  const table = `big-${uid()}`;
  /** About 4 KB of context per run: 600 of them are 2.4 MB. */
  const CONTEXT = Array.from(
    { length: 8 },
    (_, i) => `${i}: ${'dd if=/dev/zero of=/mnt/test bs=1M count=1024 oflag=direct; '.repeat(8)}`,
  );
  const LONG_LABELS = Array.from(
    { length: MAX_PAGE },
    (_, i) => `${String(i).padStart(4, '0')}${'L'.repeat(MAX_PATTERN_LENGTH - 4)}`,
  );
  const UPLOADS = 1_100;

  beforeAll(async () => {
    await env.createTable(table);
    const writer = new BatchWriter(env.db, table);
    for (let n = 0; n < 600; n++) writer.put(diskperfMeta('fat', n, CONTEXT));
    writer.put(deviceItem('fat', 'diskperf', '2031-02-01T00:00:00.000Z', 'v1'));
    for (const label of LONG_LABELS) writer.put(deviceItem(label, 'iostat', '2031-02-01T00:00:00.000Z', 'v1'));
    const runIds = Array.from({ length: 100 }, (_, i) => runId(env.bucket, 'big.txt', 'v1', i));
    for (let n = 0; n < UPLOADS; n++) {
      const now = new Date(Date.UTC(2031, 0, 1) + n * 1000).toISOString();
      const object = { bucket: env.bucket, key: `uploads/${String(n).padStart(5, '0')}.txt`, version: `v${n}` };
      const fields =
        n % 2 === 0
          ? { runIds, runCount: 100 }
          : { message: `uploads/${n}.txt: ${'no diskperf, iostat or fio data here; '.repeat(60)}`, line: 0 };
      writer.put(uploadRecord(object, n % 2 === 0 ? 'ready' : 'failed', fields, now));
    }
    await writer.flush();
  }, 60_000);

  it('runs of 4 KB each: a page of fewer than 1,000, then the next from where it stopped; every run once, newest first', async () => {
    await onTable(table, async () => {
      const paged = await allPages<RunListing>('/runs', 'runs', { device: 'fat', limit: String(MAX_PAGE) });
      expect(paged.items).toHaveLength(600);
      expect(paged.sizes.length).toBeGreaterThanOrEqual(3);
      expect(Math.max(...paged.bytes)).toBeGreaterThan(800_000);
      const times = paged.items.map((r) => r.time);
      expect(times).toEqual([...times].sort().reverse());
      expect(new Set(paged.items.map((r) => r.runId)).size).toBe(600);
    });
  }, 30_000);

  it('1,000 labels of 257 characters fit one page; 1,100 uploads of 2-5 KB page by size, every status merged newest first', async () => {
    await onTable(table, async () => {
      const devices = await allPages<DeviceEntry>('/devices', 'devices', { limit: String(MAX_PAGE) });
      expect(devices.sizes).toEqual([1000, 1]);
      expect(devices.items.map((d) => d.label)).toEqual([...LONG_LABELS, 'fat']);

      const uploads = await allPages<UploadListing>('/uploads', 'uploads', { limit: String(MAX_PAGE) });
      expect(uploads.items).toHaveLength(UPLOADS);
      expect(uploads.sizes.length).toBeGreaterThanOrEqual(3);
      const updated = uploads.items.map((u) => u.updatedAt);
      expect(updated).toEqual([...updated].sort().reverse());
      expect(new Set(uploads.items.map((u) => u.key)).size).toBe(UPLOADS);
      const failed = await allPages<UploadListing>('/uploads', 'uploads', { status: 'failed', limit: '250' });
      expect(failed.items.map((u) => u.key)).toEqual(
        uploads.items.filter((u) => u.status === 'failed').map((u) => u.key),
      );
    });
  }, 30_000);
});

describe('naming any label', () => {
  it('a label holding , = ~ * ? is named exactly with backslashes, in a selector and in GET /runs', async () => {
    const u = uid();
    const label = `odd,${u}=1~2*?`;
    await ingest(`odd-${u}/redux.txt`, REDUX, { metadata: { device: label } });
    // A look-alike the escaped pattern must not take: the same label where the * and ? are other characters.
    await ingest(`odd-${u}/other.txt`, SYNC_10M, { metadata: { device: `odd,${u}=1~2xy` } });
    const r = await get<Comparison>('/compare', { a: exactPattern(label), b: 'scsi2sd_10M_Sync' });
    expect(r.status).toBe(200);
    expect(r.body.a.devices).toEqual([label]);
    expect(r.body.ratio!.toFixed(2)).toBe('1.90');
    expect((await get<Comparison>('/compare', { a: `odd\\,${u}=1~2\\*\\?`, b: 'scsi2sd_10M_Sync' })).status).toBe(400);
    // The wildcard form takes both; the escaped prefix is what the DEVICES query begins with.
    expect((await get<Comparison>('/compare', { a: `odd\\,${u}\\=*`, b: 'scsi2sd_10M_Sync' })).body.a.devices).toEqual(
      [label, `odd,${u}=1~2xy`].sort(),
    );
    const runs = await get<Page<'runs', RunListing>>('/runs', { device: `odd,${u}=1~2\\*\\?` });
    expect(runs.body.runs.map((x) => x.device)).toEqual([label]);
  });

  it('a series label of 257 characters (a 128-character label, a 128-byte disk) is named in full', async () => {
    const label = `${uid()}${'L'.repeat(120)}`;
    const disk = 'd'.repeat(128);
    await ingest(`long-${uid()}/iostat.txt`, Buffer.from(solarisIostatLog({ reports: 3, devices: [disk, 'sdb'] })), {
      metadata: { device: label },
    });
    const series = `${label}/${disk}`;
    expect(series).toHaveLength(MAX_PATTERN_LENGTH);
    const r = await get<Comparison>('/compare', { a: series, b: `${label}/sdb`, metric: 'write_iops' });
    expect(r.status).toBe(200);
    expect(r.body.a.devices).toEqual([series]);
    expect((await get<Page<'runs', RunListing>>('/runs', { device: series })).body.runs).toEqual([
      expect.objectContaining({ device: series }),
    ]);
    const tooLong = await get<ErrorBody>('/compare', { a: `${series}x`, b: `${label}/sdb` });
    expect(tooLong.body.error.message).toMatch(
      /^a: ".*": not a device or host pattern \(258 characters; at most 257 printable characters/,
    );
  });
});

// ---------------------------------------------------------------- uploads

describe('uploads', () => {
  it('GET /uploads?status=failed lists the garbage upload with its reason', async () => {
    const r = await get<{ uploads: UploadListing[] }>('/uploads', { status: 'failed' });
    expect(r.status).toBe(200);
    const garbage = r.body.uploads.find((u) => u.key === 'garbage/prose-only.txt');
    expect(garbage).toEqual({
      bucket: env.bucket,
      key: 'garbage/prose-only.txt',
      version: uploaded.get('garbage/prose-only.txt'),
      status: 'failed',
      runCount: 0,
      runIds: [],
      // Short and without the key (printers say it); the parser's whole text in details.
      message:
        'no diskperf, iostat or fio data in the first 8 lines; expected a diskperf result table, an iostat -x report or a fio output',
      details: expect.stringContaining('garbage/prose-only.txt: no diskperf, iostat or fio data'),
      line: 0,
      updatedAt: expect.any(String),
    });
    expect(r.body.uploads.every((u) => u.status === 'failed')).toBe(true);

    const all = await get<{ uploads: UploadListing[] }>('/uploads');
    expect(all.body.uploads.find((u) => u.key === 'x4100/solaris-10-x4100-sas-maxcontig.iostat.txt')).toMatchObject({
      status: 'ready',
      runCount: 4,
      format: 'iostat',
      device: 'x4100',
    });
    expect(all.body.uploads.map((u) => u.status)).toEqual(expect.arrayContaining(['ready', 'failed']));
    expect((await get<{ uploads: UploadListing[] }>('/uploads', { limit: '2' })).body.uploads).toHaveLength(2);
  });

  it('GET /uploads lists each key once, as it now stands; history=true every version, replaced ones naming what replaced them', async () => {
    const u = uid();
    const [kept, gone] = [`states-${u}/kept.txt`, `states-${u}/gone.txt`];
    const first = await ingest(kept, INDY_300G);
    const second = await ingest(kept, REDUX);
    const goneVersions = [await ingest(gone, INDY_300G), await ingest(gone, SYNC_10M)];
    const removal = s3EventRecord({
      eventName: 'ObjectRemoved:Delete',
      bucket: env.bucket,
      key: gone,
      sequencer: sequencer(),
    });
    expect(await ingestHandler(sqsEvent([removal]), lambdaContext())).toEqual({ batchItemFailures: [] });

    const mine = (uploads: UploadListing[]) =>
      uploads
        .filter((x) => x.key.startsWith(`states-${u}/`))
        .map((x) => ({ key: x.key, version: x.version, status: x.status, replacedBy: x.replacedBy }));
    const current = await get<{ uploads: UploadListing[] }>('/uploads', { limit: '1000' });
    // One row a key, newest update first: the deleted key as deleted, the overwritten one as its new version.
    expect(mine(current.body.uploads)).toEqual([
      { key: gone, version: goneVersions[1], status: 'deleted', replacedBy: undefined },
      { key: kept, version: second, status: 'ready', replacedBy: undefined },
    ]);
    const history = await get<{ uploads: UploadListing[] }>('/uploads', { limit: '1000', history: 'true' });
    expect(mine(history.body.uploads)).toEqual(
      expect.arrayContaining([
        { key: kept, version: first, status: 'replaced', replacedBy: second },
        { key: kept, version: second, status: 'ready', replacedBy: undefined },
        // Replaced first, then deleted with its key: it still names what replaced it.
        { key: gone, version: goneVersions[0], status: 'deleted', replacedBy: goneVersions[1] },
        { key: gone, version: goneVersions[1], status: 'deleted', replacedBy: undefined },
      ]),
    );
    expect(mine(history.body.uploads)).toHaveLength(4);
    // The deleted key's runs are gone.
    for (const version of goneVersions)
      expect((await get<ErrorBody>(`/runs/${runId(env.bucket, gone, version, 0)}`)).status).toBe(404);

    // The status filter in both modes: a replaced version is history only.
    expect(
      mine((await get<{ uploads: UploadListing[] }>('/uploads', { status: 'replaced', limit: '1000' })).body.uploads),
    ).toEqual([]);
    expect(
      mine(
        (await get<{ uploads: UploadListing[] }>('/uploads', { status: 'replaced', history: 'true', limit: '1000' }))
          .body.uploads,
      ),
    ).toEqual([{ key: kept, version: first, status: 'replaced', replacedBy: second }]);
    expect(
      mine(
        (await get<{ uploads: UploadListing[] }>('/uploads', { status: 'deleted', history: 'true', limit: '1000' }))
          .body.uploads,
      ),
    ).toHaveLength(2);

    // Paging in history: one record a page, every record once, and a cursor of one mode is refused by the other.
    const seen: string[] = [];
    let next: string | undefined;
    let pages = 0;
    do {
      const page = await get<{ uploads: UploadListing[]; next?: string }>('/uploads', {
        limit: '1',
        history: 'true',
        ...(next ? { next } : {}),
      });
      seen.push(...page.body.uploads.map((x) => `${x.key} ${x.version}`));
      next = page.body.next;
      pages++;
    } while (next !== undefined && pages < 2000);
    expect(seen.length).toBe(new Set(seen).size);
    expect(seen.filter((x) => x.startsWith(`states-${u}/`))).toHaveLength(4);
    const historyCursor = (await get<{ next?: string }>('/uploads', { limit: '1', history: 'true' })).body.next!;
    expect((await get<ErrorBody>('/uploads', { limit: '1', next: historyCursor })).status).toBe(400);
    expect((await get<ErrorBody>('/uploads', { history: 'yes' })).body.error.message).toMatch(
      /^history: expected true/,
    );
  });

  it('POST /uploads presigns a PUT that stores the object with its device and tags', async () => {
    const key = `presigned-${uid()}/scsi2sd redux.txt`;
    const r = await call<PresignedUpload>('POST', '/uploads', {
      body: { key, device: 'indy-scsi2sd', tags: { interface: 'SCSI', rpm: '7200' }, size: REDUX.length },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      url: expect.stringMatching(
        new RegExp(`^${env.s3Endpoint}/${env.bucket}/presigned-[0-9a-f]{8}/scsi2sd%20redux\\.txt\\?`),
      ),
      method: 'PUT',
      headers: {
        'x-amz-meta-device': 'indy-scsi2sd',
        'x-amz-meta-tags': 'interface=SCSI;rpm=7200',
        'content-length': String(REDUX.length),
      },
      bucket: env.bucket,
      key,
      expiresIn: 900,
    });
    const url = new URL(r.body.url);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    // The size is signed too: S3 refuses a body of another length.
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host;x-amz-meta-device;x-amz-meta-tags');
    expect(url.searchParams.has('x-amz-meta-device')).toBe(false);

    // (s3rver does not check V4 signatures: that the headers are signed is checked on the URL above.)
    const put = await fetch(r.body.url, { method: 'PUT', headers: r.body.headers, body: REDUX });
    expect(put.status).toBe(200);
    await put.arrayBuffer();
    const head = await (env.s3 as S3Client).send(new HeadObjectCommand({ Bucket: env.bucket, Key: key }));
    expect(head.ContentLength).toBe(REDUX.length);
    expect(head.Metadata).toEqual({ device: 'indy-scsi2sd', tags: 'interface=SCSI;rpm=7200' });

    // Without device and tags there is nothing to send but the body (and its length).
    const plain = await call<PresignedUpload>('POST', '/uploads', { body: { key: `plain-${uid()}.txt`, size: 3 } });
    expect(plain.status).toBe(200);
    expect(plain.body.headers).toEqual({ 'content-length': '3' });
  });

  it('POST /uploads refuses what the lab would not ingest', async () => {
    const cases: [Call, RegExp][] = [
      [
        { body: { key: 'big.txt', size: 10_000_001 } },
        /^size: 10000001 bytes is more than this lab's limit of 10000000 bytes$/,
      ],
      [{ body: { key: 'a\u0001b.txt', size: 1 } }, /^key: no control characters/],
      [{ body: { key: 'x'.repeat(1025), size: 1 } }, /^key: at most 1024 bytes/],
      [{ body: { key: '', size: 1 } }, /^key: expected an object key/],
      [{ body: { device: 'x', size: 1 } }, /^key: required/],
      [{ body: { key: 'ok.txt' } }, /^size: required; expected the number of bytes/],
      [{ body: { key: 'ok.txt', size: 1, tags: { 'bad key': 'v' } } }, /^tags: /],
      [{ body: { key: 'ok.txt', size: -1 } }, /^size: /],
      [
        { body: { key: 'ok.txt', size: 1, colour: 'red' } },
        /^colour: unknown field; expected key, size, device, tags$/,
      ],
      [{ rawBody: '{not json' }, /^body: expected a JSON object/],
      [{ rawBody: '[1,2]' }, /^body: expected a JSON object/],
    ];
    for (const [c, message] of cases) {
      const r = await call<ErrorBody>('POST', '/uploads', c);
      expect({ status: r.status, code: r.body.error?.code, message: r.body.error?.message }).toEqual({
        status: 400,
        code: 'bad_request',
        message: expect.stringMatching(message),
      });
    }
  });
});

// ---------------------------------------------------------------- answers

describe('comparison answers', () => {
  /** The stamps of two exact labels (one BatchGet, and the DEVICES Query of each label's series labels), sorted as counting() sorts. */
  const STAMPS = ['BatchGet'];
  /** Reading two diskperf labels: the byDevice entries of each, which hold its runs (no series labels to list). */
  const TWO_LABELS = ['Query byDevice', 'Query byDevice'];

  it('are reused only for the same data: a new run is a new answer, and the cache can be turned off', async () => {
    const u = uid();
    await ingest(`cache-a-${u}/redux.txt`, REDUX);
    await ingest(`cache-b-${u}/sync.txt`, SYNC_10M);
    const query = { a: `cache-a-${u}`, b: `cache-b-${u}` };
    const first = await get<Comparison>('/compare', query);
    expect(first.headers['x-benchdrop-answer']).toBe('computed');
    const second = await get<Comparison>('/compare', query);
    expect(second.headers['x-benchdrop-answer']).toBe('cached');
    expect(second.text).toBe(first.text);
    expect(second.body.ratio!.toFixed(2)).toBe('1.90');

    // Another run on a side: the data read differs, so the answer is computed again.
    await ingest(`cache-a-${u}/redux-again.txt`, REDUX);
    const third = await get<Comparison>('/compare', query);
    expect(third.headers['x-benchdrop-answer']).toBe('computed');
    expect(third.body.a.runs).toBe(2);
    expect(third.body.ci).toBeNull();

    setApiDeps({ ...deps, cacheAnswers: false });
    try {
      const uncached = await get<Comparison>('/compare', query);
      expect(uncached.headers['x-benchdrop-answer']).toBe('computed');
      expect(uncached.text).toBe(third.text);
    } finally {
      setApiDeps(deps);
    }
  });

  it('for two device labels read only their stamps while neither label changed; an upload or a delete on a side changes its stamp', async () => {
    const u = uid();
    await ingest(`stamp-a-${u}/redux.txt`, REDUX);
    await ingest(`stamp-b-${u}/sync.txt`, SYNC_10M);
    const query = { a: `stamp-a-${u}`, b: `stamp-b-${u}` };
    // As if every write so far had been SETTLE_MS ago.
    const counter = counting({ ...deps, now: () => Date.now() + SETTLE_MS + 1000 });
    setApiDeps(counter.deps);
    try {
      const first = await get<Comparison>('/compare', query);
      expect(first.headers['x-benchdrop-answer']).toBe('computed');
      expect(counter.detail().reads).toEqual([...STAMPS, ...TWO_LABELS]);
      const second = await get<Comparison>('/compare', query);
      expect(second.headers['x-benchdrop-answer']).toBe('cached');
      expect(second.text).toBe(first.text);
      // The two DEVICES items, and the (empty) lists of labels under them, read strongly consistent: one unit per item.
      expect(counter.detail()).toEqual({ reads: STAMPS, units: 2 });

      // A second run on side a: its upload stamps the label, the runs are read again.
      await ingest(`stamp-a-${u}/redux-2.txt`, REDUX);
      const third = await get<Comparison>('/compare', query);
      expect(third.body.a.runs).toBe(2);
      expect(counter.detail().reads).toEqual([...STAMPS, ...TWO_LABELS]);
      expect((await get<Comparison>('/compare', query)).text).toBe(third.text);
      expect(counter.detail().reads).toEqual(STAMPS);

      // Deleting it stamps the label again: back to one run (the first answer's data, so its statistics are reused).
      const removed = s3EventRecord({
        eventName: 'ObjectRemoved:Delete',
        bucket: env.bucket,
        key: `stamp-a-${u}/redux-2.txt`,
        sequencer: sequencer(),
      });
      expect(await ingestHandler(sqsEvent([removed]), lambdaContext())).toEqual({ batchItemFailures: [] });
      const fourth = await get<Comparison>('/compare', query);
      expect(fourth.body.a.runs).toBe(1);
      expect(fourth.text).toBe(first.text);
      expect(counter.detail().reads).toEqual([...STAMPS, ...TWO_LABELS]);

      // Other selectors are not found by stamps: a pattern reads the labels it may reach every time.
      await get<Comparison>('/compare', { a: `stamp-a-${u}*`, b: query.b });
      await get<Comparison>('/compare', { a: `stamp-a-${u}*`, b: query.b });
      expect(counter.detail().reads).not.toContain('BatchGet');
    } finally {
      setApiDeps(deps);
    }
  });

  it('for a bare iostat label cover every upload under it: a new disk, a run more on one, or a disk gone is a new answer', async () => {
    const u = uid();
    const log = (devices: string[]) => Buffer.from(solarisIostatLog({ reports: 3, devices }));
    await ingest(`stamp-io-a-${u}/one.txt`, log(['sda', 'sdb']));
    await ingest(`stamp-io-b-${u}/one.txt`, log(['sda', 'sdb']));
    const query = { a: `stamp-io-a-${u}`, b: `stamp-io-b-${u}`, metric: 'write_iops' };
    const counter = counting({ ...deps, now: () => Date.now() + SETTLE_MS + 1000 });
    setApiDeps(counter.deps);
    const answer = async (made: 'computed' | 'cached') => {
      const r = await get<Comparison>('/compare', query);
      expect(r.status).toBe(200);
      expect(r.headers['x-benchdrop-answer']).toBe(made);
      return r.body;
    };
    try {
      expect((await answer('computed')).a).toMatchObject({ runs: 1, observations: 2 });
      counter.detail();
      await answer('cached');
      expect(counter.detail().reads).toEqual(STAMPS);

      // An upload of a new disk under side a: the label is stamped with its series.
      await ingest(`stamp-io-a-${u}/two.txt`, log(['sdd']));
      expect((await answer('computed')).a).toMatchObject({
        runs: 2,
        devices: ['sda', 'sdb', 'sdd'].map((n) => `stamp-io-a-${u}/${n}`),
      });
      await answer('cached');

      // A run more on one disk.
      await ingest(`stamp-io-a-${u}/three.txt`, log(['sdb']));
      expect((await answer('computed')).a).toMatchObject({ runs: 3, observations: 4 });
      await answer('cached');

      // Deleting the only run of a disk: the label is stamped by the delete.
      const removed = s3EventRecord({
        eventName: 'ObjectRemoved:Delete',
        bucket: env.bucket,
        key: `stamp-io-a-${u}/two.txt`,
        sequencer: sequencer(),
      });
      expect(await ingestHandler(sqsEvent([removed]), lambdaContext())).toEqual({ batchItemFailures: [] });
      expect((await answer('computed')).a).toMatchObject({
        runs: 2,
        devices: ['sda', 'sdb'].map((n) => `stamp-io-a-${u}/${n}`),
      });
    } finally {
      setApiDeps(deps);
    }
  });

  it('found by stamps are kept only for runs still for SETTLE_MS, and served for MAX_AGE_MS at most', async () => {
    const u = uid();
    await ingest(`settle-a-${u}/redux.txt`, REDUX);
    await ingest(`settle-b-${u}/sync.txt`, SYNC_10M);
    const query = { a: `settle-a-${u}`, b: `settle-b-${u}` };
    let shift = 0;
    const counter = counting({ ...deps, now: () => Date.now() + shift });
    setApiDeps(counter.deps);
    try {
      // Just written: a DynamoDB index may still lag, so the runs are read for every request.
      for (let i = 0; i < 2; i++) await get<Comparison>('/compare', query);
      expect(counter.detail().reads).toEqual([...STAMPS, ...STAMPS, ...TWO_LABELS, ...TWO_LABELS].sort());
      shift = SETTLE_MS;
      await get<Comparison>('/compare', query);
      expect(counter.detail().reads).toEqual([...STAMPS, ...TWO_LABELS]);
      expect((await get<Comparison>('/compare', query)).headers['x-benchdrop-answer']).toBe('cached');
      expect(counter.detail().reads).toEqual(STAMPS);
      // Past MAX_AGE_MS the kept answer is not served: read again, and kept again.
      shift = SETTLE_MS + MAX_AGE_MS + 1000;
      await get<Comparison>('/compare', query);
      expect(counter.detail().reads).toEqual([...STAMPS, ...TWO_LABELS]);
      await get<Comparison>('/compare', query);
      expect(counter.detail().reads).toEqual(STAMPS);
    } finally {
      setApiDeps(deps);
    }
  });
});

// ---------------------------------------------------------------- tags

describe('tag selectors', () => {
  it('read the byTag index: the runs carrying the tag, and nothing more when unrelated runs are added', async () => {
    const u = uid();
    const sas = `SAS-${u}`;
    await ingest(`tagged-a-${u}/redux.txt`, REDUX, { metadata: { tags: `interface=${sas};rpm=10000` } });
    await ingest(`tagged-b-${u}/sync.txt`, SYNC_10M, { metadata: { tags: `interface=SCSI-${u}` } });
    const query = { a: `tag.interface=${sas}`, b: `tag.interface=SCSI-${u}`, metric: 'all' };
    const counter = counting(deps);
    setApiDeps(counter.deps);
    try {
      const first = await get<Comparison>('/compare', query);
      expect(first.status).toBe(200);
      // The seed ratio, found by tag instead of by device.
      expect(first.body.ratio!.toFixed(2)).toBe('1.90');
      expect(first.body.a).toMatchObject({ runs: 1, devices: [`tagged-a-${u}`] });
      const before = counter.detail();
      // Per side: one Query of byTag and one BatchGet of the runs it names; no label is listed or read.
      expect(before.reads).toEqual(['BatchGet', 'BatchGet', 'Query byTag', 'Query byTag']);
      expect(before.units).toBeGreaterThan(0);

      // Unrelated: untagged devices, devices with another interface (and the same rpm), a tagged iostat upload.
      for (let i = 0; i < 5; i++) {
        await ingest(`untagged-${u}-${i}/redux.txt`, REDUX);
        await ingest(`sata-${u}-${i}/sync.txt`, SYNC_10M, { metadata: { tags: `interface=SATA-${u};rpm=10000` } });
      }
      await ingest(`tagged-host-${u}/iostat.txt`, SOLARIS_XN, { metadata: { tags: `rpm=10000;interface=SATA-${u}` } });
      counter.detail();
      const again = await get<Comparison>('/compare', query);
      expect(again.body.ratio).toBe(first.body.ratio);
      expect(counter.detail()).toEqual(before);

      // Another run with the tag, on another device, is found; other terms narrow it.
      await ingest(`tagged-c-${u}/redux.txt`, REDUX, { metadata: { tags: `interface=${sas}` } });
      expect((await get<Comparison>('/compare', query)).body.a).toMatchObject({
        runs: 2,
        devices: [`tagged-a-${u}`, `tagged-c-${u}`],
      });
      expect(
        (await get<Comparison>('/compare', { ...query, a: `tag.interface=${sas},tag.rpm=10000` })).body.a,
      ).toMatchObject({ runs: 1, devices: [`tagged-a-${u}`] });
      expect(
        (await get<Comparison>('/compare', { ...query, a: `tag.interface=${sas},tagged-c*` })).body.a,
      ).toMatchObject({ runs: 1, devices: [`tagged-c-${u}`] });
      counter.detail();

      // A TAG item whose run has no META (half-written, or half-deleted) does not count.
      const ghost = `r${'9'.repeat(24)}`;
      await env.db.send(
        new PutCommand({
          TableName: env.tableName,
          Item: {
            pk: runPk(ghost),
            sk: tagKey('interface', sas),
            type: 'tag',
            runId: ghost,
            format: 'diskperf',
            label: 'ghost',
            tags: { interface: sas },
            time: '2099-01-01T00:00:00',
            gsi3pk: tagKey('interface', sas),
            gsi3sk: deviceSk('2099-01-01T00:00:00', ghost),
          },
        }),
      );
      expect((await get<Comparison>('/compare', query)).body.a.runs).toBe(2);

      // Deleting an object removes its runs' TAG items with them.
      const removed = s3EventRecord({
        eventName: 'ObjectRemoved:Delete',
        bucket: env.bucket,
        key: `tagged-c-${u}/redux.txt`,
        sequencer: sequencer(),
      });
      expect(await ingestHandler(sqsEvent([removed]), lambdaContext())).toEqual({ batchItemFailures: [] });
      expect((await get<Comparison>('/compare', query)).body.a).toMatchObject({ runs: 1, devices: [`tagged-a-${u}`] });
      const [thirdRun] = idsOf(`tagged-c-${u}/redux.txt`, 1);
      const left = await env.db.send(
        new QueryCommand({
          TableName: env.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': runPk(thirdRun!) },
        }),
      );
      expect(left.Items).toEqual([]);
    } finally {
      setApiDeps(deps);
    }
  }, 30_000);

  it('on a table made before the tag index, fail with a message saying so', async () => {
    const tableName = `before-tags-${uid()}`;
    const input = createTableInput(tableName);
    const kept = input.GlobalSecondaryIndexes!.filter((i) => i.IndexName !== INDEXES.byTag.name);
    await createLocalTable(tableName, {
      region: 'us-east-1',
      endpoint: env.dynamodbEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      input: {
        ...input,
        GlobalSecondaryIndexes: kept,
        AttributeDefinitions: input.AttributeDefinitions!.filter(
          (a) => a.AttributeName !== INDEXES.byTag.partitionKey && a.AttributeName !== INDEXES.byTag.sortKey,
        ),
      },
    });
    await expect(resolveSelector({ db: env.db, tableName }, parseSelector('tag.interface=SAS'))).rejects.toThrow(
      `table ${tableName} has no byTag index`,
    );
  });
});

// ---------------------------------------------------------------- reads

describe('reads per comparison', () => {
  it('do not grow when unrelated devices and runs are added', async () => {
    // Every answer read (answers kept between requests cost less: 'comparison answers' above).
    const counter = counting({ ...deps, cacheAnswers: false });
    setApiDeps(counter.deps);
    const comparisons: Record<string, Record<string, string>> = {
      'redux vs sync': { a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync', metric: 'all' },
      'redux vs 300G*': { a: 'scsi2sd_redux', b: '300G*' },
      'x4100 maxcontig': {
        a: 'x4100/c0t0d0,context~tunefs -a 1 /opt',
        b: 'x4100/c0t0d0,context~tunefs -a 32',
        metric: 'write_iops',
      },
      'x4100 vs fedora-ws': { a: 'x4100', b: 'fedora-ws', metric: 'write_iops' },
      'x4100 vs one of its disks': { a: 'x4100', b: 'x4100/c0t0d0,context~tunefs -a 32', metric: 'write_iops' },
    };
    const measure = async () => {
      const out: Record<string, { reads: number; ratio: number | null }> = {};
      for (const [name, query] of Object.entries(comparisons)) {
        counter.take();
        const r = await get<Comparison>('/compare', query);
        expect(r.status).toBe(200);
        out[name] = { reads: counter.take(), ratio: r.body.ratio };
      }
      return out;
    };
    try {
      const before = await measure();
      // Per named label one Query of its byDevice entries, which hold its runs, iostat ones with their series; a series
      // label (no entries of its own) adds one DEVICES Query of labels under it and the Query of its upload's label, whose
      // METAs hold its series and their heads (x4100/c0t0d0 also has the half-written run's SERIES entry of 'devices and
      // runs': one BatchGet looks for its META); a prefix one DEVICES Query and one per label. What both sides read is read once.
      expect(Object.fromEntries(Object.entries(before).map(([k, v]) => [k, v.reads]))).toEqual({
        'redux vs sync': 2,
        'redux vs 300G*': 3,
        'x4100 maxcontig': 4,
        'x4100 vs fedora-ws': 2,
        'x4100 vs one of its disks': 4,
      });

      // 20 unrelated devices: 10 diskperf labels and 10 iostat uploads of 4 series each (listed, and their labels).
      for (let i = 0; i < 10; i++) {
        await ingest(`unrelated-disk-${i}/redux.txt`, REDUX);
        await ingest(`unrelated-host-${i}/iostat.txt`, SOLARIS_XN);
      }
      setApiDeps(counter.deps);
      const devices = await get<{ devices: DeviceEntry[]; next?: string }>('/devices', { limit: '1000' });
      expect(devices.body.next).toBeUndefined();
      expect(devices.body.devices.filter((d) => d.label.startsWith('unrelated-')).length).toBe(10 + 10 * (1 + 4));

      const after = await measure();
      expect(after).toEqual(before);
    } finally {
      setApiDeps(deps);
    }
  }, 30_000);
});
