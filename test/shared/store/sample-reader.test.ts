/**
 * shared/store/sample-reader.ts against s3rver, on objects written here with
 * hyparquet-writer's ParquetWriter as earlier versions wrote them (nullable
 * metrics, snappy pages; today's writer is covered by the samples route's
 * tests), and with the writer's default statistics: string bounds cut at 16 bytes, so a long
 * series name (Solaris `c0t5000CCA012345678d0`) is not in them and the reader
 * has to read the group's first value. Row groups of the series interleave, a
 * series skips reports, and the footer is read once and kept.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ByteWriter, ParquetWriter, schemaFromColumnData, type ColumnSource } from 'hyparquet-writer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../../harness/quiet.ts';
import { startEmulators, type Emulators } from '../../../harness/emulators.ts';
import { IOSTAT_METRICS } from '../../../shared/metrics.ts';
import { forgetSamples, openSamples, readSeries, seriesNames } from '../../../shared/store/sample-reader.ts';

let env: Emulators;
beforeAll(async () => {
  env = await startEmulators();
});
afterAll(() => env?.stop());

const LONG = 'c0t5000CCA012345678d0';
const LONGER = 'c0t5000CCA012345678d1';
const SHORT = 'sda';

interface Row {
  series: string;
  report: number;
  time: string | null;
  sinceBoot: boolean;
  util: number | null;
}

/** Rows of one series: reports from `first`, every `step`th, util the report itself (null every 7th). */
function rowsOf(series: string, first: number, count: number, step = 1): Row[] {
  return Array.from({ length: count }, (_, i) => {
    const report = first + i * step;
    return {
      series,
      report,
      time: report % 5 === 0 ? null : `2026-11-02T10:${String(report % 60).padStart(2, '0')}:00`,
      sinceBoot: report === 0,
      util: report % 7 === 3 ? null : report / 10,
    };
  });
}

/** A samples object of these row groups, in this order, with the writer's default statistics. */
function samplesObject(groups: Row[][]): Uint8Array {
  const writer = new ByteWriter();
  const types: Omit<ColumnSource, 'data'>[] = [
    { name: 'series', type: 'STRING', nullable: false },
    { name: 'report', type: 'INT32', nullable: false },
    { name: 'line', type: 'INT32', nullable: false },
    { name: 'time', type: 'STRING', nullable: true },
    { name: 'since_boot', type: 'BOOLEAN', nullable: false },
    ...IOSTAT_METRICS.map((name) => ({ name, type: 'DOUBLE' as const, nullable: true })),
  ];
  const schema = schemaFromColumnData({ columnData: types.map((t) => ({ ...t, data: [] })) });
  const parquet = new ParquetWriter({ writer, schema });
  for (const rows of groups) {
    const column = (name: string): unknown[] =>
      rows.map((r) => {
        if (name === 'series') return r.series;
        if (name === 'report') return r.report;
        if (name === 'line') return 10 + r.report;
        if (name === 'time') return r.time;
        if (name === 'since_boot') return r.sinceBoot;
        return name === 'util_pct' ? r.util : null;
      });
    void parquet.write({
      columnData: types.map((t) => ({ ...t, data: column(t.name) })) as ColumnSource[],
      rowGroupSize: rows.length,
    });
  }
  void parquet.finish();
  return new Uint8Array(writer.getBuffer());
}

async function put(key: string, body: Uint8Array): Promise<void> {
  await env.s3.send(new PutObjectCommand({ Bucket: env.resultsBucket, Key: key, Body: body }));
}

const expectedOf = (rows: Row[]) => ({
  reports: rows.map((r) => r.report),
  times: rows.map((r) => r.time),
  sinceBoot: rows.map((r) => r.sinceBoot),
  values: rows.map((r) => r.util),
});

