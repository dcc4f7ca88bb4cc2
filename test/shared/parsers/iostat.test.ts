/**
 * The iostat text parser (shared/parsers/iostat.ts, iostat-run.ts) through the full
 * driver, on cases the fixtures leave out: since-boot reports and summaries,
 * streaming (keepSamples: false, onIostatSample), damaged tables, --pretty groups,
 * several invocations in one file, the context kept before a run, and the real
 * x4100 sample.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { IostatRun, IostatSample, Run } from '../../../shared/model.ts';
import { parseFile, parseStream, parseText } from '../../../shared/parsers/index.ts';
import { MAX_SERIES_PER_RUN } from '../../../shared/parsers/iostat-run.ts';
import { parseFails, seriesOf } from '../../support/parsed.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures');
const X4100 = join(FIXTURES, 'solaris/solaris-10-x4100-sas-maxcontig.iostat.txt');

async function iostatRuns(text: string): Promise<IostatRun[]> {
  const parsed = await parseText(text, 'test.txt');
  expect(parsed.format).toBe('iostat');
  for (const run of parsed.runs) expect(run.format).toBe('iostat');
  return parsed.runs as IostatRun[];
}

function close(actual: number | undefined, expected: number, what = 'value'): void {
  expect(actual, what).toBeTypeOf('number');
  expect(Math.abs(actual! - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(
    Math.max(1e-9, Math.abs(expected) * 1e-9),
  );
}

/** Sample standard deviation, by hand. */
function stddev(values: number[]): number {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1));
}

const TITLE = '                    extended device statistics';
const XN_HEADER = '    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device';

/** A Solaris -xn row; fields: r/s w/s kr/s kw/s wait actv wsvc_t asvc_t %w %b. */
function xnRow(device: string, v: readonly number[]): string {
  const widths = [6, 6, 6, 6, 4, 4, 6, 6, 3, 3];
  return `${v.map((x, i) => ` ${x.toFixed(i >= 8 ? 0 : 1).padStart(widths[i]!)}`).join('')} ${device}`;
}

/** One -xn report per entry: device -> the ten values. */
function xnLog(reports: Record<string, number[]>[], command = 'iostat -xn 5 3'): string {
  const lines = [command];
  for (const report of reports) {
    lines.push(TITLE, XN_HEADER);
    for (const [device, values] of Object.entries(report)) lines.push(xnRow(device, values));
  }
  return `${lines.join('\n')}\n`;
}

// Three reports of two disks: report 0 (since boot) is far from the interval reports.
const THREE_REPORTS = [
  {
    c1t0d0: [0.9, 2.7, 11.4, 25.3, 0.0, 0.0, 0.1, 7.9, 0, 1],
    c1t1d0: [0.8, 2.5, 10.0, 24.0, 0.0, 0.0, 0.1, 8.0, 0, 1],
  },
  {
    c1t0d0: [156.2, 12.0, 1249.6, 96.0, 0.0, 1.4, 0.0, 8.3, 0, 88],
    c1t1d0: [148.8, 12.0, 1190.4, 96.0, 0.0, 1.3, 0.0, 8.1, 0, 85],
  },
  {
    c1t0d0: [162.4, 9.8, 1299.2, 78.4, 0.0, 1.5, 0.0, 8.7, 0, 91],
    c1t1d0: [159.0, 9.8, 1272.0, 78.4, 0.0, 1.4, 0.0, 8.5, 0, 90],
  },
];

