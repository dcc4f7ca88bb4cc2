/**
 * The ingest Lambda handler against real emulators: s3rver holds the uploads,
 * dynalite the table (built from shared/store/table.ts). Events are real-shaped S3
 * notifications in SQS batches (infra/local/events.ts), the handler is the one
 * deployed (functions/ingest/handler.ts). Items are read back with Get, Query and,
 * here in the tests only, Scan.
 *
 * Each test uses its own keys and labels, so tests do not see each other's items.
 */
import '../../harness/quiet.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import type { SQSBatchResponse } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler, ingestDeps, setIngestDeps } from '../../functions/ingest/handler.ts';
import {
  s3EventRecord,
  s3TestEvent,
  sequencerGenerator,
  sqsEvent,
  type S3EventName,
  type S3NotificationRecord,
  type SqsBody,
  type SqsEventOptions,
} from '../../infra/local/events.ts';
import { objectRefOf, type IngestDeps } from '../../shared/ingest.ts';
import {
  DEVICES_PK,
  devicePk,
  objectPk,
  runId,
  runPk,
  sortableSequencer,
  uploadPk,
  uploadSk,
} from '../../shared/store/keys.ts';
import type { IostatRun } from '../../shared/model.ts';
import { parseText } from '../../shared/parsers/index.ts';
import { ROW_GROUP_SAMPLES } from '../../shared/store/samples-schema.ts';
import { readSamplesObject, rowGroupSeries, seriesSamples, storedForm } from '../support/samples.ts';
import { diskperfRows as storedRows, storedSeriesOf } from '../../shared/store/packing.ts';
import type { DiskperfRunItem, IostatRunItem } from '../../shared/store/items.ts';
import { ReadSession } from '../../shared/store/session.ts';
import { samplesKey } from '../../shared/store/samples-schema.ts';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { pageUploads } from '../../shared/listings.ts';
import { INDEXES } from '../../shared/store/table.ts';
import { createS3Client, INGEST_DYNAMODB_ATTEMPTS } from '../../shared/aws.ts';
import { ENV } from '../../shared/config.ts';
import {
  REGION,
  S3RVER_CREDENTIALS,
  startEmulators,
  type Emulators,
  type PutOptions,
  type PutResult,
} from '../../harness/emulators.ts';
import { fixture } from '../support/fixtures.ts';
import { startFaultProxy } from '../support/fault-proxy.ts';
import { lambdaContext } from '../../harness/lambda.ts';
import { solarisDevices, solarisIostatLog, writeIops } from '../../harness/logs.ts';
import {
  getCurrent,
  getItem,
  getUpload,
  itemsOfKey,
  jsonBytes,
  queryAll,
  runItems,
  scanAll,
  type Item,
} from '../../harness/table.ts';

const REDUX = fixture('irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt');
const INDY_300G = fixture('irix/irix-6.5-indy-300G-10K.diskperf.txt');
const SYNC_10M = fixture('irix/irix-6.5-indy-scsi2sd-10M-sync.diskperf.txt');
const X4100 = fixture('solaris/solaris-10-x4100-sas-maxcontig.iostat.txt');
const LINUX = fixture('linux/linux-sysstat-12.7.5-x.txt');
const RANDOM_BYTES = fixture('bad/random-bytes.bin');
const PROSE = fixture('bad/prose-only.txt');

/** Every timestamp the pipeline writes, so items can be compared exactly. */
const NOW = '2024-05-01T12:00:00.000Z';
const ITEM_LIMIT = 400 * 1024;
const X4100_NATIVES = ['d10', 'd11', 'd12', 'c0t0d0', 'c0t1d0'];
const X4100_CONTEXTS = [
  ['tunefs -a 32 /opt', 'dd if=/dev/zero of=/opt/q1 bs=1024k', 'iostat -xnz 5 2'],
  ['tunefs -a 16 /opt'],
  ['tunefs -a 8 /opt'],
  ['tunefs -a 1 /opt'],
];

let env: Emulators;
let deps: IngestDeps;
const sequencer = sequencerGenerator(0x1000000000000n);
const uid = () => randomUUID().slice(0, 8);

beforeAll(async () => {
  env = await startEmulators({ maxUploadBytes: 10_000_000 });
  deps = { ...env.deps, now: () => NOW };
  setIngestDeps(deps);
});

afterAll(async () => {
  setIngestDeps(undefined);
  await env?.stop();
});

// ---------------------------------------------------------------- helpers

async function deliver(
  bodies: SqsBody[],
  options: SqsEventOptions = {},
  with_: IngestDeps = deps,
): Promise<SQSBatchResponse> {
  setIngestDeps(with_);
  try {
    return await handler(sqsEvent(bodies, options), lambdaContext());
  } finally {
    setIngestDeps(deps);
  }
}

interface Uploaded extends PutResult {
  key: string;
  event: S3NotificationRecord;
  /** The version the pipeline files it under (objectRefOf: versionId, else eTag and sequencer). */
  version: string;
}

/** Upload to s3rver and build the event S3 would send for it. */
async function upload(
  key: string,
  body: string | Uint8Array,
  options: PutOptions & { versionId?: string; sequencer?: string; eventName?: S3EventName } = {},
): Promise<Uploaded> {
  const put = await env.put(key, body, options);
  const event = s3EventRecord({
    eventName: options.eventName ?? 'ObjectCreated:Put',
    bucket: env.bucket,
    key,
    size: put.size,
    eTag: put.eTag,
    ...(options.versionId !== undefined ? { versionId: options.versionId } : {}),
    sequencer: options.sequencer ?? sequencer(),
  });
  return { ...put, key, event, version: objectRefOf(event).version };
}

function removed(key: string, options: { versionId?: string; eventName?: S3EventName } = {}): S3NotificationRecord {
  return s3EventRecord({
    eventName: options.eventName ?? 'ObjectRemoved:Delete',
    bucket: env.bucket,
    key,
    ...(options.versionId !== undefined ? { versionId: options.versionId } : {}),
    sequencer: sequencer(),
  });
}

const noFailures: SQSBatchResponse = { batchItemFailures: [] };
const ids = (key: string, version: string, count: number) =>
  Array.from({ length: count }, (_, i) => runId(env.bucket, key, version, i));
const upload_ = (key: string, version: string) => getUpload(env, env.bucket, key, version);
const current = (key: string) => getCurrent(env, env.bucket, key);
const meta = (id: string) => getItem(env, runPk(id), 'META');
/** The series a run's META holds, unpacked as readers see them. */
const seriesOf = (run: Item | undefined) => storedSeriesOf(run as unknown as IostatRunItem) as unknown as Item[];
/** The series filed under a series label, as comparisons find them: from the METAs of the label's upload. */
const filedUnder = async (label: string) =>
  (await new ReadSession({ db: env.db, tableName: env.tableName }).indexed(label)) as unknown as Item[];
/** Every key of the results bucket (the tests' objects are few). */
async function resultsKeys(): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await env.s3.send(
      new ListObjectsV2Command({ Bucket: env.resultsBucket, ...(token ? { ContinuationToken: token } : {}) }),
    );
    keys.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}
const byDevice = (label: string) => queryAll(env, devicePk(label), INDEXES.byDevice);

/** The rows of a diskperf fixture, read independently of the parser. */
function diskperfRows(text: Buffer): { req_size: number; values: Record<string, number> }[] {
  const names = ['fwd_wt', 'fwd_rd', 'bwd_wt', 'bwd_rd', 'rnd_wt', 'rnd_rd'];
  return text
    .toString('utf8')
    .split('\n')
    .filter((line) => /^\s*\d+(\s+\d+\.\d+){6}\s*$/.test(line))
    .map((line) => {
      const [size, ...values] = line.trim().split(/\s+/).map(Number);
      return { req_size: size!, values: Object.fromEntries(values.map((v, i) => [names[i]!, v])) };
    });
}

/** The table of a stored diskperf run, read back from its packed columns. */
const tableOf = (item: Item | undefined) => storedRows(item as unknown as DiskperfRunItem);

/** The parts of a run's items that do not depend on where the object was stored. */
function contentOf(items: Item[]): unknown[] {
  return items.map((item) => {
    const { pk: _pk, runId: _r, label: _l, source: _s, gsi1pk: _g1, gsi1sk: _g2, device: _d, ...rest } = item;
    // The series, packed or not, without the label they are filed under.
    const series = seriesOf(item);
    delete rest['packedSeries'];
    if (Array.isArray(series)) rest['series'] = series.map(({ device: _x, ...s }) => s);
    // The samples object is named by the run id; its size and rows are content.
    if (rest['samples']) rest['samples'] = { ...(rest['samples'] as Item), key: undefined };
    return rest;
  });
}

