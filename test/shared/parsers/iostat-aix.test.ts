/**
 * AIX iostat -D (shared/parsers/iostat-aix.ts) through the full driver, on cases the
 * fixtures leave out: the long form (-l), value suffixes, blocks cut short or with
 * the wrong number of values, several invocations in one file, since-boot summaries.
 */
import { describe, expect, it } from 'vitest';
import { aixValue, isAixLine } from '../../../shared/parsers/iostat-aix.ts';
import { detectedRuns, parseFails, seriesOf } from '../../support/parsed.ts';

/** One -D block: the xfer, read, write and queue values as printed. */
function block(device: string, xfer: string, read: string, write: string, queue: string): string[] {
  return [
    `${device.padEnd(16)}xfer:  %tm_act      bps      tps      bread      bwrtn`,
    `                         ${xfer}`,
    '                read:      rps  avgserv  minserv  maxserv   timeouts      fails',
    `                         ${read}`,
    '               write:      wps  avgserv  minserv  maxserv   timeouts      fails',
    `                         ${write}`,
    '               queue:  avgtime  mintime  maxtime  avgwqsz    avgsqsz     sqfull',
    `                         ${queue}`,
    '-'.repeat(80),
  ];
}

const IDLE = block(
  'hdisk0',
  '0.0 0.0 0.0 0.0 0.0',
  '0.0 0.0 0.0 0.0 0 0',
  '0.0 0.0 0.0 0.0 0 0',
  '0.0 0.0 0.0 0.0 0.0 0',
);
const BUSY = (tps: string) =>
  block(
    'hdisk0',
    `50.0 4.0M ${tps} 3.0M 1.0M`,
    '100.0 2.5 0.1 1.2S 0 0',
    '20.0 1.5 0.2 9.0 0 0',
    '0.5 0.0 3.0 0.2 1.1 7',
  );

