/**
 * Tables written by an earlier version: iostat run METAs stored before they were
 * indexed under their upload's label are found through their series labels
 * until the lab's start indexes them, after which the label reads them all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../shared/comparison/statistics.ts';
import type { IostatRun } from '../../shared/model.ts';
import { parseText } from '../../shared/parsers/index.ts';
import { BatchWriter } from '../../shared/store/batch.ts';
import { devicePk, deviceSk, runId, runPk, seriesSk } from '../../shared/store/keys.ts';
import { storedSeriesOf } from '../../shared/store/packing.ts';
import { indexIostatRunsByLabel, settleUploadStates } from '../../shared/store/migrations.ts';
import { listUploads } from '../../shared/listings.ts';
import { makeCurrent } from '../../shared/store/objects.ts';
import { uploadRecord, type ObjectRef } from '../../shared/store/items.ts';
import { ReadSession } from '../../shared/store/session.ts';
import { resolveSelector } from '../../shared/compare/selection.ts';
import { deviceItem } from '../../shared/store/items.ts';
import { iostatRunItem } from '../../shared/store/run-items.ts';
import { parseSelector } from '../../shared/selectors.ts';
import { startEmulators, type Emulators } from '../../harness/emulators.ts';
import { iostatSession, THREE_DISKS } from '../../harness/ground-truth.ts';

let env: Emulators;
beforeAll(async () => {
  env = await startEmulators({ tableName: 'benchdrop-migrations', bucket: 'benchdrop-migrations' });
});
afterAll(async () => env?.stop());

async function store(label: string, n: number, old: boolean): Promise<void> {
  const run = (
    await parseText(iostatSession({ disks: THREE_DISKS, k: 1, noise: 0.03, random: prng(n) }), `${label}/${n}.txt`)
  ).runs[0] as IostatRun;
  const key = `${label}/${n}.txt`;
  const items = iostatRunItem(run, {
    runId: runId('b', key, 'v1', 0),
    label,
    tags: {},
    source: { bucket: 'b', key, version: 'v1' },
    ingestedAt: `2024-01-0${n}T00:00:00Z`,
  });
  const writer = new BatchWriter(env.db, env.tableName);
  if (old) {
    // What an earlier version wrote: the META not indexed by label, its series in it
    // unpacked, and a SERIES item per series indexed under the series label.
    const { gsi1pk: _pk, gsi1sk: _sk, packedSeries: _packed, ...unindexed } = items.run;
    const series = storedSeriesOf(items.run)!;
    writer.put({ ...unindexed, series });
    for (const s of series)
      writer.put({
        pk: runPk(unindexed.runId),
        sk: seriesSk(s.native),
        type: 'series',
        runId: unindexed.runId,
        device: s.device,
        native: s.native,
        format: 'iostat',
        tags: {},
        time: unindexed.time,
        sampleCount: s.sampleCount,
        summary: s.summary,
        gsi1pk: devicePk(s.device),
        gsi1sk: deviceSk(unindexed.time, unindexed.runId),
      });
  } else writer.put(items.run);
  for (const disk of THREE_DISKS)
    writer.put(deviceItem(`${label}/${disk.name}`, 'iostat', '2024-01-01T00:00:00.000Z', 'v1'));
  await writer.flush();
}

const runsOf = async (text: string) => {
  const s = { db: env.db, tableName: env.tableName };
  const observations = await resolveSelector(s, parseSelector(text), new ReadSession(s));
  return new Set(observations.map((o) => o.runId)).size;
};

describe('indexIostatRunsByLabel', () => {
  it('finds old runs through their series labels, indexes them once, and then the label reads old and new alike', async () => {
    await store('old-lab', 1, true);
    await store('old-lab', 2, true);
    expect(await runsOf('old-lab')).toBe(2);
    // A new upload under the same label: its indexed META hides the old runs from the label's one Query.
    await store('old-lab', 3, false);
    expect(await runsOf('old-lab')).toBe(1);
    expect(await runsOf('old-lab/sda')).toBe(3);
    expect(await indexIostatRunsByLabel({ db: env.db, tableName: env.tableName })).toBe(2);
    expect(await runsOf('old-lab')).toBe(3);
    const s = { db: env.db, tableName: env.tableName };
    const upgraded = await resolveSelector(s, parseSelector('old-lab'), new ReadSession(s));
    expect(upgraded.map((o) => o.device).sort()).toEqual([
      'old-lab/sda',
      'old-lab/sda',
      'old-lab/sda',
      'old-lab/sdb',
      'old-lab/sdb',
      'old-lab/sdb',
      'old-lab/sdc',
      'old-lab/sdc',
      'old-lab/sdc',
    ]);
    expect(upgraded.every((o) => typeof o.values.write_iops === 'number' && o.samples! > 0)).toBe(true);
    expect(await indexIostatRunsByLabel({ db: env.db, tableName: env.tableName })).toBe(0);
  });
});

describe('settleUploadStates', () => {
  const bucket = 'old-states';
  const version = (key: string, v: string, sequencer: string): ObjectRef => ({
    bucket,
    key,
    version: v,
    sequencer,
    size: 10,
  });
  /** What an earlier version left: every record listed as its key's current state. */
  async function oldRecord(object: ObjectRef, status: 'ready' | 'failed', message?: string): Promise<void> {
    const record = uploadRecord(
      object,
      status,
      { runCount: status === 'ready' ? 1 : 0, ...(message ? { message } : {}) },
      '2024-01-01T00:00:00.000Z',
    );
    const writer = new BatchWriter(env.db, env.tableName);
    writer.put(record);
    await writer.flush();
  }

  it('settles an overwritten key and a deleted one once, and is then done', async () => {
    const s = { db: env.db, tableName: env.tableName };
    // Overwritten: v1 ready and v2 ready (the earlier version ended a late v1 "superseded", still ready).
    await oldRecord(version('disk/a.txt', 'v1', '01'), 'ready', 'superseded by a newer version of this key');
    await oldRecord(version('disk/a.txt', 'v2', '02'), 'ready');
    await makeCurrent(s, version('disk/a.txt', 'v2', '02'), 1, false);
    // Deleted: its one version stayed failed.
    await oldRecord(version('disk/b.txt', 'w1', '03'), 'failed', 'line 3: not a log');
    await makeCurrent(s, version('disk/b.txt', 'w1', '03'), 0, false);
    await makeCurrent(s, version('disk/b.txt', 'w1-deleted', '04'), 0, true);
    const before = (await listUploads(s, { limit: 100 })).filter((u) => u.bucket === bucket);
    expect(before.map((u) => `${u.key} ${u.version} ${u.status}`).sort()).toEqual([
      'disk/a.txt v1 ready',
      'disk/a.txt v2 ready',
      'disk/b.txt w1 failed',
    ]);

    expect(await settleUploadStates(s, '2024-02-01T00:00:00.000Z')).toBeGreaterThanOrEqual(2);

    const current = (await listUploads(s, { limit: 100 })).filter((u) => u.bucket === bucket);
    expect(current.map((u) => `${u.key} ${u.version} ${u.status}`).sort()).toEqual([
      'disk/a.txt v2 ready',
      'disk/b.txt w1 deleted',
    ]);
    const history = (await listUploads(s, { limit: 100, history: true })).filter((u) => u.bucket === bucket);
    expect(history.map((u) => `${u.key} ${u.version} ${u.status} ${u.replacedBy ?? '-'}`).sort()).toEqual([
      'disk/a.txt v1 replaced v2',
      'disk/a.txt v2 ready -',
      'disk/b.txt w1 deleted -',
    ]);
    // Done once: a second start reads the marker and scans nothing.
    expect(await settleUploadStates(s, '2024-02-02T00:00:00.000Z')).toBe(0);
  });
});