// ---------------------------------------------------------------- the four samples

describe('the four sample logs', () => {
  it('diskperf: the redux table is one run with every row, its header and its label, found by device', async () => {
    const label = `scsi2sd-${uid()}`;
    const up = await upload(`${label}/irix-indy-scsi2sd-redux.diskperf.txt`, REDUX);
    expect(await deliver([up.event])).toEqual(noFailures);

    const [id] = ids(up.key, up.version, 1);
    const record = await upload_(up.key, up.version);
    expect(record).toEqual({
      pk: uploadPk(env.bucket, up.key),
      sk: uploadSk(up.version),
      type: 'upload',
      status: 'ready',
      // The delivery that ended it (shared/store/uploads.ts).
      claim: expect.stringMatching(/^[0-9a-f-]{36}$/),
      bucket: env.bucket,
      key: up.key,
      version: up.version,
      eTag: up.eTag,
      size: REDUX.length,
      sequencer: up.event.s3.object.sequencer,
      runIds: [id],
      runCount: 1,
      format: 'diskperf',
      device: label,
      tags: {},
      warnings: 0,
      createdAt: NOW,
      updatedAt: NOW,
      gsi2pk: 'STATUS#ready',
      gsi2sk: `${NOW}#${env.bucket}/${up.key}#${up.version}`,
    });
    expect(await current(up.key)).toEqual({
      pk: objectPk(env.bucket, up.key),
      sk: 'CURRENT',
      type: 'object',
      version: up.version,
      sequencer: sortableSequencer(up.event.s3.object.sequencer),
      runCount: 1,
      deleted: false,
      pending: [],
    });

    const run = await meta(id!);
    expect(run).toEqual({
      pk: runPk(id!),
      sk: 'META',
      type: 'run',
      runId: id,
      index: 0,
      format: 'diskperf',
      platform: 'irix',
      dialect: 'diskperf-1.2',
      label,
      name: 'scsi2sd_redux',
      host: 'IRIS',
      tags: {},
      context: ['diskperf -W -n scsi2sd_redux -c 1G -t 60 /tmp/testpath'],
      startLine: 2,
      endLine: 27,
      warnings: [],
      source: {
        bucket: env.bucket,
        key: up.key,
        version: up.version,
        eTag: up.eTag,
        size: REDUX.length,
        sequencer: up.event.s3.object.sequencer,
      },
      time: '2020-04-03T21:10:13',
      from: '2020-04-03T21:10:13',
      ingestedAt: NOW,
      meta: {
        version: '1.2',
        testName: 'scsi2sd_redux',
        testDate: 'Thu APR  3 21:10:13 2020',
        startedAt: '2020-04-03T21:10:13',
        machine: 'IRIX IRIS 6.5 10070055 IP22',
        host: 'IRIS',
        os: 'IRIX',
        osRelease: '6.5',
        cpuBoard: 'IP22',
        testType: 'XFS data subvolume',
        testPath: '/tmp/testpath',
        requestSizes: { min: 4096, max: 4194304 },
        parameters: { direct: 0, time: 60, scale: 1, delay: 0 },
        fileSizeBytes: 1073741824,
      },
      columns: ['fwd_wt', 'fwd_rd', 'bwd_wt', 'bwd_rd', 'rnd_wt', 'rnd_rd'],
      // The table is packed column-wise (checked below by reading it back).
      packedRows: { req_size: expect.any(String), values: expect.any(Object) },
      gsi1pk: devicePk(label),
      gsi1sk: `2020-04-03T21:10:13#${id}`,
    });
    expect(tableOf(run)).toEqual(diskperfRows(REDUX));
    expect(tableOf(run).find((r) => r.req_size === 4096)?.values.fwd_wt).toBe(2.84);
    expect(tableOf(run)).toHaveLength(11);

    // The device index finds the run; the device list knows the label.
    expect(await byDevice(label)).toEqual([run]);
    // Its change stamp names this upload: answers kept for the label are stale from now on.
    expect(await getItem(env, DEVICES_PK, label)).toEqual({
      pk: DEVICES_PK,
      sk: label,
      type: 'device',
      label,
      format: 'diskperf',
      lastSeen: NOW,
      changed: `${NOW} ${up.version}`,
    });
    // A diskperf run is one item: nothing else under its partition.
    expect(await runItems(env, id!)).toEqual([run]);
  });

  it('diskperf: the two other Indy tables, with their own values', async () => {
    const label = `indy-${uid()}`;
    const a = await upload(`${label}/300G-10K.txt`, INDY_300G);
    const b = await upload(`${label}/scsi2sd-10M-sync.txt`, SYNC_10M);
    expect(await deliver([a.event, b.event])).toEqual(noFailures);

    const runA = await meta(ids(a.key, a.version, 1)[0]!);
    const runB = await meta(ids(b.key, b.version, 1)[0]!);
    expect(runA).toMatchObject({ name: '300G_10K_SGI_Indy', label, host: 'isengard', time: '2019-12-14T13:53:04' });
    expect(runB).toMatchObject({ name: 'scsi2sd_10M_Sync', label, host: 'isengard', time: '2019-12-14T12:20:45' });
    expect(tableOf(runA)).toEqual(diskperfRows(INDY_300G));
    expect(tableOf(runB)).toEqual(diskperfRows(SYNC_10M));
    expect(tableOf(runA)[0]).toEqual({
      req_size: 4096,
      values: { fwd_wt: 16.22, fwd_rd: 13.13, bwd_wt: 15.82, bwd_rd: 4.09, rnd_wt: 0.01, rnd_rd: 17.52 },
    });
    expect(tableOf(runB)[0]).toEqual({
      req_size: 4096,
      values: { fwd_wt: 1.26, fwd_rd: 3.31, bwd_wt: 1.41, bwd_rd: 3.28, rnd_wt: 0.09, rnd_rd: 0.15 },
    });
    // Newest first by sort key is the reader's business; both are under the label.
    expect((await byDevice(label)).map((i) => i['name']).sort()).toEqual(['300G_10K_SGI_Indy', 'scsi2sd_10M_Sync']);
  });

  it('iostat: the x4100 log under x4100/ is four runs of five series x4100/<native>, c0t0d0 at 6028.7 w/s after tunefs -a 1', async () => {
    const key = 'x4100/solaris-10-x4100-sas-maxcontig.iostat.txt';
    const up = await upload(key, X4100);
    expect(await deliver([up.event])).toEqual(noFailures);

    const runIds = ids(key, up.version, 4);
    expect(await upload_(key, up.version)).toMatchObject({
      status: 'ready',
      runIds,
      runCount: 4,
      format: 'iostat',
      device: 'x4100',
      warnings: 0,
    });
    expect(await current(key)).toMatchObject({ version: up.version, runCount: 4, deleted: false });

    for (const [i, id] of runIds.entries()) {
      const run = await meta(id);
      expect(run).toMatchObject({
        type: 'run',
        index: i,
        format: 'iostat',
        platform: 'solaris',
        label: 'x4100',
        context: X4100_CONTEXTS[i],
        reports: 1,
        ingestedAt: NOW,
        time: NOW,
      });
      expect(seriesOf(run).map((s) => [s['native'], s['device'], s['sampleCount']])).toEqual(
        X4100_NATIVES.map((n) => [n, `x4100/${n}`, 1]),
      );
      // The META alone holds the series; the samples are in the run's object.
      const items = await runItems(env, id);
      expect(items.map((item) => item.sk)).toEqual(['META']);
      expect(run!['samples']).toMatchObject({ key: samplesKey(id), rows: X4100_NATIVES.length });
    }
    expect((await meta(runIds[0]!))!['meta']).toEqual({ command: 'iostat -xnz 5 2' });

    // Through its series label: c0t0d0 in all four runs, 6028.7 w/s in the tunefs -a 1 one.
    const series = await filedUnder('x4100/c0t0d0');
    expect(series.map((s) => s['runId']).sort()).toEqual([...runIds].sort());
    const last = series.find((s) => s['runId'] === runIds[3]);
    expect(last).toMatchObject({ type: 'series', native: 'c0t0d0', device: 'x4100/c0t0d0', tags: {} });
    expect((last!['summary'] as Record<string, unknown>)['write_iops']).toEqual({
      count: 1,
      mean: 6028.7,
      min: 6028.7,
      max: 6028.7,
      stddev: 0,
    });
    expect(series.find((s) => s['runId'] === runIds[0])!['summary']).toMatchObject({ write_iops: { mean: 84.9 } });

    // The samples are in the run's object in the results bucket, named by its META.
    const runMeta = await meta(runIds[3]!);
    expect(runMeta!['samples']).toEqual({ key: samplesKey(runIds[3]!), bytes: expect.any(Number), rows: 5 });
    const file = await readSamplesObject(env.s3, env.resultsBucket, samplesKey(runIds[3]!));
    expect(file.bytes.byteLength).toBe((runMeta!['samples'] as { bytes: number }).bytes);
    const [sample] = seriesSamples(file.rows, 'c0t0d0');
    expect(sample!.values).toEqual({
      iops: 6028.7,
      read_iops: 0,
      write_iops: 6028.7,
      read_kBps: 0,
      write_kBps: 48244.4,
      wait_queue: 127,
      active_queue: 222.2,
      wait_ms: 21.1,
      service_ms: 36.9,
      util_pct: 98,
    });
    expect(sample).toMatchObject({ report: 0, sinceBoot: true });
    for (const n of X4100_NATIVES)
      expect(await getItem(env, DEVICES_PK, `x4100/${n}`)).toMatchObject({ type: 'device', format: 'iostat' });
  });
});

