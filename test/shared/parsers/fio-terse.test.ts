/**
 * fio terse output (shared/parsers/fio-terse.ts) through the style-detecting parser
 * (shared/parsers/fio.ts): every fixture exact, the same figures read alike in every
 * version's layout, cut-short and wrong lines failing on their line and field.
 */
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../shared/parsers/errors.ts';
import { fioStyleOf, parseFioText } from '../../../shared/parsers/fio.ts';
import type { FioJob } from '../../../shared/parsers/fio-record.ts';
import { createFioTerseParser } from '../../../shared/parsers/fio-terse.ts';
import { describeFioFixtures, fioFailure, readFio as read } from '../../support/fio.ts';

/** The v3 randrw fixture's fields: 5 of the job, read and write blocks of 41, 34 of cpu and buckets, 9 of a disk. */
const V3 = read('terse-v3-randrw-percentiles.txt').trim().split(';');
const BLOCK = 41;
const JOB_FIELDS = 5;
/** cpu (5), I/O depths (7), µs (10) and ms (12) latency buckets: the tail of every version, no disk after it in 2. */
const TAIL = V3.slice(JOB_FIELDS + 2 * BLOCK, JOB_FIELDS + 2 * BLOCK + 34);
/** The fio 2.0 version 2 fixture's first record: 4 fields of the job, read and write blocks of 41, the tail. */
const V2_LINE = read('terse-v2-fio20-randread-randrw.txt').split('\n')[1]!;
/** A block of a direction that did nothing, as fio prints it. */
const IDLE_BLOCK = [
  ...['0', '0', '0', '0'],
  ...['0', '0', '0.000000', '0.000000', '0', '0', '0.000000', '0.000000'],
  ...Array<string>(20).fill('0%=0'),
  ...['0', '0', '0.000000', '0.000000'],
  ...['0', '0', '0.000000%', '0.000000', '0.000000'],
];

const blockAt = (i: number) => V3.slice(JOB_FIELDS + i * BLOCK, JOB_FIELDS + (i + 1) * BLOCK);
const READ_BLOCK = blockAt(0);
const WRITE_BLOCK = blockAt(1);

/** The v3 figures in another layout: `blocks` after the job's fields, the rest as it was. */
function relaid(version: string, blocks: string[][]): string {
  return [version, ...V3.slice(1, JOB_FIELDS), ...blocks.flat(), ...V3.slice(JOB_FIELDS + 2 * BLOCK)].join(';');
}

/** Version 5's six fields after a block: bw samples, iops min, max, mean, stddev, samples. */
const withV5Stats = (block: string[]) => [...block, '120', '2900', '7100', '6998.5', '40.2', '120'];

const failure = (text: string) => fioFailure(text, 'run.terse');

/** Lines straight into the terse parser (what the dispatcher would not route to it: versions it does not read, quoted lines). */
function direct(lines: string[]): { jobs: FioJob[]; version?: string } {
  const jobs: FioJob[] = [];
  const parser = createFioTerseParser({ source: 'run.terse', onJob: (job) => jobs.push(job) });
  lines.forEach((line, i) => parser.line(line, i + 1));
  return { ...parser.end(lines.length), jobs };
}

describeFioFixtures(
  'fio terse fixtures',
  /^terse-/,
  7,
  'v2 of fio 2.0, v3 randrw, several commented jobs, a failed job, v4 trim, v5, unified_rw_reporting',
);

