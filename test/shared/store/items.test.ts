/** Packed values and diskperf tables: what the parser emits comes back from a stored item unchanged. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DiskperfRun, IostatRun } from '../../../shared/model.ts';
import { parseText } from '../../../shared/parsers/index.ts';
import { diskperfRows, numberText, packRows, runRecord } from '../../../shared/store/packing.ts';
import { diskperfRunItem, iostatRunItem, joinSpans, samplesTime, spanOf } from '../../../shared/store/run-items.ts';
import { runTagItems, type DiskperfRunItem } from '../../../shared/store/items.ts';

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

describe('packed values', () => {
  it('packs numbers as the very text String() gives, on its fast path and off it', () => {
    // What iostat prints: non-negative, 0 to 3 decimals.
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2e9 }), fc.integer({ min: 0, max: 3 }), (k, d) => {
        const v = k / 10 ** d;
        expect(numberText(v)).toBe(String(v));
      }),
      { numRuns: 2000 },
    );
    // Anything else falls back to String().
    fc.assert(
      fc.property(fc.double({ noNaN: true }), (v) => {
        expect(numberText(v)).toBe(String(v));
      }),
      { numRuns: 2000 },
    );
    for (const v of [0, -0, 0.001, 0.01, 0.1, 0.5, 1.005, 999999999.999, 1e9, 1e21, 1e-7, 123.456, -1.5])
      expect(numberText(v)).toBe(String(v));
  });
});

describe('diskperf tables', () => {
  const FIXTURE = join(
    dirname(fileURLToPath(import.meta.url)),
    '../../fixtures/irix/irix-6.5-indy-300G-10K.diskperf.txt',
  );

  it('a run item keeps its table column-wise and reads back row for row', async () => {
    const run = (await parseText(readFileSync(FIXTURE, 'utf8'))).runs[0] as DiskperfRun;
    const source = { bucket: 'b', key: 'k', version: 'v' };
    const item = diskperfRunItem(run, {
      runId: 'r0',
      label: 'hdd',
      tags: {},
      source,
      ingestedAt: '2024-01-01T00:00:00Z',
    });
    expect(item.rows).toBeUndefined();
    expect(item.packedRows!.req_size.split(' ')).toHaveLength(run.rows.length);
    // The 300G disk measured 0.00 random writes at 8 KiB: a 0, not a missing value.
    expect(item.packedRows!.values.rnd_wt!.split(' ')[1]).toBe('0');
    expect(diskperfRows(item)).toEqual(run.rows.map((r) => ({ req_size: r.req_size, values: r.values })));
    expect(JSON.stringify(item.packedRows).length).toBeLessThan(
      JSON.stringify(run.rows.map((r) => ({ req_size: r.req_size, values: r.values }))).length / 2,
    );
  });

  it('a row without some column reads back without it; an empty table is empty', () => {
    const rows = [
      { req_size: 512, values: { fwd_wt: 1.5, fwd_rd: 2 } },
      { req_size: 1024, values: { fwd_rd: 3.25 } },
    ];
    expect(packRows(rows)).toEqual({ req_size: '512 1024', values: { fwd_wt: '1.5 -', fwd_rd: '2 3.25' } });
    expect(diskperfRows({ packedRows: packRows(rows) })).toEqual(rows);
    expect(diskperfRows({ packedRows: packRows([]) })).toEqual([]);
  });

  it('items written before packing (rows as maps) read the same, and readers hand out rows either way', () => {
    const rows = [{ req_size: 4096, values: { rnd_rd: 0.5 } }];
    const legacy = { format: 'diskperf', rows } as unknown as DiskperfRunItem;
    expect(diskperfRows(legacy)).toEqual(rows);
    expect(runRecord(legacy)).toEqual({ format: 'diskperf', rows });
    expect(runRecord({ format: 'diskperf', packedRows: packRows(rows) } as unknown as DiskperfRunItem)).toEqual({
      format: 'diskperf',
      rows,
    });
  });
});

describe('tag items', () => {
  it('a run gets one TAG item per tag, in its own partition, indexed by tag and newest first; an untagged run none', async () => {
    const FIXTURE = join(
      dirname(fileURLToPath(import.meta.url)),
      '../../fixtures/irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt',
    );
    const run = (await parseText(readFileSync(FIXTURE, 'utf8'))).runs[0] as DiskperfRun;
    const source = { bucket: 'b', key: 'k', version: 'v' };
    const tags = { interface: 'SAS', rpm: '10000' };
    const item = diskperfRunItem(run, {
      runId: 'r0',
      label: 'sas10k',
      tags,
      source,
      ingestedAt: '2024-01-01T00:00:00Z',
    });
    expect(runTagItems(item)).toEqual(
      ['interface=SAS', 'rpm=10000'].map((tag) => ({
        pk: 'RUN#r0',
        sk: `TAG#${tag}`,
        type: 'tag',
        runId: 'r0',
        format: 'diskperf',
        label: 'sas10k',
        host: 'IRIS',
        tags,
        time: '2020-04-03T21:10:13',
        gsi3pk: `TAG#${tag}`,
        gsi3sk: '2020-04-03T21:10:13#r0',
      })),
    );
    expect(runTagItems({ ...item, tags: {} })).toEqual([]);
  });
});

describe("a run's time range (RUN META from/to)", () => {
  const ctx = {
    runId: `r${'0'.repeat(24)}`,
    label: 'h',
    tags: {},
    source: { bucket: 'b', key: 'h/x.txt', version: 'v1' },
    ingestedAt: '2031-01-01T00:00:00.000Z',
  };

  it('zoned times are said in UTC, zone-less ones as printed', () => {
    expect(samplesTime('2024-01-15T10:00:01+01:00')).toBe('2024-01-15T09:00:01Z');
    expect(samplesTime('2024-01-15T10:00:01Z')).toBe('2024-01-15T10:00:01Z');
    expect(samplesTime('2024-01-15T10:00:01')).toBe('2024-01-15T10:00:01');
    expect(spanOf([undefined, '2024-01-15T10:00:03Z', '2024-01-15T10:00:01Z'])).toEqual({
      from: '2024-01-15T10:00:01Z',
      to: '2024-01-15T10:00:03Z',
    });
    expect(spanOf(['2024-01-15T10:00:01'])).toEqual({ from: '2024-01-15T10:00:01' });
    expect(spanOf([undefined])).toBeUndefined();
    expect(joinSpans([{ from: 'b' }, undefined, { from: 'a', to: 'c' }])).toEqual({ from: 'a', to: 'c' });
  });

  it("an iostat run holds its samples' first and last time, from its samples or the span they streamed past with", async () => {
    const run = (await parseText(LINUX)).runs[0] as IostatRun;
    const kept = iostatRunItem(run, ctx).run;
    expect([kept.from, kept.to, kept.time]).toEqual([
      '2024-01-15T10:00:01',
      '2024-01-15T10:00:03',
      '2024-01-15T10:00:01',
    ]);
    // Streamed: the run holds no samples; the span is what the samples writer saw (samples.test.ts).
    const bare: IostatRun = { ...run, series: run.series.map(({ samples: _samples, ...s }) => s) };
    expect(iostatRunItem(bare, ctx, {}).run).not.toHaveProperty('from');
    const span = joinSpans(run.series.map((s) => spanOf(s.samples!.map((x) => x.time))));
    const streamed = iostatRunItem(bare, ctx, { span }).run;
    expect([streamed.from, streamed.to, streamed.time]).toEqual([kept.from, kept.to, kept.time]);
  });

  it("a diskperf run holds its header's date as `from` alone; a run without times has neither", async () => {
    const text = readFileSync(
      join(dirname(fileURLToPath(import.meta.url)), '../../fixtures/irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt'),
      'utf8',
    );
    const run = (await parseText(text)).runs[0] as DiskperfRun;
    const item = diskperfRunItem(run, ctx);
    expect(item.from).toBe('2020-04-03T21:10:13');
    expect(item).not.toHaveProperty('to');
    expect(diskperfRunItem({ ...run, meta: { ...run.meta, startedAt: undefined } }, ctx)).not.toHaveProperty('from');
  });
});