describe('AIX iostat -D', () => {
  it('tells block openings and the long title from other AIX lines', () => {
    expect(isAixLine('hdisk0          xfer:  %tm_act      bps      tps      bread      bwrtn')).toBe(true);
    expect(isAixLine('Disks:                     xfers                                read     write    queue')).toBe(
      true,
    );
    // The plain AIX disk report and the read: label are not block openings.
    expect(isAixLine('Disks:        % tm_act     Kbps      tps    Kb_read   Kb_wrtn')).toBe(false);
    expect(isAixLine('read:      rps  avgserv  minserv  maxserv   timeouts      fails')).toBe(false);
  });

  it('scales sizes by powers of 1000 and times to milliseconds', () => {
    expect(aixValue('4.1K', 'size')).toBeCloseTo(4100, 9);
    expect(aixValue('2.0M', 'size')).toBe(2_000_000);
    expect(aixValue('1.5S', 'time')).toBe(1500);
    expect(aixValue('2M', 'time')).toBe(120_000);
    expect(aixValue('12,5', 'time')).toBe(12.5);
    expect(aixValue('1.0S', 'size')).toBeNaN();
    expect(aixValue('-1.0', 'size')).toBeNaN();
  });

  it('reads every section into canonical metrics, and a repeated disk opens the next report', async () => {
    const text = [
      'System configuration: lcpu=4 drives=1 paths=1 vdisks=0',
      '',
      ...IDLE,
      ...BUSY('120.0'),
      ...BUSY('130.0'),
    ];
    const [run] = await detectedRuns(`${text.join('\n')}\n`, 'iostat-aix');
    expect(run!.platform).toBe('aix');
    expect(run!.dialect).toBe('aix-D');
    expect(run!.reports).toBe(3);
    expect(run!.meta.cpus).toBe(4);
    const disk = seriesOf(run!, 'hdisk0');
    const busy = disk.samples![1]!;
    expect(busy.sinceBoot).toBe(false);
    expect(busy.values).toMatchObject({ util_pct: 50, iops: 120, read_iops: 100, write_iops: 20 });
    expect(busy.values.read_kBps).toBeCloseTo(3e6 / 1024, 9);
    expect(busy.values.write_kBps).toBeCloseTo(1e6 / 1024, 9);
    expect(busy.values).toMatchObject({
      read_ms: 2.5,
      write_ms: 1.5,
      wait_ms: 0.5,
      wait_queue: 0.2,
      active_queue: 1.1,
    });
    expect(busy.raw).toMatchObject({ bps: 4e6, 'read maxserv': 1200, 'write maxserv': 9, sqfull: 7 });
    // The since-boot report stays out of the summary when interval reports follow.
    expect(disk.summary.iops).toMatchObject({ count: 2, mean: 125 });
  });

  it('reads the long form (-l), one disk per line', async () => {
    const text = [
      'System configuration: lcpu=2 drives=2 paths=2 vdisks=0',
      '',
      'Disks:                     xfers                                read                                write                                  queue',
      '-------------- -------------------------------- ------------------------------------ ------------------------------------ --------------------------------------',
      '                 %tm    bps   tps  bread  bwrtn   rps    avg    min    max time fail   wps    avg    min    max time fail    avg    min    max   avg   avg  serv',
      '                 act                                    serv   serv   serv outs              serv   serv   serv outs        time   time   time  wqsz  sqsz qfull',
      'hdisk0           2.0  27.8K   3.6   6.7K  21.1K   0.6   4.9    0.1   34.4    0    0   3.0   2.3    0.3   60.3    0    0   0.3    0.0   37.1    0.0   0.0   1.2',
      'hdisk1          61.5   9.1M 801.0   8.0M   1.1M 700.0   3.2    0.2    1.1S    0    0 101.0   1.9    0.3   12.0    0    0   2.2    0.0   40.0    0.4   2.1  30',
    ];
    const [run] = await detectedRuns(`${text.join('\n')}\n`, 'iostat-aix');
    expect(run!.dialect).toBe('aix-Dl');
    expect(run!.reports).toBe(1);
    const sample = seriesOf(run!, 'hdisk1').samples![0]!;
    expect(sample.values).toMatchObject({ util_pct: 61.5, iops: 801, read_iops: 700, write_iops: 101, read_ms: 3.2 });
    expect(sample.values.write_kBps).toBeCloseTo(1.1e6 / 1024, 9);
    expect(sample.raw['read maxserv']).toBe(1100);
    expect(seriesOf(run!, 'hdisk0').samples![0]!.values.active_queue).toBe(0);
  });

  it('keeps no CPU count too large to hold exactly (found by the fuzzer: lcpu=1e400 gave Infinity)', async () => {
    const banner = `System configuration: lcpu=${'9'.repeat(400)} drives=1 paths=1 vdisks=0`;
    const [run] = await detectedRuns([banner, ...IDLE].join('\n'), 'iostat-aix');
    expect(run!.meta.cpus).toBeUndefined();
  });

  it('opens a run per System configuration banner after rows', async () => {
    const banner = 'System configuration: lcpu=4 drives=1 paths=1 vdisks=0';
    const runs = await detectedRuns([banner, ...IDLE, ...BUSY('120.0'), banner, ...IDLE].join('\n'), 'iostat-aix');
    expect(runs.map((r) => r.reports)).toEqual([2, 1]);
    expect(runs.map((r) => r.index)).toEqual([0, 1]);
  });

  it('fails on a block cut at the end of the input, naming the label line', async () => {
    const text = [...IDLE, ...BUSY('120.0').slice(0, 3)];
    const error = await parseFails(text.join('\n'));
    expect(error.line).toBe(IDLE.length + 3);
    expect(error.message).toContain('read: labels of disk "hdisk0" are followed by the end of the input');
  });

  it('fails on a block cut by the next disk, quoting what came instead of values', async () => {
    const text = [...IDLE.slice(0, 3), ...BUSY('120.0')];
    const error = await parseFails(text.join('\n'));
    expect(error.line).toBe(3);
    expect(error.message).toContain('followed by "hdisk0');
  });

  it('skips a block whose value line does not fit its labels, with a warning', async () => {
    const bad = block('hdisk1', '1.0 2.0 3.0', '0.0 0.0 0.0 0.0 0 0', '0.0 0.0 0.0 0.0 0 0', '0.0 0.0 0.0 0.0 0.0 0');
    const [run] = await detectedRuns([...IDLE, ...bad].join('\n'), 'iostat-aix');
    expect(run!.series.map((s) => s.device)).toEqual(['hdisk0']);
    expect(run!.warnings[0]!.message).toContain('3 values under 5 xfer: labels');
    const error = await parseFails(bad.join('\n'));
    expect(error.message).toContain('no AIX disk block could be read');
  });
});