describe('fio terse layouts', () => {
  const v3 = parseFioText(V3.join(';'));

  it('reads the v3 figures in bytes and µs', () => {
    const [r, w] = v3.jobs[0]!.directions;
    expect(r).toMatchObject({ direction: 'read', iops: 7000, bandwidthBytesPerSec: 56000 * 1024, runtimeMs: 60000 });
    expect(r!.ioBytes).toBe(3_360_000 * 1024);
    expect(r!.clat).toEqual({ minUs: 48, maxUs: 18250, meanUs: 2269.5041, stddevUs: 1402.775 });
    expect(w!.clatPercentilesUs).toEqual({ p50: 1860, p90: 4146, p99: 8586, 'p99.9': 13042, 'p99.99': 19006 });
    expect(v3.version).toBe('fio-3.28');
  });

  it('gives the same directions for the same figures in v3, v4 (an idle trim block) and v5 (iops stats)', () => {
    const v4 = parseFioText(relaid('4', [READ_BLOCK, WRITE_BLOCK, IDLE_BLOCK]));
    const v5 = parseFioText(relaid('5', [READ_BLOCK, WRITE_BLOCK, IDLE_BLOCK].map(withV5Stats)));
    expect(v4.jobs.map((j) => j.directions)).toEqual(v3.jobs.map((j) => j.directions));
    expect(v5.jobs.map((j) => j.directions)).toEqual(v3.jobs.map((j) => j.directions));
    expect(v3.jobs[0]!.directions.map((d) => d.direction)).toEqual(['read', 'write']);
  });

  it('keeps a trim block that did I/O in v4', () => {
    const v4 = parseFioText(relaid('4', [READ_BLOCK, WRITE_BLOCK, READ_BLOCK]));
    expect(v4.jobs[0]!.directions.map((d) => d.direction)).toEqual(['read', 'write', 'trim']);
    expect(v4.jobs[0]!.directions[2]).toEqual({ ...v3.jobs[0]!.directions[0]!, direction: 'trim' });
  });

  it('reads version 2: no fio version field, a trim block, no version in the header', () => {
    const v2 = ['2', ...V3.slice(2, JOB_FIELDS), READ_BLOCK, WRITE_BLOCK, IDLE_BLOCK, TAIL];
    const out = parseFioText(v2.flat().join(';'));
    expect(out.style).toBe('terse');
    expect(out.jobs.map((j) => j.directions)).toEqual(v3.jobs.map((j) => j.directions));
    expect(out.jobs[0]!.name).toBe('randrw-8k-qd16');
    expect(out.version).toBeUndefined();
  });

  it("reads fio 2.0's version 2, read and write blocks alone, as v3 reads the same blocks", () => {
    const v2 = ['2', ...V3.slice(2, JOB_FIELDS), READ_BLOCK, WRITE_BLOCK, TAIL].flat();
    expect(v2).toHaveLength(120);
    const out = parseFioText(v2.join(';'));
    expect(out.jobs.map(({ line: _l, ...job }) => job)).toEqual(v3.jobs.map(({ line: _l, ...job }) => job));
  });

  it('reads a mixed block after read and write (unified_rw_reporting=both)', () => {
    const both = parseFioText(relaid('3', [READ_BLOCK, WRITE_BLOCK, READ_BLOCK]));
    // Version 3 writes no trim block, so a third block before the cpu fields is the mixed one.
    expect(both.jobs[0]!.directions.map((d) => d.direction)).toEqual(['read', 'write', 'mixed']);
  });

  it('reads a terse line quoted after other text on its line when whole, and skips an elided one', () => {
    const out = direct(['# output version 3;fio-3.28;short;0;0;...', `      # output version ${V3.join(';')}`]);
    expect(out.jobs.map((j) => [j.name, j.line])).toEqual([['randrw-8k-qd16', 2]]);
    expect(out.jobs[0]!.directions).toEqual(v3.jobs[0]!.directions);
  });

  it('reads every status-interval line as a job, in order', () => {
    const second = V3.join(';').replace('randrw-8k-qd16', 'interval-2');
    const out = parseFioText(`${V3.join(';')}\nJobs: 1 (f=1): [m(1)][50.0%]\n${second}\n`);
    expect(out.jobs.map((j) => [j.name, j.line])).toEqual([
      ['randrw-8k-qd16', 1],
      ['interval-2', 3],
    ]);
  });
});