// ---------------------------------------------------------------- labels, tags, keys

describe('labels and tags', () => {
  it('device metadata wins over the folder, the folder over the file; tags come from x-amz-meta-tags', async () => {
    const u = uid();
    const tags = 'interface=SAS;rpm=10000;medium=hdd';
    const fromMeta = await upload(`folder-${u}/redux.txt`, REDUX, { metadata: { device: `meta-${u}`, tags } });
    const fromFolder = await upload(`folder-${u}/x4100.txt`, X4100, { metadata: { tags } });
    const fromTestName = await upload(`sync-${u}.txt`, SYNC_10M);
    const fromHost = await upload(`linux-${u}.txt`, LINUX);
    const fromFileName = await upload(`x4100-${u}.txt`, X4100);
    expect(await deliver([fromMeta, fromFolder, fromTestName, fromHost, fromFileName].map((u) => u.event))).toEqual(
      noFailures,
    );

    const tagMap = { interface: 'SAS', rpm: '10000', medium: 'hdd' };
    expect(await meta(ids(fromMeta.key, fromMeta.version, 1)[0]!)).toMatchObject({
      label: `meta-${u}`,
      gsi1pk: devicePk(`meta-${u}`),
      tags: tagMap,
    });
    expect(await upload_(fromMeta.key, fromMeta.version)).toMatchObject({
      status: 'ready',
      device: `meta-${u}`,
      tags: tagMap,
    });

    const folderRun = await meta(ids(fromFolder.key, fromFolder.version, 1)[0]!);
    expect(folderRun).toMatchObject({ label: `folder-${u}`, tags: tagMap });
    expect(seriesOf(folderRun).map((s) => s['device'])).toEqual(X4100_NATIVES.map((n) => `folder-${u}/${n}`));
    expect((await filedUnder(`folder-${u}/c0t1d0`)).map((s) => s['tags'])).toEqual([tagMap, tagMap, tagMap, tagMap]);

    // No metadata, no folder: the diskperf test name, the iostat host, else the file name.
    expect(await meta(ids(fromTestName.key, fromTestName.version, 1)[0]!)).toMatchObject({
      label: 'scsi2sd_10M_Sync',
      tags: {},
    });
    const linuxRun = await meta(ids(fromHost.key, fromHost.version, 1)[0]!);
    expect(linuxRun).toMatchObject({ label: 'fedora-ws', host: 'fedora-ws', platform: 'linux' });
    expect(seriesOf(linuxRun).map((s) => s['device'])).toEqual([
      'fedora-ws/nvme0n1',
      'fedora-ws/sda',
      'fedora-ws/sdb',
      'fedora-ws/dm-0',
      'fedora-ws/zram0',
    ]);
    const fileRun = await meta(ids(fromFileName.key, fromFileName.version, 1)[0]!);
    expect(fileRun).toMatchObject({ label: `x4100-${u}` });
    expect(await filedUnder(`x4100-${u}/c0t0d0`)).toHaveLength(4);
  });

  it('tags that are not key=value fail the upload with a message naming the tag', async () => {
    const up = await upload(`badtags-${uid()}/x.txt`, REDUX, { metadata: { tags: 'interface SAS;rpm=10000' } });
    expect(await deliver([up.event])).toEqual(noFailures);
    const record = await upload_(up.key, up.version);
    expect(record).toMatchObject({ status: 'failed', line: 0, runIds: [] });
    expect(record!['message']).toContain('interface SAS');
    // Printers say the key: the message does not.
    expect(record!['message']).not.toContain(up.key);
    expect(await runItems(env, ids(up.key, up.version, 1)[0]!)).toEqual([]);
  });

  it('a multipart upload (ObjectCreated:CompleteMultipartUpload) is ingested like a put', async () => {
    const up = await upload(`multipart-${uid()}/redux.txt`, REDUX, {
      eventName: 'ObjectCreated:CompleteMultipartUpload',
    });
    expect(await deliver([up.event])).toEqual(noFailures);
    expect(await upload_(up.key, up.version)).toMatchObject({ status: 'ready', runCount: 1 });
  });

  it('a key with spaces, unicode, + and % is decoded from the event and read back', async () => {
    const cafe = await upload('my disks/Café run 1.txt', REDUX);
    expect(cafe.event.s3.object.key).toBe('my+disks/Caf%C3%A9+run+1.txt');
    const u = uid();
    const odd = await upload(`a+b ${u} 100%/c+d (2).txt`, SYNC_10M);
    expect(odd.event.s3.object.key).toBe(`a%2Bb+${u}+100%25/c%2Bd+(2).txt`);
    expect(await deliver([cafe.event, odd.event])).toEqual(noFailures);

    expect(await upload_('my disks/Café run 1.txt', cafe.version)).toMatchObject({
      status: 'ready',
      key: 'my disks/Café run 1.txt',
      device: 'my disks',
    });
    expect(await meta(ids('my disks/Café run 1.txt', cafe.version, 1)[0]!)).toMatchObject({
      label: 'my disks',
      source: { key: 'my disks/Café run 1.txt' },
    });
    expect(await upload_(`a+b ${u} 100%/c+d (2).txt`, odd.version)).toMatchObject({
      status: 'ready',
      device: `a+b ${u} 100%`,
    });
  });
});

// ---------------------------------------------------------------- formats of the object

