/**
 * `npm run bench:api-phases`: where one comparison's CPU goes, by phase, without
 * HTTP or load. The same targets as bench:api, in a table of 1,000 runs:
 *
 *   device   `bench-a` vs `bench-b`: 20 diskperf runs each, from the three IRIX
 *            Indy fixtures, values perturbed by a seeded PRNG;
 *   iostat   `bench-io-a` vs `bench-io-b`: 20 iostat runs each, each one sysstat
 *            12 `iostat -x` session of three disks (sda, sdb, sdc;
 *            harness/ground-truth.ts iostatSession), parsed as ingest
 *            parses it and stored as ingest stores it (run META, SERIES index
 *            items, DEVICES items `bench-io-a/sda` ...; no sample chunks);
 *
 * then per case 60 comparisons one after the other (after 20 untimed), each
 * timed with process.cpuUsage in three phases:
 *
 *   reads          ReadSession + resolveSelector for both sides: the SDK calls,
 *                  HTTP to dynalite, selector resolution, observations (and
 *                  dynalite's own work when it runs in this process)
 *   statistics     compareObservations: the model (per-side bootstrap over runs)
 *                  and the answer
 *   JSON           JSON.stringify of the answer
 *
 * Run once with dynalite in this process and once in a child: the difference in
 * "reads" is dynalite's share.
 *
 *   npm run bench:api-phases                       # dynalite in this process
 *   npm run bench:api-phases -- --dynalite-process
 */
import '../shared/node-support-notice.ts';
import '../harness/quiet.ts';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareObservations, type Comparison } from '../shared/compare.ts';
import type { DiskperfRun, IostatRun } from '../shared/model.ts';
import { parseStream, parseText } from '../shared/parsers/index.ts';
import { parseSelector } from '../shared/selectors.ts';
import { BatchWriter } from '../shared/store/batch.ts';
import { runId } from '../shared/store/keys.ts';
import { ReadSession } from '../shared/store/session.ts';
import { resolveSelector } from '../shared/compare/selection.ts';
import { deviceItem } from '../shared/store/items.ts';
import { diskperfRunItem, iostatRunItem } from '../shared/store/run-items.ts';
import { startEmulators } from '../harness/emulators.ts';
import { iostatSession, THREE_DISKS } from '../harness/ground-truth.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = ['irix-6.5-indy-scsi2sd-redux', 'irix-6.5-indy-300G-10K', 'irix-6.5-indy-scsi2sd-10M-sync'].map(
  (name) => join(ROOT, 'test/fixtures/irix', `${name}.diskperf.txt`),
);
const RUNS = 1000;
const TARGET_RUNS = 20;
const IOSTAT_LABELS = { a: 'bench-io-a', b: 'bench-io-b' } as const;
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

/** One iostat session of three disks, parsed as ingest parses an upload (summaries only). */
async function iostatRun(source: string, k: number, random: () => number): Promise<IostatRun> {
  const runs: IostatRun[] = [];
  await parseStream([Buffer.from(iostatSession({ disks: THREE_DISKS, k, noise: 0.03, random }), 'utf8')], {
    source,
    keepSamples: false,
    onRun: (run) => runs.push(run as IostatRun),
  });
  return runs[0]!;
}

