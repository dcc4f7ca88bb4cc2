/**
 * `npm run bench:api-phases`: where one device comparison's CPU goes, by phase,
 * without HTTP or load. The same table as bench:api at 1,000 runs (`bench-a` and
 * `bench-b`, 20 diskperf runs each, from the three IRIX Indy fixtures, values
 * perturbed by a seeded PRNG); then 60 comparisons one after the other (after 20
 * untimed), each timed with process.cpuUsage in three phases:
 *
 *   reads          ReadSession + resolveSelector for both sides: the SDK calls,
 *                  HTTP to dynalite, selector resolution, observations (and
 *                  dynalite's own work when it runs in this process)
 *   statistics     compareObservations: pairing and the 2,000-resample bootstrap
 *   JSON           JSON.stringify of the answer
 *
 * Run once with dynalite in this process and once in a child: the difference in
 * "reads" is dynalite's share.
 *
 *   npm run bench:api-phases                       # dynalite in this process
 *   npm run bench:api-phases -- --dynalite-process
 */
import '../test/support/quiet.ts';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareObservations } from '../shared/compare.ts';
import type { DiskperfRun } from '../shared/model.ts';
import { parseText } from '../shared/parsers/index.ts';
import { parseSelector } from '../shared/selectors.ts';
import { BatchWriter } from '../shared/store/batch.ts';
import { runId } from '../shared/store/keys.ts';
import { ReadSession, resolveSelector } from '../shared/store/read.ts';
import { deviceItem, diskperfRunItem } from '../shared/store/records.ts';
import { startEmulators } from '../test/support/emulators.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = ['irix-6.5-indy-scsi2sd-redux', 'irix-6.5-indy-300G-10K', 'irix-6.5-indy-scsi2sd-10M-sync'].map((name) => join(ROOT, 'test/fixtures/irix', `${name}.diskperf.txt`));
const RUNS = 1000;
const TARGET_RUNS = 20;
const WARM_UP = 20;
const TIMED = 60;
const inChild = process.argv.includes('--dynalite-process');

/** A small linear congruential generator: the same perturbations every run. */
function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

const env = await startEmulators({ tableName: 'benchdrop-api-phases', bucket: 'benchdrop-api-phases', dynaliteProcess: inChild });
try {
  const templates: DiskperfRun[] = [];
  for (const path of FIXTURES) templates.push((await parseText(readFileSync(path, 'utf8'), path)).runs[0] as DiskperfRun);
  const random = lcg(1);
  const writer = new BatchWriter(env.db, env.tableName);
  let n = 0;
  const add = (label: string) => {
    const template = templates[n % templates.length]!;
    const key = `phases/${label}/${n}.diskperf.txt`;
    const rows = template.rows.map((row) => ({ ...row, values: Object.fromEntries(Object.entries(row.values).map(([m, v]) => [m, Math.round(v * (0.95 + 0.1 * random()) * 1000) / 1000])) }));
    writer.put(diskperfRunItem({ ...template, rows }, { runId: runId('phases', key, 'v1', 0), label, tags: {}, source: { bucket: 'phases', key, version: 'v1' }, ingestedAt: '2024-01-01T00:00:00Z' }));
    n++;
  };
  for (let i = 0; i < TARGET_RUNS; i++) {
    add('bench-a');
    add('bench-b');
  }
  for (const label of ['bench-a', 'bench-b']) writer.put(deviceItem(label, 'diskperf', '2024-01-01T00:00:00.000Z', 'v1'));
  while (n < RUNS) {
    add(`dev-${String(n % 198).padStart(3, '0')}`);
    if (writer.pending >= 500) await writer.flush();
  }
  await writer.flush();

  const store = { db: env.db, tableName: env.tableName };
  const a = parseSelector('bench-a');
  const b = parseSelector('bench-b');
  const sum = { reads: 0, statistics: 0, json: 0 };
  for (let i = 0; i < WARM_UP + TIMED; i++) {
    const t0 = cpuMs();
    const session = new ReadSession(store);
    const [oa, ob] = await Promise.all([resolveSelector(store, a, session), resolveSelector(store, b, session)]);
    const t1 = cpuMs();
    const comparison = compareObservations(oa, ob, { selectors: { a: a.text, b: b.text } });
    const t2 = cpuMs();
    JSON.stringify(comparison);
    const t3 = cpuMs();
    if (i < WARM_UP) continue;
    sum.reads += t1 - t0;
    sum.statistics += t2 - t1;
    sum.json += t3 - t2;
  }
  const per = (ms: number) => (ms / TIMED).toFixed(2);
  console.log(`dynalite ${inChild ? 'in a child process' : 'in this process'}; CPU per device comparison (20 runs a side, ${RUNS} stored, mean of ${TIMED}):`);
  console.log(`  reads ${per(sum.reads)} ms, statistics ${per(sum.statistics)} ms, JSON ${per(sum.json)} ms`);
} finally {
  await env.stop();
}