describe('object encodings and sizes', () => {
  it('a .gz upload gives the same runs as the plain file', async () => {
    const u = uid();
    const plain = await upload(`plain-${u}/x4100.iostat.txt`, X4100);
    const gz = await upload(`gz-${u}/x4100.iostat.txt.gz`, gzipSync(X4100), { contentType: 'application/gzip' });
    expect(await deliver([plain.event, gz.event])).toEqual(noFailures);

    expect(await upload_(gz.key, gz.version)).toMatchObject({
      status: 'ready',
      format: 'iostat',
      device: `gz-${u}`,
      size: gzipSync(X4100).length,
    });
    const plainIds = ids(plain.key, plain.version, 4);
    const gzIds = ids(gz.key, gz.version, 4);
    expect((await upload_(gz.key, gz.version))!['runIds']).toEqual(gzIds);
    for (let i = 0; i < 4; i++) {
      const a = await runItems(env, plainIds[i]!);
      const b = await runItems(env, gzIds[i]!);
      expect(b.map((item) => item.sk)).toEqual(['META']);
      expect(contentOf(b)).toEqual(contentOf(a));
    }
  });

  it('an object larger than the limit fails, naming the limit', async () => {
    const up = await upload(`big-${uid()}/x4100.txt`, X4100);
    expect(await deliver([up.event], {}, { ...deps, maxUploadBytes: 1000 })).toEqual(noFailures);
    const record = await upload_(up.key, up.version);
    expect(record).toMatchObject({ status: 'failed', runIds: [] });
    expect(record!['message']).toContain('1000 bytes');
    expect(record!['message']).toContain(String(X4100.length));
    expect(await current(up.key)).toBeUndefined();
  });

  it('a gzip bomb (50 MB of spaces, 1 MB limit) fails quickly', async () => {
    const bomb = gzipSync(Buffer.alloc(50_000_000, 0x20), { level: 9 });
    const up = await upload(`bomb-${uid()}/spaces.txt.gz`, bomb);
    const started = Date.now();
    expect(await deliver([up.event], {}, { ...deps, maxUploadBytes: 1_000_000 })).toEqual(noFailures);
    expect(Date.now() - started).toBeLessThan(3000);
    const record = await upload_(up.key, up.version);
    expect(record).toMatchObject({ status: 'failed', runIds: [] });
    expect(record!['message']).toMatch(/^line 1: a line longer than 64 KiB/);
    expect(record!['details']).toMatch(/^bomb-.*spaces\.txt\.gz/);
  });

  it('a gzip of a valid log that decompresses past the limit fails at the limit', async () => {
    // One long session (about 4 MB), so the limit is hit inside a run.
    const log = solarisIostatLog({ reports: 10_000, devices: solarisDevices(4) });
    expect(log.length).toBeGreaterThan(4 * 1_000_000);
    const up = await upload(`bomb-${uid()}/iostat-long.txt.gz`, gzipSync(log));
    const started = Date.now();
    expect(await deliver([up.event], {}, { ...deps, maxUploadBytes: 1_000_000 })).toEqual(noFailures);
    expect(Date.now() - started).toBeLessThan(3000);
    const record = await upload_(up.key, up.version);
    expect(record).toMatchObject({ status: 'failed', line: 0, runIds: [] });
    expect(record!['message']).toContain('more than 1000000 bytes after decompression');
    // Runs streamed before the limit was hit are removed again, and no samples object is left.
    const items = await itemsOfKey(env, env.bucket, up.key);
    expect(items.filter((i) => i.pk.startsWith('RUN#'))).toEqual([]);
    const left = await resultsKeys();
    for (const id of ids(up.key, up.version, 2)) expect(left).not.toContain(samplesKey(id));
  });

  it('a file that fails after its first runs were stored leaves none of their samples objects', async () => {
    // Four runs of five devices: the limit of 12 series is passed in the third run.
    const key = `series-limit-${uid()}/x4100.txt`;
    const up = await upload(key, X4100);
    const limited = { ...deps, maxSeriesPerFile: 12 };
    expect(await deliver([up.event], {}, limited)).toEqual(noFailures);
    expect(await upload_(key, up.version)).toMatchObject({ status: 'failed' });
    const left = await resultsKeys();
    for (const id of ids(key, up.version, 4)) expect(left).not.toContain(samplesKey(id));
    expect((await itemsOfKey(env, env.bucket, key)).filter((i) => i.pk.startsWith('RUN#'))).toEqual([]);
  });

  it("a long iostat log's samples object holds every sample of every series, as the parser read them", async () => {
    const devices = solarisDevices(4);
    const reports = ROW_GROUP_SAMPLES + 500;
    const text = solarisIostatLog({ reports, devices, interval: 1 });
    const up = await upload(`long-${uid()}/iostat-xn-long.txt`, text);
    expect(await deliver([up.event])).toEqual(noFailures);
    const [id] = ids(up.key, up.version, 1);
    expect(await upload_(up.key, up.version)).toMatchObject({ status: 'ready', runIds: [id] });

    const items = await runItems(env, id!);
    for (const item of items) expect(jsonBytes(item), item.sk).toBeLessThan(ITEM_LIMIT);
    // The table holds the run's META only (its series in it): its samples are in the results bucket.
    expect(items.map((i) => i.sk)).toEqual(['META']);
    const run = items.find((i) => i.sk === 'META')!;
    expect(run['reports']).toBe(reports);
    expect(run['samples']).toEqual({ key: samplesKey(id!), bytes: expect.any(Number), rows: reports * devices.length });
    const file = await readSamplesObject(env.s3, env.resultsBucket, samplesKey(id!));
    const parsed = (await parseText(text)).runs[0] as IostatRun;
    for (const [d, native] of devices.entries()) {
      const stored = seriesOf(run).find((s) => s['native'] === native)!;
      const samples = seriesSamples(file.rows, native);
      expect(samples).toEqual(parsed.series.find((s) => s.device === native)!.samples!.map(storedForm));
      expect(samples.length).toBe(stored['sampleCount']);
      const writes = samples.map((s) => s.values.write_iops!);
      expect(writes).toEqual(samples.map((s) => writeIops(s.report, d)));
      expect(samples.filter((s) => s.sinceBoot)).toHaveLength(1);
      // The summary leaves out the since-boot report.
      const expectedMean = writes.slice(1).reduce((a, b) => a + b, 0) / (reports - 1);
      const summary = (stored['summary'] as Record<string, { count: number; mean: number }>)['write_iops']!;
      expect(summary.count).toBe(reports - 1);
      expect(summary.mean).toBeCloseTo(expectedMean, 9);
      expect(stored).toMatchObject({ sampleCount: reports, device: `${up.key.split('/')[0]}/${native}` });
    }
    // Row groups of one series each: a full one per ROW_GROUP_SAMPLES, the rest at the run's end.
    const groups = rowGroupSeries(file.metadata);
    for (const g of groups) expect(g.min).toBe(g.max);
    for (const native of devices)
      expect(groups.filter((g) => g.min === native).map((g) => g.rows)).toEqual([ROW_GROUP_SAMPLES, 500]);
  });

  it("replacing and deleting the key removes its runs' samples objects; a log without samples writes none", async () => {
    const key = `samples-gone-${uid()}/iostat.txt`;
    const first = await upload(key, X4100);
    expect(await deliver([first.event])).toEqual(noFailures);
    const firstIds = ids(key, first.version, 4);
    const exists = async (runId: string) => (await resultsKeys()).includes(samplesKey(runId));
    for (const runId of firstIds) expect(await exists(runId), runId).toBe(true);

    const second = await upload(key, solarisIostatLog({ reports: 3, devices: solarisDevices(2) }));
    expect(await deliver([second.event])).toEqual(noFailures);
    const [secondId] = ids(key, second.version, 1);
    for (const runId of firstIds) expect(await exists(runId), runId).toBe(false);
    expect(await exists(secondId!)).toBe(true);

    expect(await deliver([removed(key)])).toEqual(noFailures);
    expect(await exists(secondId!)).toBe(false);

    // diskperf runs have no samples object.
    const diskperf = await upload(`samples-none-${uid()}/redux.txt`, REDUX);
    expect(await deliver([diskperf.event])).toEqual(noFailures);
    const [diskperfId] = ids(diskperf.key, diskperf.version, 1);
    expect(await meta(diskperfId!)).not.toHaveProperty('samples');
    expect(await exists(diskperfId!)).toBe(false);
  });

  it('an iostat log of a host with 700 devices is stored, every item under 400 KB', async () => {
    const devices = solarisDevices(700);
    const up = await upload(`wide-${uid()}/iostat-xn-700.txt`, solarisIostatLog({ reports: 3, devices }));
    const response = await deliver([up.event]);
    const [id] = ids(up.key, up.version, 1);
    const record = await upload_(up.key, up.version);
    const items = await runItems(env, id!);
    const sizes = items.map((i) => [i.sk, jsonBytes(i)] as const).filter(([, size]) => size >= ITEM_LIMIT);
    expect({ response, status: record?.['status'], oversized: sizes }).toEqual({
      response: noFailures,
      status: 'ready',
      oversized: [],
    });
    expect(items.filter((i) => i.sk.startsWith('SERIES#'))).toHaveLength(700);
    const file = await readSamplesObject(env.s3, env.resultsBucket, samplesKey(id!));
    expect(new Set(file.rows.map((r) => r['series'])).size).toBe(700);
    expect(file.rows).toHaveLength(700 * 3);
    // Too many series for the META item: it counts them, the SERIES items hold the summaries.
    const run = items.find((i) => i.sk === 'META')!;
    expect(run).toMatchObject({ seriesCount: 700, reports: 3 });
    expect(run['series']).toBeUndefined();
    expect(await getItem(env, runPk(id!), 'SERIES#c44t11d0')).toMatchObject({
      device: `${up.key.split('/')[0]}/c44t11d0`,
      sampleCount: 3,
    });
  });

  it('samples past the buffer budget go out as partial row groups of one series each, none lost', async () => {
    const devices = solarisDevices(700);
    const text = solarisIostatLog({ reports: 3, devices });
    const up = await upload(`budget-${uid()}/iostat-xn-700.txt`, text);
    // 2,100 samples, report after report: the budget of 1,000 is reached twice before the end.
    expect(await deliver([up.event], {}, { ...deps, bufferedSamples: 1_000 })).toEqual(noFailures);
    const [id] = ids(up.key, up.version, 1);
    expect(await upload_(up.key, up.version)).toMatchObject({ status: 'ready' });
    const file = await readSamplesObject(env.s3, env.resultsBucket, samplesKey(id!));
    const groups = rowGroupSeries(file.metadata);
    for (const g of groups) expect(g.min).toBe(g.max);
    // 700 groups at each cut, then the 100 series of the last report's end.
    expect(groups.map((g) => g.rows).reduce((a, b) => a + b, 0)).toBe(2_100);
    expect(groups).toHaveLength(700 + 700 + 100);
    const parsed = (await parseText(text)).runs[0] as IostatRun;
    for (const native of [devices[0]!, devices[299]!, devices[300]!, devices[699]!])
      expect(seriesSamples(file.rows, native), native).toEqual(
        parsed.series.find((s) => s.device === native)!.samples!.map(storedForm),
      );
  });
});

