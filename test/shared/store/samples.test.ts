/**
 * SamplesWriter against s3rver: a run's samples go into one Parquet object, each
 * row group one series, every sample back as it was added, NaN where a
 * metric is missing; a large object goes up as a multipart upload; a run
 * without samples writes nothing; abort leaves nothing; deleteSamples removes.
 */
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulators, type Emulators } from '../../../harness/emulators.ts';
import { sampleRow, type IostatRun, type IostatSample } from '../../../shared/model.ts';
import { parseText } from '../../../shared/parsers/index.ts';
import { iostatRunItem, joinSpans } from '../../../shared/store/run-items.ts';
import { SamplesWriter } from '../../../shared/store/samples.ts';
import { deleteSamples } from '../../../shared/store/samples-removal.ts';
import { ROW_GROUP_SAMPLES, SAMPLE_METRICS, samplesKey } from '../../../shared/store/samples-schema.ts';
import { readSamplesObject, rowGroupSeries, seriesSamples, storedForm } from '../../support/samples.ts';

const LINUX = `Linux 5.15.0 (h) \t01/15/2024 \t_x86_64_\t(4 CPU)

01/15/2024 10:00:01 AM
Device            r/s     rkB/s   r_await     w/s     wkB/s   w_await  aqu-sz  %util
sda              1.50     24.00      0.40    3.00     48.00      1.10    0.01   0.60
sdb              0.00      0.00      0.00    0.00      0.00      0.00    0.00   0.00

01/15/2024 10:00:02 AM
Device            r/s     rkB/s   r_await     w/s     wkB/s   w_await  aqu-sz  %util
sda            120.00   1920.00      0.35   10.00    160.00      0.90    0.05  12.40

01/15/2024 10:00:03 AM
Device            r/s     rkB/s   r_await     w/s     wkB/s   w_await  aqu-sz  %util
sda             99.50   1592.00      0.37    8.00    128.00      0.95    0.04  10.10
sdb              2.00     16.00      1.50    1.00      4.00      2.00    0.00   0.30
`;

let env: Emulators;
beforeAll(async () => {
  env = await startEmulators();
}, 60_000);
afterAll(() => env?.stop());

const bucket = () => ({ s3: env.s3, resultsBucket: env.resultsBucket });

/** A sample with every metric set from a seed (or only some, when `sparse`). */
function sample(report: number, seed: number, sparse = false): IostatSample {
  const values: IostatSample['values'] = {};
  SAMPLE_METRICS.forEach((metric, i) => {
    if (!sparse || i % 3 === 0) values[metric] = Math.sin(seed * (i + 1)) * 1000;
  });
  return { report, line: report * 3 + 7, sinceBoot: report === 0, values, raw: {}, time: `t${report}` };
}

async function objectKeys(): Promise<string[]> {
  const listed = await env.s3.send(new ListObjectsV2Command({ Bucket: env.resultsBucket }));
  return (listed.Contents ?? []).map((o) => o.Key!);
}