describe('since-boot report', () => {
  it('marks report 0 as since boot and no other', async () => {
    const [run] = await iostatRuns(xnLog(THREE_REPORTS));
    expect(run!.reports).toBe(3);
    for (const s of run!.series) {
      expect(s.samples!.map((x) => x.report)).toEqual([0, 1, 2]);
      expect(s.samples!.map((x) => x.sinceBoot)).toEqual([true, false, false]);
    }
  });

  it('leaves report 0 out of the summary when the run has more than one report', async () => {
    const [run] = await iostatRuns(xnLog(THREE_REPORTS));
    const s = seriesOf(run!, 'c1t0d0');
    expect(s.sampleCount).toBe(3);
    // read_iops of reports 1 and 2: 156.2 and 162.4; report 0 (0.9) is left out.
    expect(s.summary.read_iops!.count).toBe(2);
    close(s.summary.read_iops!.mean, (156.2 + 162.4) / 2, 'mean');
    close(s.summary.read_iops!.min, 156.2, 'min');
    close(s.summary.read_iops!.max, 162.4, 'max');
    close(s.summary.read_iops!.stddev, stddev([156.2, 162.4]), 'stddev');
    // Derived iops too: (156.2 + 12.0) and (162.4 + 9.8).
    close(s.summary.iops!.mean, (168.2 + 172.2) / 2, 'iops mean');
    close(s.summary.util_pct!.mean, (88 + 91) / 2, 'util mean');
    // %w has no metric: nothing in the summary comes from it.
    expect(Object.keys(s.summary).sort()).toEqual(
      [
        'iops',
        'read_iops',
        'write_iops',
        'read_kBps',
        'write_kBps',
        'wait_queue',
        'active_queue',
        'wait_ms',
        'service_ms',
        'util_pct',
      ].sort(),
    );
  });

  it('summarises the since-boot report when it is the only one', async () => {
    const [run] = await iostatRuns(xnLog(THREE_REPORTS.slice(0, 1)));
    expect(run!.reports).toBe(1);
    const s = seriesOf(run!, 'c1t0d0');
    expect(s.samples!.map((x) => x.sinceBoot)).toEqual([true]);
    expect(s.summary.read_iops).toEqual({ count: 1, mean: 0.9, min: 0.9, max: 0.9, stddev: 0 });
    close(s.summary.iops!.mean, 0.9 + 2.7, 'iops');
  });

  it('with two reports the summary is the second report alone', async () => {
    const [run] = await iostatRuns(xnLog(THREE_REPORTS.slice(0, 2)));
    const s = seriesOf(run!, 'c1t1d0');
    expect(s.summary.write_kBps).toEqual({ count: 1, mean: 96, min: 96, max: 96, stddev: 0 });
  });

  it('a device first seen after report 0 gets all its samples summarised', async () => {
    // -z leaves idle devices out: c1t1d0 appears from report 1 on.
    const reports = THREE_REPORTS.map((r, i) => (i === 0 ? { c1t0d0: r.c1t0d0 } : r));
    const [run] = await iostatRuns(xnLog(reports, 'iostat -xnz 5 3'));
    const s = seriesOf(run!, 'c1t1d0');
    expect(s.samples!.map((x) => [x.report, x.sinceBoot])).toEqual([
      [1, false],
      [2, false],
    ]);
    expect(s.summary.read_iops!.count).toBe(2);
    close(s.summary.read_iops!.mean, (148.8 + 159.0) / 2);
  });
});

describe('streaming', () => {
  // The x4100 sample (4 runs of 5 disks, 1 report each), then a fifth run of 2 disks and 3 reports.
  const log = readFileSync(X4100, 'utf8') + xnLog(THREE_REPORTS, 'tunefs -a 4 /opt');

  async function collect(keepSamples: boolean, withSampleCallback: boolean) {
    const events: string[] = [];
    const runs: IostatRun[] = [];
    const samples: { run: number; device: string; sample: IostatSample }[] = [];
    await parseStream([Buffer.from(log)], {
      source: 'stream.txt',
      keepSamples,
      onRun: (run: Run) => {
        events.push(`run ${run.index}`);
        runs.push(run as IostatRun);
      },
      ...(withSampleCallback
        ? {
            onIostatSample: (run: number, device: string, sample: IostatSample) => {
              events.push(`sample ${run}`);
              samples.push({ run, device, sample });
            },
          }
        : {}),
    });
    return { events, runs, samples };
  }

  it('keepSamples: false yields no samples but the same summaries and counts', async () => {
    const kept = await collect(true, false);
    const lean = await collect(false, false);
    expect(lean.runs).toHaveLength(5);
    expect(lean.runs).toHaveLength(kept.runs.length);
    lean.runs.forEach((run, i) => {
      const full = kept.runs[i]!;
      expect(run.reports).toBe(full.reports);
      expect(run.series.map((s) => s.device)).toEqual(full.series.map((s) => s.device));
      run.series.forEach((s, j) => {
        expect(s.samples).toBeUndefined();
        expect(s.sampleCount).toBe(full.series[j]!.sampleCount);
        expect(s.summary).toEqual(full.series[j]!.summary);
      });
      const { series: _a, ...restLean } = run;
      const { series: _b, ...restFull } = full;
      expect(restLean).toEqual(restFull);
    });
    expect(kept.runs.every((r) => r.series.every((s) => s.samples!.length === s.sampleCount))).toBe(true);
  });

  it('onIostatSample gets every sample, in order, before its run is delivered', async () => {
    const { events, runs, samples } = await collect(true, true);
    const total = runs.reduce((n, r) => n + r.series.reduce((m, s) => m + s.sampleCount, 0), 0);
    expect(samples).toHaveLength(total);
    expect(total).toBe(4 * 5 + 3 * 2);
    // Events: all samples of run k, then run k.
    const expected: string[] = [];
    for (const run of runs) {
      for (let i = 0; i < run.series.reduce((m, s) => m + s.sampleCount, 0); i++) expected.push(`sample ${run.index}`);
      expected.push(`run ${run.index}`);
    }
    expect(events).toEqual(expected);
    // Same objects as the kept samples, per device in report order; file order overall.
    for (const run of runs) {
      for (const s of run.series) {
        const streamed = samples.filter((x) => x.run === run.index && x.device === s.device).map((x) => x.sample);
        expect(streamed).toEqual(s.samples);
      }
    }
    const order = samples.map((x) => [x.run, x.sample.report, x.sample.line]);
    const sorted = [...order].sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!);
    expect(order).toEqual(sorted);
  });

  it('onIostatSample streams samples even with keepSamples: false', async () => {
    const kept = await collect(true, false);
    const { runs, samples } = await collect(false, true);
    expect(runs.every((r) => r.series.every((s) => s.samples === undefined))).toBe(true);
    const last = kept.runs[4]!;
    const streamed = samples.filter((x) => x.run === 4 && x.device === 'c1t0d0').map((x) => x.sample);
    expect(streamed).toEqual(seriesOf(last, 'c1t0d0').samples);
    expect(streamed.map((x) => x.raw['r/s'])).toEqual([0.9, 156.2, 162.4]);
  });
});