// ---------------------------------------------------------------- delivery: replays, order, deletions

describe('delivery', () => {
  it('the same event delivered three times leaves the identical item set', async () => {
    const up = await upload(`replay-${uid()}/x4100.txt`, X4100);
    expect(await deliver([up.event])).toEqual(noFailures);
    const once = await itemsOfKey(env, env.bucket, up.key);
    // The upload, CURRENT and a META per run (each holding its series).
    expect(once.length).toBe(1 + 1 + 4);
    expect(await deliver([up.event], { receiveCount: 2 })).toEqual(noFailures);
    expect(await deliver([up.event], { receiveCount: 3 })).toEqual(noFailures);
    expect(await itemsOfKey(env, env.bucket, up.key)).toEqual(once);
  });

  it('three copies of one event in one batch (processed concurrently) converge to one complete ingestion', async () => {
    const key = `replay-batch-${uid()}/x4100.txt`;
    const up = await upload(key, X4100);
    expect(await deliver([up.event, up.event, up.event])).toEqual(noFailures);
    const items = await itemsOfKey(env, env.bucket, key);
    const runIds = ids(key, up.version, 4);
    expect(await upload_(key, up.version)).toMatchObject({ status: 'ready', runIds, runCount: 4 });
    expect(await current(key)).toMatchObject({ version: up.version, runCount: 4, deleted: false });
    expect(items.length).toBe(1 + 1 + 4);

    // The same content delivered once, under another key, gives the same runs.
    const single = await upload(`replay-single-${uid()}/x4100.txt`, X4100);
    expect(await deliver([single.event])).toEqual(noFailures);
    for (const [i, id] of runIds.entries())
      expect(contentOf(await runItems(env, id))).toEqual(
        contentOf(await runItems(env, ids(single.key, single.version, 4)[i]!)),
      );
  });

  it('a re-upload with new content replaces the old runs and moves CURRENT', async () => {
    const key = `reupload-${uid()}/log.txt`;
    const first = await upload(key, INDY_300G);
    expect(await deliver([first.event])).toEqual(noFailures);
    const [oldId] = ids(key, first.version, 1);
    expect(await meta(oldId!)).toBeDefined();

    const second = await upload(key, REDUX);
    expect(second.eTag).not.toBe(first.eTag);
    expect(await deliver([second.event])).toEqual(noFailures);
    const [newId] = ids(key, second.version, 1);
    expect(await runItems(env, oldId!)).toEqual([]);
    expect(await meta(newId!)).toMatchObject({ name: 'scsi2sd_redux' });
    expect(await current(key)).toEqual({
      pk: objectPk(env.bucket, key),
      sk: 'CURRENT',
      type: 'object',
      version: second.version,
      sequencer: sortableSequencer(second.event.s3.object.sequencer),
      runCount: 1,
      deleted: false,
      pending: [],
    });
    expect(await upload_(key, second.version)).toMatchObject({ status: 'ready', runIds: [newId] });
    // The replaced version keeps its upload record.
    expect(await upload_(key, first.version)).toMatchObject({ version: first.version });
    const label = key.split('/')[0]!;
    expect((await byDevice(label)).map((i) => i['runId'])).toEqual([newId]);
    // The label's last change stamp is the old run's removal, which came after the new run's upload stamped it.
    expect((await getItem(env, DEVICES_PK, label))?.['changed']).toBe(`${NOW} ${oldId}`);
  });

  it('a versioned re-upload (versionId in the events) replaces the old runs the same way', async () => {
    const key = `versioned-${uid()}/log.txt`;
    const v1 = await upload(key, X4100, { versionId: `v1.${uid()}` });
    expect(await deliver([v1.event])).toEqual(noFailures);
    const v2 = await upload(key, REDUX, { versionId: `v2.${uid()}` });
    expect(await deliver([v2.event])).toEqual(noFailures);
    const v1Version = v1.event.s3.object.versionId!;
    const v2Version = v2.event.s3.object.versionId!;
    for (const id of ids(key, v1Version, 4)) expect(await runItems(env, id)).toEqual([]);
    const [newId] = ids(key, v2Version, 1);
    expect(await current(key)).toMatchObject({ version: v2Version, runCount: 1, deleted: false, pending: [] });
    expect(await meta(newId!)).toMatchObject({ name: 'scsi2sd_redux' });
    expect(await upload_(key, v2Version)).toMatchObject({ status: 'ready', versionId: v2Version, eTag: v2.eTag });
  });

  it('uploading A, then B, then A again (unversioned: same eTag as the first) shows A', async () => {
    const key = `aba-${uid()}/log.txt`;
    const a1 = await upload(key, INDY_300G);
    expect(await deliver([a1.event])).toEqual(noFailures);
    const b = await upload(key, REDUX);
    expect(await deliver([b.event])).toEqual(noFailures);
    const a2 = await upload(key, INDY_300G);
    expect(a2.eTag).toBe(a1.eTag);
    expect(await deliver([a2.event])).toEqual(noFailures);

    // Same content, new upload: a new version (eTag and sequencer), ingested and current.
    const cur = await current(key);
    expect(a2.version).not.toBe(a1.version);
    expect({ version: cur?.['version'], runCount: cur?.['runCount'] }).toEqual({ version: a2.version, runCount: 1 });
    expect(await meta(ids(key, a2.version, 1)[0]!)).toMatchObject({ name: '300G_10K_SGI_Indy' });
    expect(await runItems(env, ids(key, a1.version, 1)[0]!)).toEqual([]);
    expect(await runItems(env, ids(key, b.version, 1)[0]!)).toEqual([]);
  });

  it('uploading A, deleting it, then uploading A again (unversioned: same eTag) shows A', async () => {
    const key = `a-del-a-${uid()}/log.txt`;
    const a1 = await upload(key, REDUX);
    expect(await deliver([a1.event])).toEqual(noFailures);
    expect(await deliver([removed(key)])).toEqual(noFailures);
    const a2 = await upload(key, REDUX);
    expect(a2.eTag).toBe(a1.eTag);
    expect(await deliver([a2.event])).toEqual(noFailures);

    const cur = await current(key);
    expect({
      version: cur?.['version'],
      deleted: cur?.['deleted'],
      runCount: cur?.['runCount'],
      meta: (await meta(ids(key, a2.version, 1)[0]!)) !== undefined,
    }).toEqual({ version: a2.version, deleted: false, runCount: 1, meta: true });
  });

  it('an older event arriving after a newer one is stale and leaves the newer runs', async () => {
    const key = `order-${uid()}/log.txt`;
    const older = await upload(key, INDY_300G, { versionId: `old.${uid()}` });
    const newer = await upload(key, REDUX, { versionId: `new.${uid()}` });
    expect(await deliver([newer.event])).toEqual(noFailures);
    expect(await deliver([older.event])).toEqual(noFailures);

    const oldVersion = older.event.s3.object.versionId!;
    const newVersion = newer.event.s3.object.versionId!;
    const [newId] = ids(key, newVersion, 1);
    expect(await current(key)).toMatchObject({ version: newVersion, runCount: 1, deleted: false, pending: [] });
    expect(await meta(newId!)).toMatchObject({ name: 'scsi2sd_redux' });
    expect(await runItems(env, ids(key, oldVersion, 1)[0]!)).toEqual([]);
    // Read after the newer one was current: it ends replaced by it, never ready.
    expect(await upload_(key, oldVersion)).toMatchObject({
      status: 'replaced',
      replacedBy: newVersion,
      runIds: [],
      gsi2pk: 'STATUS#replaced#PAST',
    });
    expect((await byDevice(key.split('/')[0]!)).map((i) => i['runId'])).toEqual([newId]);
  });

  it('an overwritten key: the old version ends replaced, naming the new one, and leaves the current-state listing', async () => {
    const key = `overwrite-${uid()}/log.txt`;
    const first = await upload(key, INDY_300G);
    expect(await deliver([first.event])).toEqual(noFailures);
    const bad = await upload(key, PROSE);
    expect(await deliver([bad.event])).toEqual(noFailures);
    const second = await upload(key, REDUX);
    expect(await deliver([second.event])).toEqual(noFailures);

    expect(await upload_(key, second.version)).toMatchObject({ status: 'ready', runCount: 1, gsi2pk: 'STATUS#ready' });
    // The ready and the failed version before it are replaced by the new one, listed as history only.
    for (const old of [first, bad]) {
      expect(await upload_(key, old.version)).toMatchObject({
        status: 'replaced',
        replacedBy: second.version,
        gsi2pk: 'STATUS#replaced#PAST',
        updatedAt: NOW,
      });
    }
    // The failure's reason is kept in details.
    expect((await upload_(key, bad.version))?.['details']).toContain('no diskperf, iostat or fio data');
    expect(await runItems(env, ids(key, first.version, 1)[0]!)).toEqual([]);
    const mine = (uploads: { key: string; version: string; status: string }[]) =>
      uploads.filter((x) => x.key === key).map((x) => `${x.version} ${x.status}`);
    expect(mine((await pageUploads(env, { limit: 1000 })).uploads)).toEqual([`${second.version} ready`]);
    expect(mine((await pageUploads(env, { limit: 1000, history: true })).uploads).sort()).toEqual(
      [`${first.version} replaced`, `${bad.version} replaced`, `${second.version} ready`].sort(),
    );

    // Delivered again, nothing changes.
    const before = await itemsOfKey(env, env.bucket, key);
    expect(await deliver([second.event], { receiveCount: 2 })).toEqual(noFailures);
    expect(await itemsOfKey(env, env.bucket, key)).toEqual(before);
  });

  it('a deleted key: every version ends deleted, its runs are gone, and the key is listed once, as deleted', async () => {
    const key = `delete-all-${uid()}/log.txt`;
    const versions = [await upload(key, INDY_300G), await upload(key, PROSE), await upload(key, REDUX)];
    for (const v of versions) expect(await deliver([v.event])).toEqual(noFailures);
    expect(await deliver([removed(key)])).toEqual(noFailures);
    for (const v of versions)
      expect(await upload_(key, v.version)).toMatchObject({
        status: 'deleted',
        message: 'the key was deleted; its runs were removed',
      });
    for (const v of versions) expect(await runItems(env, ids(key, v.version, 1)[0]!)).toEqual([]);
    // The newest version stands for the key; the others are history.
    expect((await upload_(key, versions[2]!.version))?.['gsi2pk']).toBe('STATUS#deleted');
    for (const v of versions.slice(0, 2))
      expect((await upload_(key, v.version))?.['gsi2pk']).toBe('STATUS#deleted#PAST');
    const mine = (uploads: { key: string; version: string; status: string }[]) =>
      uploads.filter((x) => x.key === key).map((x) => `${x.version} ${x.status}`);
    expect(mine((await pageUploads(env, { limit: 1000 })).uploads)).toEqual([`${versions[2]!.version} deleted`]);
    expect(mine((await pageUploads(env, { limit: 1000, history: true })).uploads)).toHaveLength(3);

    // Uploaded again, the key is listed once, as its new version.
    const again = await upload(key, SYNC_10M);
    expect(await deliver([again.event])).toEqual(noFailures);
    expect(mine((await pageUploads(env, { limit: 1000 })).uploads)).toEqual([`${again.version} ready`]);
    expect(await upload_(key, versions[2]!.version)).toMatchObject({
      status: 'deleted',
      gsi2pk: 'STATUS#deleted#PAST',
    });
  });

  it('ObjectRemoved removes the key runs and marks its record deleted; the object stays in S3', async () => {
    const key = `removed-${uid()}/x4100.txt`;
    const up = await upload(key, X4100);
    expect(await deliver([up.event])).toEqual(noFailures);
    const runIds = ids(key, up.version, 4);
    expect(await meta(runIds[0]!)).toBeDefined();

    const gone = removed(key);
    expect(gone.s3.object).toEqual({
      key: encodeURIComponent(key).replace(/%2F/g, '/'),
      sequencer: expect.any(String),
    });
    expect(await deliver([gone])).toEqual(noFailures);
    for (const id of runIds) expect(await runItems(env, id)).toEqual([]);
    const record = await upload_(key, up.version);
    expect(record).toMatchObject({ status: 'deleted', runIds, gsi2pk: 'STATUS#deleted' });
    expect(record!['message']).toMatch(/deleted/);
    expect(await current(key)).toMatchObject({
      deleted: true,
      runCount: 0,
      sequencer: sortableSequencer(gone.s3.object.sequencer),
    });
    expect(await byDevice(`${key.split('/')[0]}/c0t0d0`)).toEqual([]);
    const head = await env.s3.send(new HeadObjectCommand({ Bucket: env.bucket, Key: key }));
    expect(head.ContentLength).toBe(X4100.length);

    // Delivered again, the removal changes nothing.
    const before = await itemsOfKey(env, env.bucket, key);
    expect(await deliver([gone], { receiveCount: 2 })).toEqual(noFailures);
    expect(await itemsOfKey(env, env.bucket, key)).toEqual(before);
  });

  it('a label whose only runs were removed is no longer listed as a device with runs', async () => {
    const label = `gone-label-${uid()}`;
    const up = await upload(`${label}/redux.txt`, REDUX);
    expect(await deliver([up.event])).toEqual(noFailures);
    expect(await getItem(env, DEVICES_PK, label)).toBeDefined();
    expect(await deliver([removed(up.key)])).toEqual(noFailures);
    expect(await byDevice(label)).toEqual([]);
    // keys.ts: "DEVICES <label>: a device label and its run count (GET /devices)".
    const device = await getItem(env, DEVICES_PK, label);
    const runCount = device?.['runCount'] ?? device?.['runs'];
    expect(device === undefined || runCount === 0, `DEVICES item after removal: ${JSON.stringify(device)}`).toBe(true);
  });

  it('a delete marker (versioned bucket) removes the runs of the current version', async () => {
    const key = `marker-${uid()}/redux.txt`;
    const up = await upload(key, REDUX, { versionId: `v1.${uid()}` });
    expect(await deliver([up.event])).toEqual(noFailures);
    const version = up.event.s3.object.versionId!;
    const marker = removed(key, { eventName: 'ObjectRemoved:DeleteMarkerCreated', versionId: `dm.${uid()}` });
    expect(await deliver([marker])).toEqual(noFailures);
    expect(await runItems(env, ids(key, version, 1)[0]!)).toEqual([]);
    expect(await upload_(key, version)).toMatchObject({ status: 'deleted' });
    expect(await current(key)).toMatchObject({ deleted: true });
  });

  it('permanently deleting a noncurrent version (versioned bucket) leaves the current version runs', async () => {
    const key = `noncurrent-${uid()}/log.txt`;
    const v1 = await upload(key, INDY_300G, { versionId: `v1.${uid()}` });
    const v2 = await upload(key, REDUX, { versionId: `v2.${uid()}` });
    expect(await deliver([v1.event])).toEqual(noFailures);
    expect(await deliver([v2.event])).toEqual(noFailures);
    const v1Version = v1.event.s3.object.versionId!;
    const v2Version = v2.event.s3.object.versionId!;
    const [v2Run] = ids(key, v2Version, 1);

    // `aws s3api delete-object --version-id <v1>`: S3 sends ObjectRemoved:Delete with v1's versionId.
    expect(await deliver([removed(key, { versionId: v1Version })])).toEqual(noFailures);
    const after = {
      current: await current(key),
      v2Record: (await upload_(key, v2Version))?.['status'],
      v2Meta: (await meta(v2Run!)) !== undefined,
    };
    expect(after).toMatchObject({
      current: { version: v2Version, runCount: 1, deleted: false },
      v2Record: 'ready',
      v2Meta: true,
    });
  });
});