describe('a run’s samples object', () => {
  it('holds every sample of every series, each row group one series, values as the parser gave them', async () => {
    const run = (await parseText(LINUX)).runs[0] as IostatRun;
    const writer = new SamplesWriter(bucket(), 'rlinux');
    for (const series of run.series) for (const s of series.samples!) writer.add(series.device, sampleRow(s));
    const stored = await writer.finish();
    expect(stored).toMatchObject({ key: samplesKey('rlinux'), rows: 5 });
    const head = await env.s3.send(new HeadObjectCommand({ Bucket: env.resultsBucket, Key: stored!.key }));
    expect(head.ContentLength).toBe(stored!.bytes);
    const file = await readSamplesObject(env.s3, env.resultsBucket, stored!.key);
    for (const series of run.series)
      expect(seriesSamples(file.rows, series.device)).toEqual(series.samples!.map(storedForm));
    expect(rowGroupSeries(file.metadata)).toEqual([
      { min: 'sda', max: 'sda', rows: 3 },
      { min: 'sdb', max: 'sdb', rows: 2 },
    ]);
    // A metric the platform does not print is NaN in every row (required column: no levels to encode).
    const unprinted = SAMPLE_METRICS.filter((m) => run.series.every((s) => s.samples!.every((x) => !(m in x.values))));
    expect(unprinted.length).toBeGreaterThan(0);
    for (const row of file.rows) for (const m of unprinted) expect(row[m]).toBeNaN();
    // The span the run's META gets, from what streamed past.
    const bare: IostatRun = { ...run, series: run.series.map(({ samples: _s, ...s }) => s) };
    const span = joinSpans(run.series.map((s) => writer.span(s.device)));
    const kept = iostatRunItem(run, ctxOf('rlinux')).run;
    const streamed = iostatRunItem(bare, ctxOf('rlinux'), { span, samples: stored }).run;
    expect([streamed.from, streamed.to, streamed.time]).toEqual([kept.from, kept.to, kept.time]);
    expect(streamed.samples).toEqual(stored);
    expect(kept).not.toHaveProperty('samples');
  });

  it('writes a row group per ROW_GROUP_SAMPLES of a series, and cut buffers as partial groups', async () => {
    const writer = new SamplesWriter(bucket(), 'rgroups');
    const added: Record<string, IostatSample[]> = { a: [], b: [] };
    const total = ROW_GROUP_SAMPLES + 200;
    for (let i = 0; i < total; i++) {
      for (const series of ['a', 'b']) {
        const s = sample(i, i + series.length, series === 'b');
        if (series === 'b' && i % 2 === 1) delete s.time;
        writer.add(series, sampleRow(s));
        added[series]!.push(s);
      }
      if (i === 99) writer.cutAll();
      if (i % 500 === 0) await writer.drain();
    }
    expect(writer.buffered).toBe(2 * (total - 100 - ROW_GROUP_SAMPLES));
    const stored = (await writer.finish())!;
    expect(stored.rows).toBe(2 * total);
    const file = await readSamplesObject(env.s3, env.resultsBucket, stored.key);
    for (const series of ['a', 'b']) expect(seriesSamples(file.rows, series)).toEqual(added[series]!.map(storedForm));
    const groups = rowGroupSeries(file.metadata);
    for (const g of groups) expect(g.min).toBe(g.max);
    // Cut after 100 samples each, full at ROW_GROUP_SAMPLES more, the rest at finish.
    for (const series of ['a', 'b'])
      expect(groups.filter((g) => g.min === series).map((g) => g.rows)).toEqual([100, ROW_GROUP_SAMPLES, 100]);
  });

  it('outgrows a multipart part (over 5 MiB) and reads back whole', async () => {
    const writer = new SamplesWriter(bucket(), 'rlarge');
    // Values that do not compress: about 8 bytes each, past S3's 5 MiB part size.
    const count = 60_000;
    for (let i = 0; i < count; i++) {
      writer.add('big', sampleRow(sample(i, i * 7.31)));
      if (i % 1000 === 0) await writer.drain();
    }
    const stored = (await writer.finish())!;
    expect(stored.bytes).toBeGreaterThan(5 * 1024 * 1024);
    const head = await env.s3.send(new HeadObjectCommand({ Bucket: env.resultsBucket, Key: stored.key }));
    expect(head.ContentLength).toBe(stored.bytes);
    const file = await readSamplesObject(env.s3, env.resultsBucket, stored.key);
    expect(file.rows).toHaveLength(count);
    expect(seriesSamples(file.rows, 'big')[count - 1]).toEqual(storedForm(sample(count - 1, (count - 1) * 7.31)));
  }, 60_000);

  it('a run without samples writes no object; an aborted one leaves none; deleteSamples removes, a missing one too', async () => {
    expect(await new SamplesWriter(bucket(), 'rnone').finish()).toBeUndefined();
    const aborted = new SamplesWriter(bucket(), 'raborted');
    for (let i = 0; i < ROW_GROUP_SAMPLES; i++) aborted.add('sda', sampleRow(sample(i, i)));
    await aborted.drain();
    await aborted.abort();
    const kept = new SamplesWriter(bucket(), 'rkept');
    kept.add('sda', sampleRow(sample(0, 1)));
    await kept.finish();
    const keys = await objectKeys();
    expect(keys).toContain(samplesKey('rkept'));
    expect(keys).not.toContain(samplesKey('rnone'));
    expect(keys).not.toContain(samplesKey('raborted'));
    await deleteSamples(bucket(), ['rkept', 'rnever']);
    expect(await objectKeys()).not.toContain(samplesKey('rkept'));
  });
});

const ctxOf = (runId: string) => ({
  runId,
  label: 'host',
  tags: {},
  source: { bucket: 'drop', key: 'k', version: 'v' },
  ingestedAt: '2026-01-01T00:00:00.000Z',
});