describe('damaged tables', () => {
  it('a prose line inside a table is a warning with its line number; the rows around it are kept', async () => {
    const text = [
      'iostat -xn 5 2', // 1
      TITLE, // 2
      XN_HEADER, // 3
      xnRow('c1t0d0', THREE_REPORTS[0]!.c1t0d0), // 4
      '(the terminal wrapped here, sorry)', // 5
      xnRow('c1t1d0', THREE_REPORTS[0]!.c1t1d0), // 6
      TITLE, // 7
      XN_HEADER, // 8
      xnRow('c1t0d0', THREE_REPORTS[1]!.c1t0d0), // 9
      xnRow('c1t1d0', THREE_REPORTS[1]!.c1t1d0), // 10
    ].join('\n');
    const runs = await iostatRuns(text);
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run.reports).toBe(2);
    expect(run.warnings).toHaveLength(1);
    expect(run.warnings[0]!.line).toBe(5);
    expect(run.warnings[0]!.message).toContain('the terminal wrapped here');
    expect(seriesOf(run, 'c1t0d0').samples!.map((s) => s.line)).toEqual([4, 9]);
    expect(seriesOf(run, 'c1t1d0').samples!.map((s) => s.line)).toEqual([6, 10]);
    expect(seriesOf(run, 'c1t1d0').samples![0]!.raw['r/s']).toBe(0.8);
    // Prose inside a table is not context.
    expect(run.context).toEqual(['iostat -xn 5 2']);
  });

  it('a ragged row is skipped with a warning naming its line', async () => {
    const short = xnRow('c1t1d0', THREE_REPORTS[1]!.c1t1d0).replace(/^(\s*\S+)\s+\S+/, '$1'); // w/s lost
    const text = [
      'iostat -xn 5 2', // 1
      TITLE, // 2
      XN_HEADER, // 3
      xnRow('c1t0d0', THREE_REPORTS[0]!.c1t0d0), // 4
      xnRow('c1t1d0', THREE_REPORTS[0]!.c1t1d0), // 5
      TITLE, // 6
      XN_HEADER, // 7
      xnRow('c1t0d0', THREE_REPORTS[1]!.c1t0d0), // 8
      short, // 9
    ].join('\n');
    expect(short.trim().split(/\s+/)).toHaveLength(10);
    const [run] = await iostatRuns(text);
    expect(run!.warnings).toHaveLength(1);
    expect(run!.warnings[0]!.line).toBe(9);
    expect(run!.warnings[0]!.message).toMatch(/ragged row skipped/);
    expect(run!.warnings[0]!.message).toContain('line 7');
    expect(run!.reports).toBe(2);
    expect(seriesOf(run!, 'c1t0d0').sampleCount).toBe(2);
    expect(seriesOf(run!, 'c1t1d0').samples!.map((s) => s.report)).toEqual([0]);
    // The one good interval sample of c1t1d0 is gone, so its summary falls back to nothing.
    expect(seriesOf(run!, 'c1t1d0').summary.read_iops).toBeUndefined();
  });

  it('a row with one value too many is skipped too', async () => {
    const long = xnRow('c1t0d0', [...THREE_REPORTS[0]!.c1t0d0, 5]);
    const [run] = await iostatRuns([TITLE, XN_HEADER, long, xnRow('c1t1d0', THREE_REPORTS[0]!.c1t1d0)].join('\n'));
    expect(run!.series.map((s) => s.device)).toEqual(['c1t1d0']);
    expect(run!.warnings.map((w) => w.line)).toEqual([3]);
  });

  it('a header with no rows at all is a ParseError at the header line', async () => {
    const error = await parseFails(['$ iostat -xn 5 2', TITLE, XN_HEADER, '', '^C'].join('\n'));
    expect(error.line).toBe(3);
    expect(error.problem).toMatch(/header with no device rows/);
  });

  it('the header-without-rows fixture is a ParseError at its header line', async () => {
    await expect(parseFile(join(FIXTURES, 'bad/iostat-header-without-rows.txt'))).rejects.toMatchObject({
      name: 'ParseError',
      line: 3,
    });
  });

  it('a Linux header with no rows is a ParseError at the last header line', async () => {
    const text = [
      'Linux 5.15.0 (db1) \t01/15/2024 \t_x86_64_\t(4 CPU)',
      '',
      'Device            r/s     w/s     rkB/s     wkB/s  %util',
      '',
      'Device            r/s     w/s     rkB/s     wkB/s  %util',
      '',
    ].join('\n');
    const error = await parseFails(text);
    expect(error.line).toBe(5);
  });

  it('rows without any header are a ParseError at the first row', async () => {
    const error = await parseFails(
      [TITLE, xnRow('c1t0d0', THREE_REPORTS[0]!.c1t0d0), xnRow('c1t1d0', THREE_REPORTS[0]!.c1t1d0)].join('\n'),
    );
    expect(error.line).toBe(2);
    expect(error.problem).toMatch(/no iostat header/);
    await expect(parseFile(join(FIXTURES, 'bad/iostat-rows-without-header.txt'))).rejects.toMatchObject({
      name: 'ParseError',
      line: 3,
    });
  });

  it('rows without a header and without a title name no format, but the error points at the first row', async () => {
    const error = await parseFails(
      [xnRow('c1t0d0', THREE_REPORTS[0]!.c1t0d0), xnRow('c1t1d0', THREE_REPORTS[0]!.c1t1d0)].join('\n'),
    );
    expect(error.line).toBe(1);
    expect(error.problem).toBe('rows of numbers from line 1 on, but no diskperf or iostat header above them');
  });

  it('values that ran into each other are split, with a warning', async () => {
    const text = [
      'iostat -xn 5 2', // 1
      TITLE, // 2
      XN_HEADER, // 3
      '   96.5  964.5 12345.6123456.7  0.0 31.8    0.0   31.6   0 100 c3t0d0', // 4
      '    0.0   88.0    0.0 11264.0  0.0  0.4    0.0    4.5   0  27 c3t1d0', // 5
    ].join('\n');
    const [run] = await iostatRuns(text);
    const s = seriesOf(run!, 'c3t0d0').samples![0]!;
    expect(s.raw).toEqual({
      'r/s': 96.5,
      'w/s': 964.5,
      'kr/s': 12345.6,
      'kw/s': 123456.7,
      wait: 0,
      actv: 31.8,
      wsvc_t: 0,
      asvc_t: 31.6,
      '%w': 0,
      '%b': 100,
    });
    close(s.values.write_kBps, 123456.7);
    expect(run!.warnings).toHaveLength(1);
    expect(run!.warnings[0]!.line).toBe(4);
    expect(run!.warnings[0]!.message).toMatch(/ran into each other/);
    expect(run!.warnings[0]!.message).toContain('12345.6 123456.7');
    expect(seriesOf(run!, 'c3t1d0').samples![0]!.raw['kw/s']).toBe(11264);
  });

  it('values of a two-decimal Linux table that ran into each other are split after two decimals', async () => {
    const text = [
      'Device            r/s     w/s     rkB/s     wkB/s  %util',
      'sda              1.50    3.0012345.67     48.00   0.60',
    ].join('\n');
    const [run] = await iostatRuns(text);
    expect(seriesOf(run!, 'sda').samples![0]!.raw).toEqual({
      'r/s': 1.5,
      'w/s': 3,
      'rkB/s': 12345.67,
      'wkB/s': 48,
      '%util': 0.6,
    });
    expect(run!.warnings).toHaveLength(1);
  });
});