describe('fio terse version 2 told by its shape', () => {
  const fields = V2_LINE.split(';');
  const changed = (index: number, value: string) => fields.map((f, i) => (i === index ? value : f)).join(';');

  it('takes a whole record, bare or behind a block prefix', () => {
    expect(fioStyleOf(V2_LINE)).toBe('terse');
    expect(parseFioText(`# ${V2_LINE}\n`).jobs.map((j) => [j.name, j.line])).toEqual([['randread-4k', 1]]);
  });

  it.each([
    ['a short list', '2;seq;0;0;1024;'],
    ['no percentile where the read block keeps its first', changed(16, '330')],
    ['no cpu usr% after the blocks', changed(86, '4.1234')],
    ['no cpu sys% after it', changed(87, '11.8766')],
    ['a record cut short in its tail', fields.slice(0, 110).join(';')],
    ['a group that is not a whole number', changed(2, 'zero')],
    ['figures alone', Array.from({ length: 120 }, (_, i) => (i === 0 ? '2' : String(i))).join(';')],
  ])('takes no line starting "2;" with %s', (_what, line) => {
    expect(fioStyleOf(line)).toBeUndefined();
    expect(() => parseFioText(`${line}\n`)).toThrow(/no fio output/);
  });

  it('fails on a record cut short among whole ones, on its line', () => {
    const error = failure(`${V2_LINE}\n${fields.slice(0, 60).join(';')}\n`);
    expect(error.line).toBe(2);
    expect(error.problem).toMatch(/^a terse version 2 line cut short: 60 fields/);
  });

  it('names version 2 field numbers in its errors (one fewer than v3: no fio version)', () => {
    const error = failure(`${V2_LINE}\n${changed(6, 'fast')}\n`);
    expect(error.line).toBe(2);
    expect(error.problem).toBe('field 7 (read IOPS) is "fast", not a number');
  });
});

describe('fio terse errors', () => {
  const good = V3.join(';');

  it('fails on a line cut short, on its line, saying how many fields it had and needed', () => {
    const cut = V3.slice(0, 100).join(';');
    const error = failure(`fio --minimal jobs.fio\n${good}\n${cut}\n`);
    expect(error.line).toBe(3);
    expect(error.problem).toBe('a terse version 3 line cut short: 100 fields, where its layout needs 121');
  });

  it('fails on a v3 line labelled version 4 (too short for a trim block)', () => {
    const error = failure(`\n${good.replace(/^3;/, '4;')}\n`);
    expect(error.line).toBe(2);
    expect(error.problem).toMatch(/version 4 line cut short: 130 fields, where its layout needs 162/);
  });

  it('fails on a figure that is not a number, naming the field', () => {
    const fields = [...V3];
    fields[7] = 'fast';
    const error = failure(`${good}\n${fields.join(';')}\n`);
    expect(error.line).toBe(2);
    expect(error.problem).toBe('field 8 (read IOPS) is "fast", not a number');
  });

  it('fails on a write figure and a percentile that do not read, naming them', () => {
    const write = [...V3];
    write[JOB_FIELDS + BLOCK + 1] = '24000KiB';
    expect(failure(write.join(';')).problem).toBe('field 48 (write bandwidth (KiB/s)) is "24000KiB", not a number');
    const percentile = [...V3];
    percentile[29] = '99.000000%:7111';
    expect(failure(percentile.join(';')).problem).toBe('field 30 (read clat percentile 13) is "99.000000%:7111"');
  });

  it('fails on blocks that do not fit the version, naming the cpu field', () => {
    const v5 = relaid('5', [READ_BLOCK, WRITE_BLOCK, IDLE_BLOCK].map(withV5Stats));
    const error = failure(v5.replace(/^5;/, '4;'));
    expect(error.problem).toBe('field 129 (cpu usr) is "0%=0", not a percentage');
  });

  it('fails on a version it does not read, and on a version 2 line naming a fio version', () => {
    expect(() => direct([good.replace(/^3;/, '6;')])).toThrow(/a terse line of version 6/);
    expect(() => direct([good.replace(/^3;/, '2;')])).toThrow(/terse version 2 line with a fio version in field 2/);
  });

  it('fails at the end when no terse line came', () => {
    const parser = createFioTerseParser({ source: 'run.terse', onJob: () => undefined });
    parser.line('Jobs: 1 (f=1): [r(1)][100.0%]', 1);
    expect(() => parser.end(1)).toThrow(ParseError);
    expect(() => parser.end(1)).toThrow(/no fio terse line/);
  });
});
