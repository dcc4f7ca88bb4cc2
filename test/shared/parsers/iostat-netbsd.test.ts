/**
 * NetBSD `iostat -x` headers (shared/parsers/iostat-netbsd.ts): the group words read and
 * write naming the columns under them, the three layouts (-x, -x -I, -y) and their
 * metrics, headers of other platforms left alone, and rows through the full driver.
 */
import { describe, expect, it } from 'vitest';
import type { IostatRun, Run } from '../../../shared/model.ts';
import { parseStream } from '../../../shared/parsers/index.ts';
import { groupedNames } from '../../../shared/parsers/iostat-netbsd.ts';
import { headerLayout } from '../../../shared/parsers/iostat-sessions.ts';

const X = 'device  read KB/t    r/s   time     MB/s write KB/t    w/s   time     MB/s';
const XI = 'device  read KB/t    xfr   time     MB   write KB/t    xfr   time     MB';
const Y = 'device  read KB/t    r/s     MB/s write KB/t    w/s     MB/s   wait   actv  wsvc_t  asvc_t  wtime   time';

const tokens = (line: string) => line.trim().split(/\s+/);

async function runsOf(text: string): Promise<IostatRun[]> {
  const runs: Run[] = [];
  const result = await parseStream([Buffer.from(text, 'utf8')], { source: 'test.txt', onRun: (r) => runs.push(r) });
  expect(result.dialect).toBe('iostat');
  return runs as IostatRun[];
}

describe('headers', () => {
  it('names each column after the group word above it, the group words being no columns', () => {
    expect(groupedNames(tokens(X).slice(1))).toEqual([
      'read KB/t',
      'read r/s',
      'read time',
      'read MB/s',
      'write KB/t',
      'write w/s',
      'write time',
      'write MB/s',
    ]);
    // -y: the write group ends at `wait`; the last `time` is the drive's, under no group.
    expect(groupedNames(tokens(Y).slice(1)).slice(5)).toEqual([
      'write MB/s',
      'wait',
      'actv',
      'wsvc_t',
      'asvc_t',
      'wtime',
      'time',
    ]);
  });

  it('reads -x with its metrics and factors', () => {
    const layout = headerLayout(tokens(X))!;
    expect(layout).toMatchObject({ platform: 'netbsd', dialect: 'netbsd-x', deviceAt: 'first', optionalTail: 0 });
    const byName = Object.fromEntries(layout.columns.map((c) => [c.name, c]));
    expect(byName['read r/s']).toMatchObject({ metric: 'read_iops', factor: 1 });
    expect(byName['write w/s']).toMatchObject({ metric: 'write_iops', factor: 1 });
    expect(byName['read MB/s']).toMatchObject({ metric: 'read_kBps', factor: 1024 });
    expect(byName['write MB/s']).toMatchObject({ metric: 'write_kBps', factor: 1024 });
    expect(byName['read time']).toMatchObject({ metric: 'util_pct', factor: 100 });
    expect(byName['write time']!.metric).toBeUndefined();
    expect(byName['read KB/t']!.metric).toBeUndefined();
  });

  it('reads -x -I totals with no metric, and -y with its queues and times', () => {
    const totals = headerLayout(tokens(XI))!;
    expect(totals.dialect).toBe('netbsd-xI');
    expect(totals.columns.every((c) => c.metric === undefined)).toBe(true);
    const y = headerLayout(tokens(Y))!;
    expect(y.dialect).toBe('netbsd-y');
    const metrics = Object.fromEntries(y.columns.map((c) => [c.name, c.metric]));
    expect(metrics).toMatchObject({
      wait: 'wait_queue',
      actv: 'active_queue',
      wsvc_t: 'wait_ms',
      asvc_t: 'service_ms',
      time: 'util_pct',
    });
    expect(metrics['wtime']).toBeUndefined();
  });

  it('leaves headers that are not NetBSD -x to the other platforms or to none', () => {
    expect(headerLayout(tokens('device r/s w/s kr/s kw/s wait svc_t %b'))!.platform).toBe('freebsd');
    expect(headerLayout(tokens(`${X} frob`))).toBeUndefined();
    expect(headerLayout(tokens('device read KB/t r/s time MB/s'))).toBeUndefined();
    expect(headerLayout(tokens('device read KB/t r/s read KB/t write KB/t w/s'))).toBeUndefined();
  });
});

describe('rows', () => {
  it('reads -y rows: queue lengths, waits in ms and busy time as %', async () => {
    const [run] = await runsOf(
      `${Y}\n` +
        'wd0         16.00     40     0.62     32.00    100     3.12    0.4    1.2    2.86    8.57   0.21   0.64\n' +
        `${Y}\n` +
        'wd0         16.00     50     0.78     32.00     90     2.81    0.2    0.9    1.43    6.43   0.12   0.55\n',
    );
    expect(run).toMatchObject({ platform: 'netbsd', dialect: 'netbsd-y', reports: 2 });
    const wd0 = run!.series[0]!;
    const values = wd0.samples![1]!.values;
    expect(values).toMatchObject({ read_iops: 50, write_iops: 90, iops: 140, wait_queue: 0.2, active_queue: 0.9 });
    expect(values.wait_ms).toBe(1.43);
    expect(values.service_ms).toBe(6.43);
    expect(values.util_pct).toBeCloseTo(55, 9);
    expect(values.read_kBps).toBeCloseTo(0.78 * 1024, 9);
    // The first report averages since boot: the summary is of the second alone.
    expect(wd0.summary.util_pct).toMatchObject({ count: 1 });
  });

  it('counts a disk printed again under one header as the next report', async () => {
    const [run] = await runsOf(
      `${X}\n` +
        'wd0         16.22      3   0.04     0.05      21.87     12   0.04     0.26\n' +
        'wd1         62.40      1   0.01     0.06      48.11      2   0.01     0.09\n' +
        'wd0         32.00    412   0.87    12.88      16.00     37   0.87     0.58\n' +
        'wd1          0.00      0   0.00     0.00      64.00    120   0.35     7.50\n',
    );
    expect(run!.reports).toBe(2);
    expect(run!.series.map((s) => s.sampleCount)).toEqual([2, 2]);
    expect(run!.series[0]!.summary.read_iops).toMatchObject({ count: 1, mean: 412 });
  });
});