describe('values and rows that cannot be measurements', () => {
  const withRow = (line: string) =>
    xnLog([THREE_REPORTS[0]!, THREE_REPORTS[1]!]).replace(xnRow('c1t1d0', THREE_REPORTS[1]!.c1t1d0), line);
  // Line 1 the command, 2-3 title and header, 4-5 the rows of report 0, 6-7 title and header, 8-9 report 1.

  it.each([
    [
      'negative',
      xnRow('c1t1d0', [148.8, -12.0, 1190.4, 96.0, 0.0, 1.3, 0.0, 8.1, 0, 85]),
      'row skipped: w/s is -12, and iostat values cannot be negative',
    ],
    [
      '1e308',
      xnRow('c1t1d0', [148.8, 12.0, 1190.4, 96.0, 0.0, 1.3, 0.0, 8.1, 0, 85]).replace('1190.4', '1e308'),
      'row skipped: kr/s is 1e+308, more than any disk does (values stay under 1000000000000000)',
    ],
    [
      'nan',
      xnRow('c1t1d0', [148.8, 12.0, 1190.4, 96.0, 0.0, 1.3, 0.0, 8.1, 0, 85]).replace(' 8.1 ', ' nan '),
      'row skipped: asvc_t is "nan", not a number',
    ],
    [
      '-nan',
      xnRow('c1t1d0', [148.8, 12.0, 1190.4, 96.0, 0.0, 1.3, 0.0, 8.1, 0, 85]).replace(' 8.1 ', ' -nan '),
      'row skipped: asvc_t is "-nan", not a number',
    ],
    [
      'long device name',
      xnRow(`c1t${'7'.repeat(200)}d0`, THREE_REPORTS[1]!.c1t1d0),
      `device name of 205 bytes, longer than 128 ("c1t${'7'.repeat(37)}..."); row skipped`,
    ],
    [
      'control characters',
      xnRow('c1t1d0\u001b[2J', THREE_REPORTS[1]!.c1t1d0),
      'device name "c1t1d0\\x1b[2J" has control characters; row skipped',
    ],
  ])('a row with a %s value is skipped with a warning on its line; the others count', async (_, line, message) => {
    const [run] = await iostatRuns(withRow(line));
    expect(run!.warnings).toEqual([{ line: 9, message }]);
    expect(seriesOf(run!, 'c1t1d0').sampleCount).toBe(1);
    expect(seriesOf(run!, 'c1t0d0').sampleCount).toBe(2);
    close(seriesOf(run!, 'c1t0d0').summary.read_iops?.mean, 156.2, 'c1t0d0 r/s');
  });

  it('when every row is skipped, the ParseError is at the first one and says why', async () => {
    const negative = xnLog([
      { c1t0d0: [-0.9, ...THREE_REPORTS[0]!.c1t0d0.slice(1)], c1t1d0: [-0.8, ...THREE_REPORTS[0]!.c1t1d0.slice(1)] },
    ]);
    const error = await parseFails(negative);
    expect(error).toMatchObject({
      line: 4,
      problem: 'no device row fits the iostat header: row skipped: r/s is -0.9, and iostat values cannot be negative',
    });
    const short = xnLog([THREE_REPORTS[0]!]).replace(/ {2}1 c1t/g, ' c1t');
    expect(await parseFails(short)).toMatchObject({
      line: 4,
      problem: expect.stringMatching(
        /^no device row fits the iostat header: ragged row skipped: 10 fields where the header at line 3 has 10 columns/,
      ),
    });
  });

  it('the same header line twice in a row is one report, not an empty one that would hide the since-boot report', async () => {
    const text = xnLog(THREE_REPORTS).replace(`${XN_HEADER}\n`, `${XN_HEADER}\n${XN_HEADER}\n`);
    const [run] = await iostatRuns(text);
    const [plain] = await iostatRuns(xnLog(THREE_REPORTS));
    expect(run!.warnings).toEqual([{ line: 4, message: 'the header of line 3 repeated; the repeat is ignored' }]);
    expect(run!.reports).toBe(3);
    expect(seriesOf(run!, 'c1t0d0').summary).toEqual(seriesOf(plain!, 'c1t0d0').summary);
    expect(seriesOf(run!, 'c1t0d0').samples!.map((x) => x.sinceBoot)).toEqual([true, false, false]);
  });

  it('a column printed twice in a header keeps its second values apart and counts the first once', async () => {
    const text = xnLog([THREE_REPORTS[0]!, THREE_REPORTS[1]!])
      .replace(/%b device/g, '%b  %b device')
      .replace(/( +\d+) (c1t\dd0)$/gm, '$1$1 $2');
    const [run] = await iostatRuns(text);
    expect(run!.warnings).toEqual([
      {
        line: 3,
        message:
          'column "%b" printed twice in the header; its second values are kept as "%b (2)" and used for no metric',
      },
    ]);
    expect(run!.columns.map((c) => c.name)).toContain('%b (2)');
    expect(seriesOf(run!, 'c1t0d0').summary.util_pct).toMatchObject({ count: 1, mean: 88 });
    expect(seriesOf(run!, 'c1t0d0').samples![1]!.raw).toMatchObject({ '%b': 88, '%b (2)': 88 });
  });

  it('a report time that is no date is a warning; the report stays, without a time', async () => {
    const text = [
      'Linux 5.15.0 (db1) \t01/15/2024 \t_x86_64_\t(4 CPU)',
      '',
      '02/30/2024 10:00:01 AM',
      'Device   r/s   w/s  %util',
      'sda     1.00  2.00  0.50',
      '',
      '01/15/2024 10:00:11 AM',
      'Device   r/s   w/s  %util',
      'sda     3.00  4.00  0.70',
      '',
    ].join('\n');
    const [run] = await iostatRuns(text);
    expect(run!.warnings).toEqual([
      {
        line: 3,
        message:
          'timestamp "02/30/2024 10:00:01 AM" is not a valid date (no February 30); the report is kept without a time',
      },
    ]);
    expect(run!.reports).toBe(2);
    expect(seriesOf(run!, 'sda').samples!.map((x) => x.time)).toEqual([undefined, '2024-01-15T10:00:11']);
  });

  it(`a session of more than ${MAX_SERIES_PER_RUN} devices is refused at the row of the first device too many`, async () => {
    const devices = Object.fromEntries(
      Array.from({ length: MAX_SERIES_PER_RUN + 1 }, (_, i) => [`c${i}t0d0`, THREE_REPORTS[1]!.c1t0d0]),
    );
    const error = await parseFails(xnLog([devices]));
    expect(error.line).toBe(3 + MAX_SERIES_PER_RUN + 1);
    expect(error.problem).toBe(
      `more than ${MAX_SERIES_PER_RUN} devices in one iostat session (device "c${MAX_SERIES_PER_RUN}t0d0" is one more)`,
    );
    const atLimit = Object.fromEntries(Object.entries(devices).slice(0, MAX_SERIES_PER_RUN));
    expect((await iostatRuns(xnLog([atLimit])))[0]!.series).toHaveLength(MAX_SERIES_PER_RUN);
  });
});

