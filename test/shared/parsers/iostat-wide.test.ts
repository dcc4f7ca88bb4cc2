/**
 * The wide iostat reports (shared/parsers/iostat-wide.ts) through the full driver, on
 * what the fixtures leave out: detection against prose, the platform told from the
 * columns, totals and -o layouts, header reprints and commands between runs, report
 * lines that do not fit, and the errors of a header that cannot be read.
 */
import { describe, expect, it } from 'vitest';
import type { IostatRun, Run } from '../../../shared/model.ts';
import { ParseError, parseFile, parseStream } from '../../../shared/parsers/index.ts';
import { diskNames, isWideLine } from '../../../shared/parsers/iostat-wide.ts';
import { FIXTURES_DIR } from '../../support/fixtures.ts';
import { parseFails, seriesOf } from '../../support/parsed.ts';

/** Every run of a log given as bytes, through the streaming driver. */
async function runsOf(text: string): Promise<IostatRun[]> {
  const runs: Run[] = [];
  const result = await parseStream([Buffer.from(text, 'utf8')], { source: 'test.txt', onRun: (r) => runs.push(r) });
  expect(result.dialect).toBe('iostat-wide');
  for (const run of runs) expect(run.format).toBe('iostat');
  return runs as IostatRun[];
}

const MAC_NAMES = '          disk0           disk2       cpu     load average';
const MAC_COLUMNS = '    KB/t tps  MB/s     KB/t tps  MB/s  us sy id   1m   5m   15m';

