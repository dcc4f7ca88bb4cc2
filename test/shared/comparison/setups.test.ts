/**
 * The setups side by side (Comparison.setups) through the real lab path: the
 * sample logs uploaded to s3rver and ingested by the real ingest handler into
 * dynalite, then the comparison use case (shared/compare.ts) reading them by
 * every kind of selector: an exact diskperf label, an iostat upload's label
 * (its run METAs), a disk's label (series and their run heads), run=ID and a
 * tag. Each run's setup is checked against the stored META it comes from.
 */
import '../../../harness/quiet.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as ingestHandler, setIngestDeps } from '../../../functions/ingest/handler.ts';
import { startEmulators, type Emulators, type PutOptions } from '../../../harness/emulators.ts';
import { lambdaContext } from '../../../harness/lambda.ts';
import { s3EventRecord, sequencerGenerator, sqsEvent } from '../../../infra/local/events.ts';
import { compare, type Comparison, type RunSetup } from '../../../shared/compare.ts';
import { objectRefOf } from '../../../shared/ingest.ts';
import type { RunItem } from '../../../shared/store/items.ts';
import { RUN_META_SK, runId, runPk } from '../../../shared/store/keys.ts';
import { fixture } from '../../support/fixtures.ts';

const REDUX = fixture('irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt');
const INDY_300G = fixture('irix/irix-6.5-indy-300G-10K.diskperf.txt');
const X4100 = fixture('solaris/solaris-10-x4100-sas-maxcontig.iostat.txt');
/** Timed reports (`iostat -t`): the run has a first and a last sample time. */
const LINUX = fixture('linux/linux-sysstat-12.5.4-x.txt');

let env: Emulators;
const sequencer = sequencerGenerator(0x3000000000000n);
/** Each upload's key and size, and the version it was filed under. */
const uploads = new Map<string, { key: string; size: number; version: string }>();

async function ingest(name: string, key: string, body: Uint8Array, options: PutOptions = {}): Promise<void> {
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
  uploads.set(name, { key, size: put.size, version: objectRefOf(event).version });
}

const idOf = (name: string, index = 0) => {
  const u = uploads.get(name)!;
  return runId(env.bucket, u.key, u.version, index);
};

async function meta(id: string): Promise<RunItem> {
  const { Item } = await env.db.send(
    new GetCommand({ TableName: env.tableName, Key: { pk: runPk(id), sk: RUN_META_SK } }),
  );
  return Item as RunItem;
}

async function compared(a: string, b: string, metric: 'all' | 'write_iops' = 'all'): Promise<Comparison> {
  const answer = await compare({ db: env.db, tableName: env.tableName }, { a, b, metric });
  return JSON.parse(answer.body) as Comparison;
}

beforeAll(async () => {
  env = await startEmulators();
  setIngestDeps(env.deps);
  await ingest('redux', 'irix-indy-scsi2sd-redux.diskperf.txt', REDUX);
  await ingest('300g', 'irix-indy-300G-10K.diskperf.txt', INDY_300G);
  await ingest('x4100', 'x4100/solaris-10-x4100-sas-maxcontig.iostat.txt', X4100);
  await ingest('fedora', 'fedora/linux-sysstat-12.7.5-x.txt', LINUX, {
    metadata: { device: 'fedora-ws', tags: 'bus=nvme;medium=ssd' },
  });
}, 60_000);

afterAll(async () => {
  setIngestDeps(undefined);
  await env?.stop();
});

/** What a diskperf run's setup must say, from its stored META and its upload. */
async function expectDiskperfSetup(setup: RunSetup, name: string, label: string): Promise<void> {
  const stored = await meta(idOf(name));
  if (stored.format !== 'diskperf') throw new Error(`${name} is not diskperf`);
  expect(setup).toEqual({
    runId: idOf(name),
    label,
    devices: [label],
    format: 'diskperf',
    platform: 'irix',
    version: `${stored.meta.os} ${stored.meta.osRelease}`,
    host: stored.host,
    date: stored.from,
    context: stored.context,
    parameters: {
      ...stored.meta.parameters,
      'file size': stored.meta.fileSizeBytes,
      ...(stored.meta.testType !== undefined ? { 'test type': stored.meta.testType } : {}),
    },
    fileSizeBytes: uploads.get(name)!.size,
    tags: {},
  });
}

