/**
 * Where an iostat session begins and ends (shared/parsers/iostat.ts): `-y` runs have
 * no since-boot report, a session pasted in two pieces with prose between them stays
 * one run, and a command, a banner or another device set still starts a new run.
 */
import { describe, expect, it } from 'vitest';
import type { IostatRun } from '../../../shared/model.ts';
import { parseText } from '../../../shared/parsers/index.ts';

const HEADER = '    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device';
const row = (device: string, r: number) =>
  `  ${r.toFixed(1)}   84.9    0.0 19096.7  0.0 35.9    0.2  423.3   2  96 ${device}`;
const report = (devices: string[], r: number) => [
  'extended device statistics',
  HEADER,
  ...devices.map((d) => row(d, r)),
];

async function runs(lines: string[]): Promise<IostatRun[]> {
  return (await parseText(lines.join('\n'), 'session.txt')).runs as IostatRun[];
}

const LINUX_HEADER = 'Device            r/s     w/s     rkB/s     wkB/s  aqu-sz  %util';
const linuxRow = (device: string, r: number) =>
  `${device}              ${r.toFixed(2)}   2.00     16.00     24.00    0.01   0.60`;

describe('-y: no report is since boot', () => {
  const log = (command: string) => [
    `$ ${command}`,
    'Linux 5.15.0-91-generic (db1) \t01/15/2024 \t_x86_64_\t(4 CPU)',
    '',
    LINUX_HEADER,
    linuxRow('sda', 1),
    '',
    LINUX_HEADER,
    linuxRow('sda', 3),
  ];

  it('report 0 is an interval when the command says -y, alone or among other options', async () => {
    for (const command of ['iostat -xy 5 2', 'iostat -x -y 5 2', 'LANG=C /usr/bin/iostat -dxy 5 2']) {
      const [run] = await runs(log(command));
      expect(
        run!.series[0]!.samples!.map((s) => s.sinceBoot),
        command,
      ).toEqual([false, false]);
      expect(run!.series[0]!.summary.read_iops, command).toMatchObject({ count: 2, mean: 2 });
    }
  });

  it('report 0 is since boot without -y, and the summaries leave it out', async () => {
    for (const command of ['iostat -x 5 2', 'iostat -x --pretty 5 2', 'iostat -p sdy -x 5 2']) {
      const [run] = await runs(log(command));
      expect(
        run!.series[0]!.samples!.map((s) => s.sinceBoot),
        command,
      ).toEqual([true, false]);
      expect(run!.series[0]!.summary.read_iops, command).toMatchObject({ count: 1, mean: 3 });
    }
  });
});

describe('-y elsewhere is no sysstat -y', () => {
  it('a Solaris run whose command carries a y keeps its since-boot report', async () => {
    const [run] = await runs(['iostat -xy 5 2', ...report(['c0t0d0'], 1), ...report(['c0t0d0'], 2)]);
    expect(run!.series[0]!.samples!.map((s) => s.sinceBoot)).toEqual([true, false]);
  });
});

describe('a session pasted in pieces', () => {
  it('the same header and devices after a sentence continue the run, the sentence warned about', async () => {
    const result = await runs([
      ...report(['c0t0d0', 'c0t1d0'], 1),
      ...report(['c0t0d0', 'c0t1d0'], 2),
      'and a little later:',
      ...report(['c0t0d0', 'c0t1d0'], 3),
    ]);
    expect(result).toHaveLength(1);
    expect(result[0]!.reports).toBe(3);
    expect(result[0]!.series[0]!.samples!.map((s) => [s.report, s.raw['r/s']])).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
    expect(result[0]!.warnings.map((w) => w.message)).toEqual([
      'text between two pieces of one session ignored: "and a little later:"',
    ]);
  });

  it('another device set after the sentence starts a new run, with the sentence before it', async () => {
    const result = await runs([...report(['c0t0d0'], 1), 'On the other box:', ...report(['c1t0d0'], 5)]);
    expect(result.map((r) => [r.reports, r.series.map((s) => s.device)])).toEqual([
      [1, ['c0t0d0']],
      [1, ['c1t0d0']],
    ]);
    expect(result[1]!.series[0]!.samples![0]!.sinceBoot).toBe(true);
    expect(result[0]!.endLine).toBe(3);
  });

  it("a command between the pieces starts a new run, as the seed article's tunefs runs do", async () => {
    const result = await runs([
      'tunefs -a 1 /opt',
      ...report(['c0t0d0'], 1),
      'tunefs -a 16 /opt',
      ...report(['c0t0d0'], 2),
    ]);
    expect(result.map((r) => r.context)).toEqual([['tunefs -a 1 /opt'], ['tunefs -a 16 /opt']]);
  });

  it('a banner between the pieces starts a new run even for the same devices', async () => {
    const banner = 'Linux 5.15.0-91-generic (db1) \t01/15/2024 \t_x86_64_\t(4 CPU)';
    const result = await runs([
      banner,
      LINUX_HEADER,
      linuxRow('sda', 1),
      'again:',
      banner,
      LINUX_HEADER,
      linuxRow('sda', 2),
    ]);
    expect(result).toHaveLength(2);
  });

  it('a held header followed by text, not rows, leaves runs whose lines are in order', async () => {
    // Found by the fuzzer: a cpu block and a damaged header after the held one made a run end before it began.
    const result = await runs([
      ...report(['c0t0d0'], 1),
      'exte device statistics',
      HEADER,
      '      cpu',
      `      cpu\u0080${HEADER.trim()}`,
      row('c0t0d0', 2),
      ...report(['c0t0d0'], 3),
    ]);
    for (const run of result) expect(run.startLine, `run ${run.index}`).toBeLessThanOrEqual(run.endLine);
    expect(result.map((r) => r.series.map((s) => s.sampleCount))).toEqual([[1], [1]]);
  });

  it('a held header with no rows after it at the end of the input is no run', async () => {
    const result = await runs([...report(['c0t0d0'], 1), 'nothing more came:', 'extended device statistics', HEADER]);
    expect(result).toHaveLength(1);
    expect(result[0]!.reports).toBe(1);
  });
});