describe('Linux --pretty', () => {
  const pretty = readFileSync(join(FIXTURES, 'linux/linux-sysstat-12.5.2-x-pretty.txt'), 'utf8');

  it('merges the groups into one sample per device per report', async () => {
    const [run] = await iostatRuns(pretty);
    expect(run!.reports).toBe(3);
    expect(run!.dialect).toMatch(/pretty/);
    for (const device of ['sda', 'sdb']) {
      const s = seriesOf(run!, device);
      expect(s.sampleCount).toBe(3);
      expect(s.samples!.map((x) => x.report)).toEqual([0, 1, 2]);
      for (const sample of s.samples!) {
        expect(Object.keys(sample.raw)).toHaveLength(22);
        for (const key of ['r/s', 'w/s', 'd/s', 'f/s', 'aqu-sz', '%util']) expect(sample.raw).toHaveProperty([key]);
        close(sample.values.iops, sample.raw['r/s']! + sample.raw['w/s']!, `${device} iops`);
      }
    }
    // Report 1 of sdb, from four different tables.
    const r1 = seriesOf(run!, 'sdb').samples![1]!;
    expect([r1.raw['r/s'], r1.raw['w/s'], r1.raw['d/s'], r1.raw['%util']]).toEqual([1875.4, 812.6, 0, 64.2]);
    // Each sample's line is its first row (in the read table).
    expect(r1.line).toBe(pretty.split('\n').findIndex((l) => l.includes('1875.40')) + 1);
  });

  it('merges groups even when one report leaves a device out of a group', async () => {
    const text = [
      '     r/s     rkB/s Device',
      '    1.00     16.00 sda',
      '    2.00     32.00 sdb',
      '',
      '     w/s     wkB/s  %util Device',
      '    3.00     48.00   0.50 sda',
      '',
      '     r/s     rkB/s Device',
      '    4.00     64.00 sda',
      '',
      '     w/s     wkB/s  %util Device',
      '    5.00     80.00   0.70 sda',
      '    6.00     96.00   0.90 sdb',
    ].join('\n');
    const [run] = await iostatRuns(text);
    expect(run!.reports).toBe(2);
    expect(seriesOf(run!, 'sda').samples!.map((s) => s.raw)).toEqual([
      { 'r/s': 1, 'rkB/s': 16, 'w/s': 3, 'wkB/s': 48, '%util': 0.5 },
      { 'r/s': 4, 'rkB/s': 64, 'w/s': 5, 'wkB/s': 80, '%util': 0.7 },
    ]);
    expect(seriesOf(run!, 'sdb').samples!.map((s) => s.raw)).toEqual([
      { 'r/s': 2, 'rkB/s': 32 },
      { 'w/s': 6, 'wkB/s': 96, '%util': 0.9 },
    ]);
  });
});

