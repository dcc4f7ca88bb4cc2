/**
 * fio normal output (shared/parsers/fio-normal.ts) through the style-detecting parser
 * (shared/parsers/fio.ts): every fixture exact; blocks cut short and figures that do not
 * read fail on their line; the same figures in other units give the same records; a
 * `--client` run names its clients.
 */
import { describe, expect, it } from 'vitest';
import { parseFioText } from '../../../shared/parsers/fio.ts';
import { describeFioFixtures, fioFailure as failure, readFio as read } from '../../support/fio.ts';

const jobsOf = (text: string) => parseFioText(text, 'run.txt').jobs;

/** The 1-based number of the first line that starts with `start`. */
function lineOf(text: string, start: string): number {
  const at = text.split('\n').findIndex((l) => l.startsWith(start));
  if (at < 0) throw new Error(`no line starts with ${start}`);
  return at + 1;
}

describeFioFixtures(
  'fio normal fixtures',
  /^normal-fio[23]-.*\.txt$/,
  6,
  'randrw with progress, fio 2.x, two runs, mixed, group of 4, failed',
);

describe('fio normal', () => {
  const fio3 = read('normal-fio3-randrw-progress.txt');
  const fio2 = read('normal-fio2-randwrite-kbs.txt');

  it('fails at the end of the input when it stops after a job line, naming where the job began', () => {
    const job = lineOf(fio3, 'rw70: (groupid=');
    const cut = `${fio3.split('\n').slice(0, job).join('\n')}\n\n\n`;
    const error = failure(cut);
    expect(error.line).toBe(job + 2);
    expect(error.problem).toBe(`the input ends inside the job result that starts on line ${job}`);
  });

  it('fails on the line that closes a result block holding nothing but its job line', () => {
    const lines = fio2.split('\n');
    const job = lineOf(fio2, 'randwrite-8k: (groupid=');
    const summary = lineOf(fio2, 'Run status group');
    const text = [...lines.slice(0, job), '', ...lines.slice(summary - 1)].join('\n');
    const error = failure(text);
    expect(error.line).toBe(job + 2);
    expect(error.problem).toBe(`the job result that starts on line ${job} has no figures before this line`);
  });

  it('fails on a direction line whose figures do not read, naming the line', () => {
    const error3 = failure(fio3.replace('IOPS=10.5k', 'IOPS=10.5x'));
    expect(error3.line).toBe(lineOf(fio3, '  read: IOPS='));
    expect(error3.problem).toMatch(/^a read line whose figures do not read in "read: IOPS=10\.5x/);
    const error2 = failure(fio2.replace('bw=20478KB/s', 'bw=20,478KB/s'));
    expect(error2.line).toBe(6);
    expect(error2.problem).toMatch(/^a write line whose figures do not read/);
  });

  it('fails on a latency that is not a number, naming the line', () => {
    const error = failure(fio3.replace('clat (nsec): min=152340,', 'clat (nsec): min=15z340,'));
    expect(error.line).toBe(lineOf(fio3, '    clat (nsec): min=152340'));
    expect(error.problem).toMatch(/clat latency "15z340" that is not a number/);
  });

  it('fails when the output holds announcements but no job result', () => {
    const head = fio3.split('\n').slice(0, 7).join('\n');
    const error = failure(head);
    expect(error.problem).toBe('fio normal output with no job result');
    expect(error.line).toBe(0);
  });

  it('reads the same figures in KiB/s or MiB/s, GiB or MiB, nsec or usec as the same records', () => {
    const usecTable = /( {4}clat percentiles \(usec\):\n(?: {5}\|.*\n)+)/.exec(fio3)![1]!;
    const nsecTable = usecTable
      .replace('(usec)', '(nsec)')
      .replace(/\[\s*(\d+)\]/g, (_, v: string) => `[${Number(v) * 1000}]`);
    const rewritten = fio3
      .replace('BW=41.0MiB/s (43.0MB/s)(1230MiB/', 'BW=41984KiB/s (43.0MB/s)(1259520KiB/')
      .replace('(528MiB/30001msec)', '(0.515625GiB/30001msec)')
      .replace(
        'clat (nsec): min=152340, max=9876.5k, avg=1065432.10, stdev=412345.67',
        'clat (usec): min=152.34, max=9876.5, avg=1065.4321, stdev=412.34567',
      )
      .replace(usecTable, nsecTable);
    expect(rewritten).toContain('(nsec):\n     |  1.00th=[392000]');
    expect(jobsOf(rewritten)).toEqual(jobsOf(fio3));

    const fio2Rewritten = fio2.replace('io=1200.0MB, bw=20478KB/s', 'io=1228800KB, bw=19.998046875MB/s');
    expect(jobsOf(fio2Rewritten)).toEqual(jobsOf(fio2));
    expect(jobsOf(fio2.replace('bw=20478KB/s', 'bw=20969472 B/s'))).toEqual(jobsOf(fio2));
  });

  it('converts each figure by its own unit', () => {
    const [read3, write3] = jobsOf(fio3)[0]!.directions;
    expect(read3!.iops).toBe(10_500);
    expect(read3!.bandwidthBytesPerSec).toBe(41 * 1024 * 1024);
    expect(read3!.clat!.maxUs).toBe(9876.5);
    expect(write3!.clatPercentilesUs.p99).toBe(2278);
    const failed = jobsOf(read('normal-fio3-failed-err5.txt'))[0]!.directions[0]!;
    expect(failed.clatPercentilesUs.p99).toBe(66_000);
    expect(failed.clat!.meanUs).toBe(37_610);
  });

  it('reads a job line that a progress line ran into', () => {
    const glued = fio3.replace('[eta 00m:00s]\nrw70: (groupid=', '[eta 00m:00s]rw70: (groupid=');
    const [job] = jobsOf(glued);
    const [plain] = jobsOf(fio3);
    expect(job!.name).toBe('rw70');
    expect(job!.directions).toEqual(plain!.directions);
    expect(job!.line).toBe(plain!.line - 1);
  });

  it('names the client of a --client run: by <host> prefix, or the one server that announced the job', () => {
    const text = [
      'hostname=stor-a, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.36, flags=1',
      'hostname=stor-b, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.36, flags=1',
      '<stor-a> seq: (g=0): rw=read, bs=(R) 1024KiB-1024KiB, (W) 1024KiB-1024KiB, (T) 1024KiB-1024KiB, ' +
        'ioengine=libaio, iodepth=4',
      '<stor-b> rand: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ' +
        'ioengine=libaio, iodepth=32',
      '<stor-a> Starting 1 process',
      '<stor-b> Starting 1 process',
      'seq: (groupid=0, jobs=1): err= 0: pid=3300: Wed Jun 12 12:00:10 2024',
      '  read: IOPS=1500, BW=1500MiB/s (1573MB/s)(14.6GiB/10001msec)',
      '  cpu          : usr=1.10%, sys=9.80%, ctx=15002, majf=0, minf=1040',
      '<stor-b> rand: (groupid=0, jobs=1): err= 0: pid=4100: Wed Jun 12 12:00:10 2024',
      '  read: IOPS=128k, BW=500MiB/s (524MB/s)(5000MiB/10001msec)',
      '  cpu          : usr=8.10%, sys=40.20%, ctx=1280120, majf=0, minf=45',
      'All clients: (groupid=0, jobs=2): err= 0: pid=0: Wed Jun 12 12:00:10 2024',
      '  read: IOPS=129k, BW=2000Mi (2097M)(19.5GiB/10001msec)',
      '  cpu          : usr=4.60%, sys=25.00%, ctx=1295122, majf=0, minf=1085',
      '',
    ].join('\n');
    const output = parseFioText(text);
    expect(output.version).toBe('fio-3.36');
    expect(output.jobs.map((j) => [j.name, j.client])).toEqual([
      ['seq', 'stor-a'],
      ['rand', 'stor-b'],
      ['All clients', undefined],
    ]);
    expect(output.jobs[1]!.options).toEqual({
      rw: 'randread',
      bs: '4k',
      bsBytes: 4096,
      iodepth: 32,
      ioengine: 'libaio',
      numjobs: 1,
    });
    expect(output.jobs[2]!.directions[0]!.bandwidthBytesPerSec).toBe(2000 * 1024 * 1024);
  });

  it('writes block sizes the way fio takes them: ranges and per-direction sizes keep no bsBytes', () => {
    const withBs = (bs: string) =>
      jobsOf(fio3.replace('bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B', bs))[0]!.options;
    expect(withBs('bs=(R) 4096B-32.0KiB, (W) 4096B-32.0KiB, (T) 4096B-32.0KiB')).toMatchObject({ bs: '4k-32k' });
    expect(withBs('bs=(R) 64.0KiB-64.0KiB, (W) 4096B-4096B, (T) 4096B-4096B')).toMatchObject({ bs: '64k,4k' });
    expect(withBs('bs=4K-4K/4K-4K/4K-4K').bsBytes).toBe(4096);
    expect(withBs('bs=(R) 4096B-32.0KiB, (W) 4096B-32.0KiB, (T) 4096B-32.0KiB').bsBytes).toBeUndefined();
  });
});