describe('setups side by side, through the lab', () => {
  it('two diskperf labels: one setup a run from its META, and the fields that differ', async () => {
    const c = await compared('scsi2sd_redux', '300G_10K_SGI_Indy');
    expect(c.setups.a).toHaveLength(1);
    expect(c.setups.b).toHaveLength(1);
    await expectDiskperfSetup(c.setups.a[0]!, 'redux', 'scsi2sd_redux');
    await expectDiskperfSetup(c.setups.b[0]!, '300g', '300G_10K_SGI_Indy');
    expect(c.setups.a[0]!.version).toBe('IRIX 6.5');
    expect(c.setups.a[0]!.date).toBe('2020-04-03T21:10:13');
    expect(c.setups.differs).toEqual(expect.arrayContaining(['host', 'parameters.file size', 'parameters.time']));
    expect(c.setups.differs).not.toContain('format');
    expect(c.setups.differs).not.toContain('platform');
    // Their parameters are warned of, and that warning is one about the setups.
    const parameters = c.warnings.findIndex((w) => w.startsWith('the diskperf runs used different parameters'));
    expect(parameters).toBeGreaterThanOrEqual(0);
    expect(c.setups.warnings).toContain(parameters);
  });

  it('an iostat upload label (its run METAs) against a disk label (series and run heads): OS, command, times, samples, tags', async () => {
    const c = await compared('fedora-ws', 'x4100/c0t0d0', 'write_iops');
    const fedora = await meta(idOf('fedora'));
    expect(c.setups.a).toHaveLength(1);
    const a = c.setups.a[0]!;
    expect(a).toMatchObject({
      runId: idOf('fedora'),
      label: 'fedora-ws',
      format: 'iostat',
      platform: 'linux',
      host: 'myhost',
      tags: { bus: 'nvme', medium: 'ssd' },
      fileSizeBytes: uploads.get('fedora')!.size,
    });
    expect(a.version).toContain('5.15.0-91-generic');
    expect(a.devices).toEqual(c.a.devices.map((d) => d.slice('fedora-ws/'.length)));
    expect(a.samples).toBeGreaterThan(0);
    expect(fedora.from).toBeDefined();
    expect(a.date).toBe(fedora.from);
    expect(a.timeRange).toEqual({ first: fedora.from, last: fedora.to });

    // The four x4100 sessions, each with c0t0d0 only, the first with its command line.
    expect(c.setups.b.map((s) => s.runId).sort()).toEqual([0, 1, 2, 3].map((i) => idOf('x4100', i)).sort());
    for (const s of c.setups.b) {
      const stored = await meta(s.runId);
      if (stored.format !== 'iostat') throw new Error('x4100 is iostat');
      expect(s).toMatchObject({ label: 'x4100', devices: ['c0t0d0'], format: 'iostat', platform: 'solaris' });
      expect(s.context).toEqual(stored.context);
      expect(s.command).toBe(stored.meta.command);
      expect(s.fileSizeBytes).toBe(uploads.get('x4100')!.size);
    }
    expect(c.setups.b.find((s) => s.runId === idOf('x4100', 0))!.command).toBe('iostat -xnz 5 2');
    expect(c.setups.differs).toEqual(
      expect.arrayContaining(['platform', 'version', 'host', 'command', 'context', 'tags.bus', 'tags.medium']),
    );
    // Linux against Solaris is warned of, as a warning of the setups.
    const platforms = c.warnings.findIndex((w) => w.startsWith('A is iostat on linux and B on solaris'));
    expect(c.setups.warnings).toContain(platforms);
  });

  it('run=ID and a tag read the same setups as the labels do', async () => {
    const byLabel = await compared('scsi2sd_redux', 'fedora-ws');
    const byId = await compared(`run=${idOf('redux')}`, 'tag.bus=nvme');
    expect(byId.setups.a).toEqual(byLabel.setups.a);
    expect(byId.setups.b).toEqual(byLabel.setups.b);
    expect(byId.setups.differs).toEqual(byLabel.setups.differs);
    expect(byId.setups.differs).toEqual(expect.arrayContaining(['format', 'platform', 'tags.bus']));
  });
});