describe('several invocations in one file', () => {
  const linuxReport = (device: string, r: number) => [
    '',
    'avg-cpu:  %user   %nice %system %iowait  %steal   %idle',
    '           3.49    0.01    1.09    0.38    0.00   95.03',
    '',
    'Device            r/s     rkB/s     w/s     wkB/s  aqu-sz  %util',
    `${device.padEnd(12)} ${r.toFixed(2).padStart(8)}    126.53   15.83    554.43    0.02   1.07`,
    '',
  ];

  it('two banners make two runs, each named after its host', async () => {
    const text = [
      'Linux 5.4.0-169-generic (web01) \t01/15/2024 \t_x86_64_\t(4 CPU)',
      ...linuxReport('nvme0n1', 7.24),
      ...linuxReport('nvme0n1', 74),
      'Linux 6.1.0-18-amd64 (web02) \t01/16/2024 \t_x86_64_\t(8 CPU)',
      ...linuxReport('sda', 8.52),
      ...linuxReport('sda', 9.5),
      ...linuxReport('sda', 10.5),
    ].join('\n');
    const runs = await iostatRuns(text);
    expect(runs).toHaveLength(2);
    expect(runs.map((r) => r.name)).toEqual(['web01', 'web02']);
    expect(runs.map((r) => r.index)).toEqual([0, 1]);
    expect(runs[0]!.meta).toMatchObject({ host: 'web01', kernel: '5.4.0-169-generic', os: 'Linux', cpus: 4 });
    expect(runs[1]!.meta).toMatchObject({ host: 'web02', kernel: '6.1.0-18-amd64', cpus: 8 });
    expect(runs.map((r) => r.reports)).toEqual([2, 3]);
    expect(runs[0]!.startLine).toBe(1);
    expect(runs[1]!.startLine).toBe(1 + 2 * 7 + 1);
    expect(runs[0]!.endLine).toBeLessThan(runs[1]!.startLine);
    // The second run starts over with its own since-boot report.
    expect(seriesOf(runs[1]!, 'sda').samples!.map((s) => [s.report, s.sinceBoot, s.raw['r/s']])).toEqual([
      [0, true, 8.52],
      [1, false, 9.5],
      [2, false, 10.5],
    ]);
    expect(seriesOf(runs[1]!, 'sda').summary.read_iops!.mean).toBe(10);
    expect(runs[0]!.series.map((s) => s.device)).toEqual(['nvme0n1']);
    // avg-cpu values are never device rows.
    expect(runs.every((r) => r.warnings.length === 0)).toBe(true);
  });

  it('context before a run keeps commands only, and the iostat command lands in meta.command', async () => {
    const text = [
      'Here is what I ran on the box yesterday, after the firmware update.', // prose
      'root@fs1:~# tunefs -a 16 /opt',
      'It took a while.',
      'dd if=/dev/zero of=/opt/big bs=1024k count=4096 &',
      '$ iostat -xn 5 2',
      TITLE,
      XN_HEADER,
      xnRow('c1t0d0', THREE_REPORTS[0]!.c1t0d0),
      '',
      'Then with a smaller maxcontig, which was much slower than I expected:',
      '# tunefs -a 1 /opt',
      'sync',
      TITLE,
      XN_HEADER,
      xnRow('c1t0d0', THREE_REPORTS[1]!.c1t0d0),
    ].join('\n');
    const runs = await iostatRuns(text);
    expect(runs).toHaveLength(2);
    expect(runs[0]!.context).toEqual([
      'tunefs -a 16 /opt',
      'dd if=/dev/zero of=/opt/big bs=1024k count=4096 &',
      'iostat -xn 5 2',
    ]);
    expect(runs[0]!.meta.command).toBe('iostat -xn 5 2');
    expect(runs[1]!.context).toEqual(['tunefs -a 1 /opt', 'sync']);
    expect(runs[1]!.meta.command).toBeUndefined();
    expect(runs.map((r) => r.warnings.length)).toEqual([0, 0]);
  });

  it('the last iostat command before a run wins in meta.command', async () => {
    const text = ['iostat -xn 1', 'iostat -xnz 5 2', TITLE, XN_HEADER, xnRow('c1t0d0', THREE_REPORTS[0]!.c1t0d0)].join(
      '\n',
    );
    const [run] = await iostatRuns(text);
    expect(run!.meta.command).toBe('iostat -xnz 5 2');
    expect(run!.context).toEqual(['iostat -xn 1', 'iostat -xnz 5 2']);
  });
});