const env = await startEmulators({
  tableName: 'benchdrop-api-phases',
  bucket: 'benchdrop-api-phases',
  dynaliteProcess: inChild,
});
try {
  const templates: DiskperfRun[] = [];
  for (const path of FIXTURES)
    templates.push((await parseText(readFileSync(path, 'utf8'), path)).runs[0] as DiskperfRun);
  const random = lcg(1);
  const writer = new BatchWriter(env.db, env.tableName);
  let n = 0;
  const add = (label: string) => {
    const template = templates[n % templates.length]!;
    const key = `phases/${label}/${n}.diskperf.txt`;
    const rows = template.rows.map((row) => ({
      ...row,
      values: Object.fromEntries(
        Object.entries(row.values).map(([m, v]) => [m, Math.round(v * (0.95 + 0.1 * random()) * 1000) / 1000]),
      ),
    }));
    writer.put(
      diskperfRunItem(
        { ...template, rows },
        {
          runId: runId('phases', key, 'v1', 0),
          label,
          tags: {},
          source: { bucket: 'phases', key, version: 'v1' },
          ingestedAt: '2024-01-01T00:00:00Z',
        },
      ),
    );
    n++;
  };
  const addIostat = async (label: string, k: number) => {
    const key = `phases/${label}/${n}.iostat.txt`;
    const run = await iostatRun(key, k, random);
    const ingestedAt = new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString();
    const items = iostatRunItem(run, {
      runId: runId('phases', key, 'v1', run.index),
      label,
      tags: {},
      source: { bucket: 'phases', key, version: 'v1' },
      ingestedAt,
    });
    for (const series of items.series) writer.put(series);
    writer.put(items.run);
    n++;
  };
  for (let i = 0; i < TARGET_RUNS; i++) {
    add('bench-a');
    add('bench-b');
    await addIostat(IOSTAT_LABELS.a, 1.05);
    await addIostat(IOSTAT_LABELS.b, 1);
  }
  for (const label of ['bench-a', 'bench-b'])
    writer.put(deviceItem(label, 'diskperf', '2024-01-01T00:00:00.000Z', 'v1'));
  for (const label of Object.values(IOSTAT_LABELS))
    for (const name of [label, ...THREE_DISKS.map((disk) => `${label}/${disk.name}`)])
      writer.put(deviceItem(name, 'iostat', '2024-01-01T00:00:00.000Z', 'v1'));
  while (n < RUNS) {
    add(`dev-${String(n % 198).padStart(3, '0')}`);
    if (writer.pending >= 500) await writer.flush();
  }
  await writer.flush();

  const store = { db: env.db, tableName: env.tableName };
  const cases = [
    { name: 'device comparison (bench-a vs bench-b: 20 diskperf runs a side)', a: 'bench-a', b: 'bench-b' },
    {
      name: `iostat comparison (${IOSTAT_LABELS.a} vs ${IOSTAT_LABELS.b}: 3 disks x 20 runs a side)`,
      a: IOSTAT_LABELS.a,
      b: IOSTAT_LABELS.b,
    },
  ];
  console.log(
    `dynalite ${inChild ? 'in a child process' : 'in this process'}; ` +
      `CPU per comparison (${RUNS} runs stored, mean of ${TIMED} after ${WARM_UP} untimed):`,
  );
  for (const c of cases) {
    const a = parseSelector(c.a);
    const b = parseSelector(c.b);
    const sum = { reads: 0, statistics: 0, json: 0 };
    let last: Comparison | undefined;
    let observations = [0, 0];
    for (let i = 0; i < WARM_UP + TIMED; i++) {
      const t0 = cpuMs();
      const session = new ReadSession(store);
      const [oa, ob] = await Promise.all([resolveSelector(store, a, session), resolveSelector(store, b, session)]);
      const t1 = cpuMs();
      const comparison = compareObservations(oa, ob, { selectors: { a: a.text, b: b.text } });
      const t2 = cpuMs();
      JSON.stringify(comparison);
      const t3 = cpuMs();
      last = comparison;
      observations = [oa.length, ob.length];
      if (i < WARM_UP) continue;
      sum.reads += t1 - t0;
      sum.statistics += t2 - t1;
      sum.json += t3 - t2;
    }
    const per = (ms: number) => (ms / TIMED).toFixed(2);
    const total = sum.reads + sum.statistics + sum.json;
    const share = (ms: number) => `${Math.round((100 * ms) / total)} %`;
    console.log(
      `  ${c.name}: ${observations[0]} and ${observations[1]} observations, ratio ${String(last?.ratio)}, ` +
        `interval over ${last?.ci?.over ?? `none (${last?.ciNote ?? '?'})`}`,
    );
    console.log(
      `    reads ${per(sum.reads)} ms (${share(sum.reads)}), statistics ${per(sum.statistics)} ms ` +
        `(${share(sum.statistics)}), JSON ${per(sum.json)} ms (${share(sum.json)}); total ${per(total)} ms`,
    );
  }
} finally {
  await env.stop();
}