describe('detection', () => {
  it('takes the column lines of every platform', () => {
    expect(isWideLine(MAC_COLUMNS.trim())).toBe(true);
    expect(isWideLine('tin tout  KB/t  t/s    MB/s   KB/t  t/s    MB/s  us ni sy sp in id')).toBe(true);
    expect(isWideLine('tin  tout   t/s  KB/t  MB/s   us ni sy in  id')).toBe(true);
    expect(isWideLine('KB/t xfrs   MB     KB/t xfrs   MB')).toBe(true);
    expect(isWideLine('sps tps msps  sps tps msps  us sy id')).toBe(true);
    expect(isWideLine('tin tout      KB  xfr time       KB  xfr time  us ni sy sp in id')).toBe(true);
  });

  it('does not fire on prose, the disk-name line or a report line', () => {
    expect(isWideLine('KB/t tps MB/s are printed for every disk')).toBe(false);
    expect(isWideLine('tin tout us sy id')).toBe(false);
    expect(isWideLine('us sy id 1m 5m 15m')).toBe(false);
    expect(isWideLine('KB/t tps')).toBe(false);
    expect(isWideLine(MAC_NAMES.trim())).toBe(false);
    expect(isWideLine('24.51  18  0.43    12.03   1  0.01   5  3 92  1.82 1.95 2.01')).toBe(false);
  });

  it('reads disk names without block titles or NetBSD markers', () => {
    expect(diskNames(MAC_NAMES)).toEqual(['disk0', 'disk2']);
    expect(diskNames('      tty |____ wd0 ____| |____ wd1 ____|       CPU')).toEqual(['wd0', 'wd1']);
  });

  it('leaves a file of prose to the error of no data', async () => {
    const error = await parseFile(`${FIXTURES_DIR}/bad/prose-only.txt`, { source: 'p' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ParseError);
  });
});

describe('platforms and dialects', () => {
  it('reads macOS: tps is iops, the first report is since boot and left out of the summary', async () => {
    const [run] = await runsOf(
      `${MAC_NAMES}\n${MAC_COLUMNS}\n` +
        '   24.51  18  0.43    12.03   1  0.01   5  3 92  1.82 1.95 2.01\n' +
        '   16.00 212  3.31     0.00   0  0.00  12  6 82  1.82 1.95 2.01\n' +
        '   31.27  98  2.96     4.00   2  0.01   9  4 87  1.76 1.93 2.00\n',
    );
    expect(run!.platform).toBe('macos');
    expect(run!.dialect).toBe('macos');
    expect(run!.reports).toBe(3);
    const disk0 = seriesOf(run!, 'disk0');
    expect(disk0.samples!.map((s) => s.sinceBoot)).toEqual([true, false, false]);
    expect(disk0.samples![1]!.raw).toEqual({ 'KB/t': 16, tps: 212, 'MB/s': 3.31 });
    expect(disk0.samples![1]!.values).toEqual({ iops: 212 });
    expect(disk0.summary.iops).toMatchObject({ count: 2, mean: 155 });
    expect(run!.columns.find((c) => c.name === 'MB/s')).toEqual({ name: 'MB/s', unit: 'MB/s', factor: 1 });
  });

  it('reads macOS -I totals as raw columns with no metric', async () => {
    const [run] = await runsOf(
      '          disk0       cpu     load average\n    KB/t xfrs   MB  us sy id   1m   5m   15m\n' +
        '   22.10 20417 440.62   6  3 91  1.52 1.60 1.71\n   22.09 20431 440.81   4  2 94  1.52 1.60 1.71\n',
    );
    expect(run!.dialect).toBe('macos-I');
    const disk0 = seriesOf(run!, 'disk0');
    expect(disk0.samples![1]!.raw).toEqual({ 'KB/t': 22.09, xfrs: 20431, MB: 440.81 });
    expect(disk0.samples![1]!.values).toEqual({});
  });

  it('reads macOS -o: sectors/s and ms per transfer raw, tps as iops', async () => {
    const [run] = await runsOf('          disk0\n sps tps msps\n 212  18  0.4\n 880  55  0.3\n');
    expect(run!.dialect).toBe('macos-o');
    expect(seriesOf(run!, 'disk0').samples![1]!.values).toEqual({ iops: 55 });
  });

  it('tells FreeBSD by its tty columns and `us ni sy in id`', async () => {
    const [run] = await runsOf(
      '       tty            ada0             cd0             cpu\n' +
        ' tin  tout  KB/t  tps  MB/s   KB/t  tps  MB/s  us ni sy in id\n' +
        '   0     4  31.5   12  0.37   0.00    0  0.00   1  0  1  0 98\n',
    );
    expect(run!.platform).toBe('freebsd');
    expect(run!.dialect).toBe('freebsd');
    expect(seriesOf(run!, 'ada0').samples![0]!.values).toEqual({ iops: 12 });
  });

  it('tells NetBSD by its column order, or by `CPU` above the older one', async () => {
    const [ten] = await runsOf(
      '      tty |____ wd0 ____|          CPU\n tin tout   t/s  KB/t  MB/s  us ni sy in  id\n' +
        '   0   12    40  16.0 0.625   3  0  2  0  95\n',
    );
    expect(ten!.platform).toBe('netbsd');
    expect(seriesOf(ten!, 'wd0').samples![0]!.raw).toEqual({ 't/s': 40, 'KB/t': 16, 'MB/s': 0.625 });
    const [old] = await runsOf(
      '      tty              wd0            CPU\n tin  tout  KB/t  t/s  MB/s  us ni sy in id\n' +
        '   0    12 16.00   40  0.62   3  0  2  0 95\n',
    );
    expect(old!.platform).toBe('netbsd');
  });

  it('keeps the groups of OpenBSD -d -D apart per disk, one series each', async () => {
    const [run] = await runsOf(
      '          sd0          sd1          sd0          sd1\n' +
        '  KB/t  t/s    MB/s   KB/t  t/s    MB/s      KB  xfr time       KB  xfr time\n' +
        ' 16.00  184    2.88   0.00    0    0.00    2944  184 0.41        0    0 0.00\n',
    );
    expect(run!.dialect).toBe('openbsd-D');
    const sd0 = seriesOf(run!, 'sd0').samples![0]!;
    expect(sd0.raw).toEqual({ 'KB/t': 16, 't/s': 184, 'MB/s': 2.88, KB: 2944, xfr: 184, time: 0.41 });
    expect(sd0.values.iops).toBe(184);
    expect(sd0.values.util_pct).toBeCloseTo(41, 9);
  });
});

describe('sessions', () => {
  it('keeps a reprinted header in its run; a command before a header starts another', async () => {
    const block = `${MAC_NAMES}\n${MAC_COLUMNS}\n   24.51  18  0.43    12.03   1  0.01   5  3 92  1.82 1.95 2.01\n`;
    const runs = await runsOf(`$ iostat -w 1\n${block}${block}$ iostat -w 5\n${block}`);
    expect(runs.map((r) => r.reports)).toEqual([2, 1]);
    expect(runs.map((r) => r.context)).toEqual([['iostat -w 1'], ['iostat -w 5']]);
    expect(runs[1]!.meta.command).toBe('iostat -w 5');
  });

  it('reads cpu values that ran together, and skips lines with more values than columns', async () => {
    const [run] = await runsOf(
      `${MAC_NAMES}\n${MAC_COLUMNS}\n` +
        '   24.51  18  0.43    12.03   1  0.01  0  0100  1.82 1.95 2.01\n' +
        '   24.51  18  0.43    12.03   1  0.01   5  3 92  1.82 1.95 2.01 7\n' +
        '   16.00 212  3.31     0.00   0  0.00  12  6 82  1.82 1.95 2.01\n',
    );
    expect(run!.reports).toBe(2);
    expect(run!.warnings).toHaveLength(1);
    expect(run!.warnings[0]).toMatchObject({ line: 4 });
    expect(run!.warnings[0]!.message).toContain('13 values where the header of line 2 has 12 columns');
  });

  it('skips a report value that is not a number, with a warning', async () => {
    const [run] = await runsOf(
      `${MAC_NAMES}\n${MAC_COLUMNS}\n` +
        '   24.51  nan  0.43    12.03   1  0.01   5  3 92  1.82 1.95 2.01\n' +
        '   16.00 212  3.31     0.00   0  0.00  12  6 82  1.82 1.95 2.01\n',
    );
    expect(seriesOf(run!, 'disk0').sampleCount).toBe(1);
    expect(seriesOf(run!, 'disk2').sampleCount).toBe(2);
    expect(run!.warnings.length).toBeGreaterThan(0);
  });
});

describe('errors', () => {
  it('names a column line with no disk names above it', async () => {
    const error = await parseFails(
      `prose first\n\n${MAC_COLUMNS}\n   24.51  18  0.43    12.03   1  0.01   5  3 92  1 1 1\n`,
    );
    expect(error.line).toBe(3);
    expect(error.problem).toContain('for 2 disks under a line naming 0');
  });

  it('names a header with no report lines under it', async () => {
    const error = await parseFails(`${MAC_NAMES}\n${MAC_COLUMNS}\n`);
    expect(error.line).toBe(2);
    expect(error.problem).toContain('no report lines');
  });
});