describe('the x4100 sample (solaris-10-x4100-sas-maxcontig)', () => {
  it('has four runs, one per tunefs setting', async () => {
    const runs = (await parseFile(X4100)).runs as IostatRun[];
    expect(runs).toHaveLength(4);
    expect(runs.map((r) => r.context.at(-1))).toEqual([
      'iostat -xnz 5 2',
      'tunefs -a 16 /opt',
      'tunefs -a 8 /opt',
      'tunefs -a 1 /opt',
    ]);
    expect(runs.every((r) => r.platform === 'solaris' && r.dialect === 'solaris-xn' && r.reports === 1)).toBe(true);
    expect(runs.map((r) => r.series.map((s) => s.device))).toEqual(
      Array(4).fill(['d10', 'd11', 'd12', 'c0t0d0', 'c0t1d0']),
    );
  });

  it('c0t0d0 writes 84.9 -> 430.7 -> 838.1 -> 6028.7 per second across the runs', async () => {
    const runs = (await parseFile(X4100)).runs as IostatRun[];
    expect(runs.map((r) => seriesOf(r, 'c0t0d0').samples![0]!.raw['w/s'])).toEqual([84.9, 430.7, 838.1, 6028.7]);
    expect(runs.map((r) => seriesOf(r, 'c0t0d0').summary.write_iops!.mean)).toEqual([84.9, 430.7, 838.1, 6028.7]);
  });

  it('kw/s peaks in the `tunefs -a 16` run', async () => {
    const runs = (await parseFile(X4100)).runs as IostatRun[];
    const kw = runs.map((r) => seriesOf(r, 'c0t0d0').samples![0]!.values.write_kBps!);
    expect(kw).toEqual([19096.7, 53327.2, 52869.4, 48244.4]);
    const peak = kw.indexOf(Math.max(...kw));
    expect(runs[peak]!.context).toEqual(['tunefs -a 16 /opt']);
  });

  it('runs cover the file in order, without overlapping', async () => {
    const parsed = await parseFile(X4100);
    const runs = parsed.runs;
    for (let i = 0; i < runs.length; i++) {
      expect(runs[i]!.startLine).toBeLessThanOrEqual(runs[i]!.endLine);
      if (i > 0) expect(runs[i]!.startLine).toBeGreaterThan(runs[i - 1]!.endLine);
    }
    expect(runs.at(-1)!.endLine).toBeLessThanOrEqual(parsed.lines);
  });
});
