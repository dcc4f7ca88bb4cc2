/**
 * The error for input benchdrop cannot read names what it looked like
 * (shared/parsers/near-misses.ts): another tool's output, or a header one or two
 * words away from a layout it reads, at the line that shows it.
 */
import { describe, expect, it } from 'vitest';
import { parseFails } from '../../support/parsed.ts';

describe('what an unreadable paste looks like', () => {
  it('sar -d output is named as such, at its header line', async () => {
    const error = await parseFails(
      [
        'Linux 5.15.0 (db1) 01/15/2024 _x86_64_ (4 CPU)',
        '',
        '10:00:01 AM       DEV       tps  rd_sec/s  wr_sec/s  avgrq-sz  avgqu-sz     await     svctm     %util',
        '10:00:02 AM    dev8-0      4.00      0.00     64.00     16.00      0.00      0.25      0.25      0.10',
      ].join('\n'),
    );
    expect(error.line).toBe(3);
    expect(error.problem).toContain('looks like sysstat sar -d (not iostat); not supported yet');
  });

  it('zpool iostat and vmstat are named', async () => {
    const zpool = await parseFails(
      '               capacity     operations     bandwidth\npool        alloc   free   read  write   read  write\ntank  1.2T  2.4T  12  40  1.5M  4.0M\n',
    );
    expect(zpool.problem).toContain('zpool iostat');
    const vmstat = await parseFails(
      'procs -----------memory---------- ---swap-- -----io----\n r  b   swpd   free   buff  cache   si   so    bi    bo\n 1  0      0 812344  10240 402112    0    0    12    40\n',
    );
    expect(vmstat.problem).toContain('vmstat');
  });

  it('a header one word away from a Linux layout says which word', async () => {
    const error = await parseFails(
      [
        'Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await  svctm  %util  %frob',
        'sda               0.07     0.78    0.73    3.03    14.92    86.70    54.05     0.03    8.43   5.00   1.88   0.00',
      ].join('\n'),
    );
    expect(error.line).toBe(1);
    expect(error.problem).toContain(
      'a Linux sysstat iostat header (linux-sysstat-x-pre9.1.2), but "%frob" is no column of it',
    );
  });

  it('a Solaris header with two unknown words under its title says both', async () => {
    const error = await parseFails(
      [
        '                    extended device statistics',
        '    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b  q/s zz/t device',
        '    0.0   84.9    0.0 19096.7  0.0 35.9    0.2  423.3   2  96  0.0  0.0 c0t0d0',
      ].join('\n'),
    );
    expect(error.line).toBe(2);
    expect(error.problem).toContain(
      'a Solaris iostat -x header (solaris-xn), but "q/s" and "zz/t" are no columns of it',
    );
  });

  it('prose with nothing like a table keeps the plain message', async () => {
    const error = await parseFails('We ran the backup last night.\nIt took four hours, as usual.\n');
    expect(error.problem).toBe('no diskperf, iostat or fio data in the first 2 lines');
  });
});