// ---------------------------------------------------------------- failures

describe('failures', () => {
  it('garbage files fail with a readable message and line while the rest of the batch succeeds', async () => {
    const u = uid();
    const random = await upload(`garbage-${u}/random.bin`, randomBytes(4096), {
      contentType: 'application/octet-stream',
    });
    const randomFixed = await upload(`garbage-${u}/random-fixed.bin`, RANDOM_BYTES, {
      contentType: 'application/octet-stream',
    });
    const prose = await upload(`garbage-${u}/prose.txt`, PROSE);
    const nul = await upload(`garbage-${u}/nul-on-line-5.txt`, fixture('bad/nul-byte-on-line-5.iostat.txt'));
    const truncated = await upload(`garbage-${u}/truncated.txt.gz`, fixture('bad/truncated-gzip.iostat.txt.gz'));
    const empty = await upload(`garbage-${u}/empty.txt`, '');
    const good = await upload(`garbage-${u}/redux.txt`, REDUX);
    const bad = [random, randomFixed, prose, nul, truncated, empty];
    expect(await deliver([...bad, good].map((x) => x.event))).toEqual(noFailures);

    const r = await upload_(random.key, random.version);
    expect(r).toMatchObject({ status: 'failed', runIds: [], runCount: 0, gsi2pk: 'STATUS#failed' });
    expect(r!['message']).toMatch(/^line \d+: binary content/);
    expect(r!['details']).toMatch(new RegExp(`^${random.key}:\\d+: binary content`));
    expect(await upload_(randomFixed.key, randomFixed.version)).toMatchObject({
      status: 'failed',
      line: 1,
      message: expect.stringMatching(/^line 1: binary content/),
    });
    const p = await upload_(prose.key, prose.version);
    expect(p).toMatchObject({ status: 'failed', line: 0, runIds: [] });
    // Short, without the key or a line 0; the whole explanation in details.
    expect(p!['message']).toBe(
      'no diskperf, iostat or fio data in the first 8 lines; expected a diskperf result table, an iostat -x report or a fio output',
    );
    expect(p!['details']).toContain(`${prose.key}: no diskperf, iostat or fio data`);
    expect(p!['details']).toContain('benchdrop reads: IRIX diskperf');
    expect(await upload_(nul.key, nul.version)).toMatchObject({
      status: 'failed',
      line: 5,
      message: expect.stringMatching(/^line 5: binary content/),
    });
    expect(await upload_(truncated.key, truncated.version)).toMatchObject({
      status: 'failed',
      line: 0,
      message: expect.stringContaining('a damaged gzip file'),
    });
    expect(await upload_(empty.key, empty.version)).toMatchObject({
      status: 'failed',
      line: 0,
      message: expect.stringContaining('an empty file'),
    });
    expect(await upload_(good.key, good.version)).toMatchObject({ status: 'ready' });

    // A failed version never becomes current and leaves nothing but its record
    // (the truncated gzip held complete runs before the damage: they are gone too).
    const scanned = await scanAll(env);
    for (const x of bad) {
      expect(await current(x.key)).toBeUndefined();
      expect((await itemsOfKey(env, env.bucket, x.key, 64, scanned)).map((i) => i.pk)).toEqual([
        uploadPk(env.bucket, x.key),
      ]);
    }
    // The failed ones are listed by status.
    const failed = await queryAll(env, 'STATUS#failed', INDEXES.byStatus);
    expect(failed.map((i) => i['key'])).toEqual(expect.arrayContaining(bad.map((x) => x.key)));
  });

  it('a long parse error: a message under 200 characters with its line and what to do, never the key; the whole text in details', async () => {
    const key = `long-error-${uid()}/${'k'.repeat(120)}.txt`;
    // A header with no rows under it: the parser explains at length what it expected.
    const up = await upload(
      key,
      `prose first\n${'x'.repeat(3000)}\n  r/s  w/s kr/s kw/s wait actv wsvc_t asvc_t %w %b device\nmore prose\n`,
    );
    expect(await deliver([up.event])).toEqual(noFailures);
    const record = await upload_(key, up.version);
    expect(record).toMatchObject({ status: 'failed' });
    const message = String(record!['message']);
    expect(message.length).toBeLessThan(200);
    expect(message).not.toContain(key.split('/')[1]!.slice(0, 20));
    expect(message).not.toContain('(line 0)');
    const line = Number(record!['line']);
    if (line > 0) expect(message).toMatch(new RegExp(`^line ${line}: `));
    expect(message).toMatch(/; expected /);
    expect(String(record!['details']).length).toBeGreaterThan(message.length);
    expect(record!['details']).toContain(key);
    expect(record!['details']).toContain('benchdrop reads: IRIX diskperf');
  });

  it('an event for an object that no longer exists ends deleted, saying so', async () => {
    const key = `vanished-${uid()}/log.txt`;
    const event = s3EventRecord({
      eventName: 'ObjectCreated:Put',
      bucket: env.bucket,
      key,
      size: 10,
      eTag: 'd41d8cd98f00b204e9800998ecf8427e',
      sequencer: sequencer(),
    });
    expect(await deliver([event])).toEqual(noFailures);
    const record = await upload_(key, objectRefOf(event).version);
    expect(record).toMatchObject({ status: 'deleted', line: 0, message: 'the object was deleted before it was read' });
  });

  it('messages that are not S3 notifications are dropped and s3:TestEvent is skipped, without failing the batch', async () => {
    const good = await upload(`mixed-${uid()}/redux.txt`, REDUX);
    const before = await scanAll(env);
    const response = await deliver([
      s3TestEvent(env.bucket),
      'not json at all',
      { hello: 'world' },
      { Records: [{ eventName: 'ObjectCreated:Put', s3: { bucket: {}, object: {} } }] },
      { Type: 'Notification', Message: '{}' },
      good.event,
    ]);
    expect(response).toEqual(noFailures);
    const after = await scanAll(env);
    const beforeKeys = new Set(before.map((i) => `${i.pk}\u0000${i.sk}`));
    const added = after.filter((i) => !beforeKeys.has(`${i.pk}\u0000${i.sk}`)).map((i) => i.pk);
    const goodLabel = good.key.split('/')[0]!;
    expect(added.sort()).toEqual(
      [
        DEVICES_PK,
        objectPk(env.bucket, good.key),
        runPk(ids(good.key, good.version, 1)[0]!),
        uploadPk(env.bucket, good.key),
      ].sort(),
    );
    expect(after.find((i) => i.pk === DEVICES_PK && i.sk === goodLabel)).toBeDefined();
  });

  it('a transient DynamoDB failure fails only its own message, and the redelivery succeeds', async () => {
    const u = uid();
    const a = await upload(`transient-${u}/a.txt`, REDUX);
    const b = await upload(`transient-${u}/b.txt`, X4100);
    const c = await upload(`transient-${u}/c.txt`, SYNC_10M);
    const faulty = throttled(deps, (input) => input.includes(`/${b.key}`), 1);
    const messageIds = [randomUUID(), randomUUID(), randomUUID()];
    const response = await deliver([a.event, b.event, c.event], { messageIds }, faulty.deps);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: messageIds[1] }] });
    expect(faulty.thrown()).toBe(1);
    expect(await upload_(a.key, a.version)).toMatchObject({ status: 'ready' });
    expect(await upload_(c.key, c.version)).toMatchObject({ status: 'ready' });
    expect((await upload_(b.key, b.version))?.['status']).not.toBe('ready');

    // SQS redelivers the failed message only.
    expect(await deliver([b.event], { messageIds: [messageIds[1]!], receiveCount: 2 }, faulty.deps)).toEqual(
      noFailures,
    );
    expect(await upload_(b.key, b.version)).toMatchObject({ status: 'ready', runIds: ids(b.key, b.version, 4) });
  });

  it('a transient failure after the runs were written (moving CURRENT) is retried to the same items', async () => {
    const key = `transient-late-${uid()}/x4100.txt`;
    const up = await upload(key, X4100);
    const faulty = throttled(
      deps,
      (input, command) => command === 'PutCommand' && input.includes(`"${objectPk(env.bucket, key)}"`),
      1,
    );
    const [messageId] = [randomUUID()];
    expect(await deliver([up.event], { messageIds: [messageId!] }, faulty.deps)).toEqual({
      batchItemFailures: [{ itemIdentifier: messageId }],
    });
    expect(await upload_(key, up.version)).toMatchObject({ status: 'processing' });
    expect(await current(key)).toBeUndefined();

    expect(await deliver([up.event], { messageIds: [messageId!], receiveCount: 2 }, faulty.deps)).toEqual(noFailures);
    const runIds = ids(key, up.version, 4);
    expect(await upload_(key, up.version)).toMatchObject({ status: 'ready', runIds, runCount: 4 });
    expect(await current(key)).toMatchObject({ version: up.version, runCount: 4, deleted: false });
    expect(await itemsOfKey(env, env.bucket, key)).toHaveLength(1 + 1 + 4);
  });

  it('a transient failure while removing the replaced version runs is retried until they are gone', async () => {
    const key = `transient-replace-${uid()}/log.txt`;
    const v1 = await upload(key, INDY_300G);
    expect(await deliver([v1.event])).toEqual(noFailures);
    const [oldRun] = ids(key, v1.version, 1);
    const v2 = await upload(key, REDUX);
    // CURRENT has moved to v2 when the old runs are looked up for deletion: that call fails once.
    const faulty = throttled(
      deps,
      (input, command) => command === 'QueryCommand' && input.includes(`"${runPk(oldRun!)}"`),
      1,
    );
    const messageId = randomUUID();
    expect(await deliver([v2.event], { messageIds: [messageId] }, faulty.deps)).toEqual({
      batchItemFailures: [{ itemIdentifier: messageId }],
    });
    expect(faulty.thrown()).toBe(1);

    expect(await deliver([v2.event], { messageIds: [messageId], receiveCount: 2 }, faulty.deps)).toEqual(noFailures);
    expect(await upload_(key, v2.version)).toMatchObject({ status: 'ready' });
    expect(await current(key)).toMatchObject({ version: v2.version, runCount: 1 });
    expect({
      oldRunItems: (await runItems(env, oldRun!)).length,
      byDevice: (await byDevice(key.split('/')[0]!)).map((i) => i['name']),
    }).toEqual({ oldRunItems: 0, byDevice: ['scsi2sd_redux'] });
  });

  it('a transient failure while removing a deleted key runs is retried until they are gone', async () => {
    const key = `transient-remove-${uid()}/log.txt`;
    const up = await upload(key, REDUX);
    expect(await deliver([up.event])).toEqual(noFailures);
    const [run] = ids(key, up.version, 1);
    const faulty = throttled(
      deps,
      (input, command) => command === 'QueryCommand' && input.includes(`"${runPk(run!)}"`),
      1,
    );
    const gone = removed(key);
    const messageId = randomUUID();
    expect(await deliver([gone], { messageIds: [messageId] }, faulty.deps)).toEqual({
      batchItemFailures: [{ itemIdentifier: messageId }],
    });

    expect(await deliver([gone], { messageIds: [messageId], receiveCount: 2 }, faulty.deps)).toEqual(noFailures);
    expect({
      runItems: (await runItems(env, run!)).length,
      status: (await upload_(key, up.version))?.['status'],
    }).toEqual({ runItems: 0, status: 'deleted' });
  });

  it('a failure before the runs are complete leaves their label unlisted; the redelivery lists it', async () => {
    const label = `late-label-${uid()}`;
    const up = await upload(`${label}/redux.txt`, REDUX);
    const [id] = ids(up.key, up.version, 1);
    // The batch write of the run's META fails (the SDK's retries spent): the run is not complete.
    const faulty = throttled(
      deps,
      (input, command) => command === 'BatchWriteCommand' && input.includes(`"${runPk(id!)}","sk":"META"`),
      1,
    );
    const messageId = randomUUID();
    expect(await deliver([up.event], { messageIds: [messageId] }, faulty.deps)).toEqual({
      batchItemFailures: [{ itemIdentifier: messageId }],
    });
    expect(faulty.thrown()).toBe(1);
    expect(await getItem(env, DEVICES_PK, label)).toBeUndefined();

    expect(await deliver([up.event], { messageIds: [messageId], receiveCount: 2 }, faulty.deps)).toEqual(noFailures);
    expect(await getItem(env, DEVICES_PK, label)).toMatchObject({ type: 'device', label });
    expect(await meta(id!)).toBeDefined();
  });

  it('a failure while dropping a replaced version label is retried until the label is gone', async () => {
    const u = uid();
    const key = `relabel-${u}/log.txt`;
    const v1 = await upload(key, INDY_300G, { metadata: { device: `old-${u}` } });
    expect(await deliver([v1.event])).toEqual(noFailures);
    const v2 = await upload(key, REDUX, { metadata: { device: `new-${u}` } });
    // Looking up the old label (is any other run using it?) fails once.
    const faulty = throttled(
      deps,
      (input, command) => command === 'GetCommand' && input.includes(`"sk":"old-${u}"`),
      1,
    );
    const messageId = randomUUID();
    expect(await deliver([v2.event], { messageIds: [messageId] }, faulty.deps)).toEqual({
      batchItemFailures: [{ itemIdentifier: messageId }],
    });
    expect(faulty.thrown()).toBe(1);

    expect(await deliver([v2.event], { messageIds: [messageId], receiveCount: 2 }, faulty.deps)).toEqual(noFailures);
    expect(await getItem(env, DEVICES_PK, `old-${u}`)).toBeUndefined();
    expect(await getItem(env, DEVICES_PK, `new-${u}`)).toMatchObject({ label: `new-${u}` });
    expect(await runItems(env, ids(key, v1.version, 1)[0]!)).toEqual([]);
  });

  it('the function builds its DynamoDB client to ride out throttling (INGEST_DYNAMODB_ATTEMPTS per call)', async () => {
    const built = ingestDeps({
      [ENV.tableName]: 'x',
      [ENV.dynamodbEndpoint]: env.dynamodbEndpoint,
      [ENV.s3Endpoint]: env.s3Endpoint,
      [ENV.resultsBucket]: env.resultsBucket,
    });
    try {
      expect(await built.db.config.maxAttempts()).toBe(INGEST_DYNAMODB_ATTEMPTS);
      expect(await built.db.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1' });
      expect(await built.s3.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1' });
    } finally {
      built.db.destroy();
      built.s3.destroy();
    }
  });

  it('a .gz upload whose download breaks off mid-object is retried, not failed as a damaged gzip file', async () => {
    const key = `cut-${uid()}/x4100-long.iostat.txt.gz`;
    // Large enough (a few hundred KB compressed) that the answer breaks off well inside the gzip data.
    const up = await upload(
      key,
      gzipSync(solarisIostatLog({ reports: 3000, devices: solarisDevices(16), host: 'cut' })),
    );
    const proxy = await startFaultProxy({
      target: env.s3Endpoint,
      service: 's3',
      faultRate: 1,
      variants: ['reset:mid-answer'],
    });
    const s3 = createS3Client({ region: REGION, s3Endpoint: proxy.endpoint, credentials: S3RVER_CREDENTIALS });
    try {
      const messageId = randomUUID();
      expect(await deliver([up.event], { messageIds: [messageId] }, { ...deps, s3 })).toEqual({
        batchItemFailures: [{ itemIdentifier: messageId }],
      });
      expect(proxy.counts.variants).toEqual({ 'reset:mid-answer': 1 });
      expect(await upload_(key, up.version)).toMatchObject({ status: 'processing' });
    } finally {
      s3.destroy();
      await proxy.close();
    }
    expect(await deliver([up.event], { receiveCount: 2 })).toEqual(noFailures);
    expect(await upload_(key, up.version)).toMatchObject({ status: 'ready', runCount: 1 });
  });
});

/**
 * A DynamoDB client that throws ThrottlingException (as the SDK does once its own
 * retries are spent) on the first `times` calls that `matches`; otherwise the real
 * client. The only mock here: dynalite cannot be made to throttle.
 */
function throttled(base: IngestDeps, matches: (input: string, command: string) => boolean, times: number) {
  let left = times;
  let thrown = 0;
  const send = base.db.send.bind(base.db) as (command: unknown, ...rest: unknown[]) => Promise<unknown>;
  const db = new Proxy(base.db, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return async (command: { input: unknown; constructor: { name: string } }, ...rest: unknown[]) => {
        if (left > 0 && matches(JSON.stringify(command.input), command.constructor.name)) {
          left--;
          thrown++;
          throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
            name: 'ThrottlingException',
            $fault: 'client',
            $metadata: { httpStatusCode: 400, attempts: 3 },
          });
        }
        return send(command, ...rest);
      };
    },
  });
  return { deps: { ...base, db } as IngestDeps, thrown: () => thrown };
}