describe('readSeries', () => {
  // LONG's reports skip every other one; its groups interleave with LONGER's and SHORT's.
  const long = [rowsOf(LONG, 0, 300, 2), rowsOf(LONG, 600, 300, 2), rowsOf(LONG, 1200, 50, 2)];
  const longer = [rowsOf(LONGER, 0, 250), rowsOf(LONGER, 250, 250)];
  const short = [rowsOf(SHORT, 0, 120)];
  const key = 'samples/interleaved.parquet';

  beforeAll(async () => {
    forgetSamples();
    await put(key, samplesObject([long[0]!, longer[0]!, short[0]!, long[1]!, longer[1]!, long[2]!]));
  });

  it('finds each series by its statistics, or by its first value where they are cut short', async () => {
    const file = await openSamples(env.s3, env.resultsBucket, key);
    expect(seriesNames(file!)).toEqual([LONG, LONGER, SHORT]);
    for (const [series, groups] of [
      [LONG, long],
      [LONGER, longer],
      [SHORT, short],
    ] as const) {
      const page = await readSeries(env.s3, file!, series, 'util_pct', { start: 0, limit: 50_000 });
      expect(page).toEqual(expectedOf(groups.flat()));
    }
    expect(await readSeries(env.s3, file!, 'c0t5000CCA0', 'util_pct', { start: 0, limit: 10 })).toBeUndefined();
  });

  it('pages by report: from the first report at or after `start`, across row groups, `next` the one after', async () => {
    const file = (await openSamples(env.s3, env.resultsBucket, key))!;
    const all = long.flat();
    // 599 is not a report of LONG (it skips odd ones): the page starts at 600, in the second group.
    const page = await readSeries(env.s3, file, LONG, 'util_pct', { start: 599, limit: 320 });
    const from = all.findIndex((r) => r.report >= 599);
    expect(page).toEqual({ ...expectedOf(all.slice(from, from + 320)), next: all[from + 319]!.report + 1 });
    const joined: number[] = [];
    for (let start: number | undefined = 0; start !== undefined;) {
      const next: Awaited<ReturnType<typeof readSeries>> = await readSeries(env.s3, file, LONG, 'util_pct', {
        start,
        limit: 299,
      });
      joined.push(...next!.reports);
      start = next!.next;
    }
    expect(joined).toEqual(all.map((r) => r.report));
    const past = await readSeries(env.s3, file, LONG, 'util_pct', { start: 10_000, limit: 10 });
    expect(past).toEqual({ reports: [], times: [], sinceBoot: [], values: [] });
  });

  it('a metric the platform did not print is null in every sample', async () => {
    const file = (await openSamples(env.s3, env.resultsBucket, key))!;
    const page = await readSeries(env.s3, file, SHORT, 'read_ms', { start: 0, limit: 1000 });
    expect(page!.values).toEqual(short[0]!.map(() => null));
  });
});

describe('openSamples', () => {
  it('is undefined when there is no object, and then finds one written later', async () => {
    forgetSamples();
    const key = 'samples/later.parquet';
    expect(await openSamples(env.s3, env.resultsBucket, key)).toBeUndefined();
    await put(key, samplesObject([rowsOf(SHORT, 0, 3)]));
    expect(seriesNames((await openSamples(env.s3, env.resultsBucket, key))!)).toEqual([SHORT]);
  });

  it('keeps a footer it read: the object is not asked for again', async () => {
    forgetSamples();
    const key = 'samples/kept.parquet';
    await put(key, samplesObject([rowsOf(SHORT, 0, 3)]));
    const first = await openSamples(env.s3, env.resultsBucket, key);
    // Objects never change under their key; this one is overwritten only to show the footer is kept.
    await put(key, samplesObject([rowsOf(LONG, 0, 3)]));
    expect(await openSamples(env.s3, env.resultsBucket, key)).toBe(first);
    forgetSamples();
    expect(seriesNames((await openSamples(env.s3, env.resultsBucket, key))!)).toEqual([LONG]);
  });

  it('refuses an object that is not Parquet, and does not keep the failure', async () => {
    forgetSamples();
    const key = 'samples/not-parquet.parquet';
    await put(key, new TextEncoder().encode('not a parquet file at all'));
    await expect(openSamples(env.s3, env.resultsBucket, key)).rejects.toThrow(/parquet/);
    await put(key, samplesObject([rowsOf(SHORT, 0, 2)]));
    expect(seriesNames((await openSamples(env.s3, env.resultsBucket, key))!)).toEqual([SHORT]);
  });
});
