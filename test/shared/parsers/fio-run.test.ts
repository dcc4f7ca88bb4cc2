/**
 * fio outputs as runs (shared/parsers/fio-run.ts, through shared/parsers/driver.ts):
 * every metric of a row in its canonical unit, from outputs written with known figures
 * (harness/fio-output.ts) and small normal and terse texts; failed and idle jobs left out
 * with a warning on their line; clones and --client hosts at one point merged; a point
 * met again starting the next run; terse jobs named by job; an output where nothing
 * measured anything a ParseError on its first job's line.
 */
import { describe, expect, it } from 'vitest';
import { fioJson, type WrittenJob } from '../../../harness/fio-output.ts';
import type { FioMetric } from '../../../shared/metrics.ts';
import type { FioRun, Run } from '../../../shared/model.ts';
import { isFioOutput, parseStream, parseText } from '../../../shared/parsers/driver.ts';
import { ParseError } from '../../../shared/parsers/errors.ts';
import { parseFioText } from '../../../shared/parsers/fio.ts';
import { fioPointOfJob, fioRuns } from '../../../shared/parsers/fio-run.ts';

const MiB = 1024 * 1024;
const LAST_LINE = 1000;

/** The runs of a whole fio text, as the driver makes them (its last line given). */
function runsOf(text: string, lastLine = LAST_LINE): FioRun[] {
  const { jobs, ...output } = parseFioText(text, 'run.txt');
  return fioRuns(jobs, output, lastLine);
}

/** The 1-based number of the first line of `text` that starts with `start`, from line `from` on. */
function lineOf(text: string, start: string, from = 1): number {
  const at = text.split('\n').findIndex((l, i) => i + 1 >= from && l.startsWith(start));
  if (at < 0) throw new Error(`no line starts with ${start}`);
  return at + 1;
}

/** The 1-based line each job of a fioJson document starts on (the `{` just before its "jobname"), in order. */
function jobLines(text: string): number[] {
  const lines = text.split('\n');
  return lines.flatMap((l, i) => (l.trimStart().startsWith('"jobname"') ? [i] : []));
}

/** The point fioRuns gives a written job: its options, numjobs 1 where it wrote none. */
function writtenPoint(job: WrittenJob) {
  return { rw: job.rw, bs: job.bs, iodepth: job.iodepth, numjobs: job.numjobs ?? 1 };
}

/** One direction of a terse v3 record: what the tests read, the rest plausible filler. */
interface TerseDirection {
  kib: number;
  bwKiB: number;
  iops: number;
  clatMean: number;
  latMean: number;
  /** p50, p90, p99, p99.9, p99.99 in µs. */
  percentiles: [number, number, number, number, number];
}

const IDLE_TERSE = [
  ...['0', '0', '0', '0'],
  ...['0', '0', '0.000000', '0.000000', '0', '0', '0.000000', '0.000000'],
  ...Array<string>(20).fill('0%=0'),
  ...['0', '0', '0.000000', '0.000000'],
  ...['0', '0', '0.000000%', '0.000000', '0.000000'],
];

function terseBlock(d: TerseDirection | undefined): string[] {
  if (d === undefined) return IDLE_TERSE;
  const [p50, p90, p99, p999, p9999] = d.percentiles;
  const percentiles: [number, number][] = [
    [1, p50 / 4],
    [5, p50 / 3],
    [10, p50 / 2],
    [20, p50 / 1.8],
    [30, p50 / 1.5],
    [40, p50 / 1.2],
    [50, p50],
    [60, p50 * 1.1],
    [70, p50 * 1.2],
    [80, p50 * 1.4],
    [90, p90],
    [95, (p90 + p99) / 2],
    [99, p99],
    [99.5, (p99 + p999) / 2],
    [99.9, p999],
    [99.95, (p999 + p9999) / 2],
    [99.99, p9999],
  ];
  return [
    ...[d.kib, d.bwKiB, d.iops, 60000].map(String),
    ...['2', '95', '6.412300', '2.118000'],
    ...['48', '18250', d.clatMean.toFixed(6), '1402.775000'],
    ...percentiles.map(([p, v]) => `${p.toFixed(6)}%=${Math.round(v)}`),
    ...['0%=0', '0%=0', '0%=0'],
    ...['52', '18262', d.latMean.toFixed(6), '1403.012000'],
    ...['51200', '60912', '100.000000%', String(d.bwKiB), '1420.550000'],
  ];
}

/** cpu, I/O depths, µs and ms latency buckets: what follows the blocks in every terse version. */
const TERSE_TAIL = [
  ...['7.512300%', '18.204100%', '601234', '0', '1187'],
  ...['0.1%', '0.1%', '0.1%', '0.1%', '100.0%', '0.0%', '0.0%'],
  ...Array<string>(22).fill('0.00%'),
];

/** A terse version 3 record of one job. */
function terseLine(name: string, error: number, read?: TerseDirection, write?: TerseDirection): string {
  return ['3', 'fio-3.33', name, '0', String(error), ...terseBlock(read), ...terseBlock(write), ...TERSE_TAIL].join(
    ';',
  );
}

describe('fio runs from an output with known figures', () => {
  const jobs: WrittenJob[] = [
    { rw: 'randread', bs: 4096, iodepth: 32, iops: 50_000 },
    { rw: 'write', bs: 131072, iodepth: 4, numjobs: 2, iops: 1000 },
  ];
  const text = fioJson({ jobs, version: 'fio-3.35', timestamp: 1_700_000_000, ioengine: 'io_uring' });
  const runs = runsOf(text);
  const [run] = runs;

  it('is one run of a row a point, each in its canonical units', () => {
    expect(runs).toHaveLength(1);
    expect(run!.rows.map((r) => r.point)).toEqual([
      { rw: 'randread', bs: 4096, iodepth: 32, numjobs: 1 },
      { rw: 'write', bs: 131072, iodepth: 4, numjobs: 2 },
    ]);
    expect(run!.rows.map((r) => r.job)).toEqual(['randread-4k-qd32', 'write-128k-qd4-nj2']);
    // 50,000 IOPS of 4 KiB: 195.3125 MiB/s; 32 in flight: 640 µs each (Little's law); clat 95% of it.
    expect(run!.rows[0]!.values).toEqual({
      fio_read_bw: (50_000 * 4096) / MiB,
      fio_read_iops: 50_000,
      fio_read_lat: 640,
      fio_read_p50: 547.2,
      fio_read_p90: 851.2,
      fio_read_p99: 1520,
      fio_read_p99_9: 2432,
      fio_read_p99_99: 4864,
    });
    // 1000 IOPS of 128 KiB: 125 MiB/s; 4 x 2 in flight: 8 ms each.
    expect(run!.rows[1]!.values).toEqual({
      fio_write_bw: 125,
      fio_write_iops: 1000,
      fio_write_lat: 8000,
      fio_write_p50: 6840,
      fio_write_p90: 10640,
      fio_write_p99: 19000,
      fio_write_p99_9: 30400,
      fio_write_p99_99: 60800,
    });
  });

  it('says what the output says of itself, and the columns its rows carry in registry order', () => {
    expect(run).toMatchObject({ format: 'fio', index: 0, name: 'randread-4k-qd32', dialect: 'fio-json' });
    expect(run!.meta).toEqual({
      version: 'fio-3.35',
      time: new Date(1_700_000_000 * 1000).toISOString(),
      options: { ioengine: 'io_uring', direct: '1', size: '4G', runtime: '30' },
      jobs: 2,
    });
    const measures = ['bw', 'iops', 'lat', 'p50', 'p90', 'p99', 'p99_9', 'p99_99'];
    expect(run!.columns).toEqual([
      ...measures.map((m) => `fio_read_${m}` as FioMetric),
      ...measures.map((m) => `fio_write_${m}` as FioMetric),
    ]);
    expect(run!.warnings).toEqual([]);
  });

  it('names each row and the run by the lines its jobs start on', () => {
    const lines = jobLines(text);
    expect(run!.rows.map((r) => r.line)).toEqual(lines);
    expect(run!.startLine).toBe(lines[0]);
    expect(run!.endLine).toBe(LAST_LINE);
  });

  it('takes fio defaults for the options a job leaves out: bs 4096, iodepth 1, numjobs 1', () => {
    const document = JSON.parse(fioJson({ jobs: [{ rw: 'randwrite', bs: 8192, iodepth: 2, iops: 300 }] }));
    delete document.jobs[0]['job options'].bs;
    delete document.jobs[0]['job options'].iodepth;
    const [bare] = runsOf(JSON.stringify(document, null, 2));
    expect(bare!.rows[0]!.point).toEqual({ rw: 'randwrite', bs: 4096, iodepth: 1, numjobs: 1 });
    // The figures stay as measured: the written job moved 8 KiB a request.
    expect(bare!.rows[0]!.values.fio_write_bw).toBe((300 * 8192) / MiB);
  });

  it('reads the same figures from the driver as one fio run', async () => {
    const parsed = await parseText(text, 'sweep.json');
    expect(parsed.format).toBe('fio');
    expect(parsed.runs).toHaveLength(1);
    const fio = parsed.runs[0] as FioRun;
    expect(fio.rows).toEqual(run!.rows);
    expect(fio.endLine).toBe(parsed.lines);
    expect(isFioOutput(text)).toBe(true);
  });
});

describe('fio runs from normal output', () => {
  const header = (name: string, rw: string, bs: string, iodepth: number) =>
    `${name}: (g=0): rw=${rw}, bs=(R) ${bs}-${bs}, (W) ${bs}-${bs}, (T) ${bs}-${bs}, ioengine=io_uring, iodepth=${iodepth}`;
  const percentiles = [
    '    clat percentiles (usec):',
    '     |  1.00th=[ 5932],  5.00th=[ 7046], 10.00th=[ 7635], 20.00th=[ 8455],',
    '     | 30.00th=[ 9110], 40.00th=[ 9634], 50.00th=[10028], 60.00th=[10421],',
    '     | 70.00th=[10945], 80.00th=[11469], 90.00th=[12387], 95.00th=[13173],',
    '     | 99.00th=[15270], 99.50th=[16450], 99.90th=[21103], 99.95th=[23987],',
    '     | 99.99th=[28967]',
  ];
  const text = [
    header('seq128k', 'read', '128KiB', 32),
    header('rand4k', 'randwrite', '4096B', 8),
    'fio-3.28',
    'Starting 2 processes',
    'seq128k: (groupid=0, jobs=1): err= 0: pid=901: Thu Feb  1 09:00:20 2024',
    '  read: IOPS=3200, BW=400MiB/s (419MB/s)(8000MiB/20001msec)',
    '    slat (usec): min=3, max=95, avg= 6.40, stdev= 1.90',
    '    clat (usec): min=820, max=31044, avg=9990.12, stdev=2001.55',
    ...percentiles,
    '  cpu          : usr=0.90%, sys=6.12%, ctx=64010, majf=0, minf=1035',
    'rand4k: (groupid=0, jobs=1): err= 0: pid=902: Thu Feb  1 09:00:20 2024',
    '  write: IOPS=2560, BW=10.0MiB/s (10.5MB/s)(600MiB/60001msec); 0 zone resets',
    '    clat (usec): min=820, max=31044, avg=3000.00, stdev=2001.55',
    '     lat (usec): min=828, max=31050, avg=3125.00, stdev=2001.60',
    '  cpu          : usr=0.90%, sys=6.12%, ctx=64010, majf=0, minf=1035',
    '',
    'Run status group 0 (all jobs):',
    '   READ: bw=400MiB/s (419MB/s), 400MiB/s-400MiB/s (419MB/s-419MB/s), io=8000MiB (8389MB), run=20001-20001msec',
    '',
  ].join('\n');

  it('takes the mean completion latency where no total latency was printed, the total where it was', () => {
    const [run] = runsOf(text);
    expect(run!.dialect).toBe('fio-normal');
    expect(run!.rows.map((r) => [r.point, r.line])).toEqual([
      [{ rw: 'read', bs: 131072, iodepth: 32, numjobs: 1 }, lineOf(text, 'seq128k: (groupid')],
      [{ rw: 'randwrite', bs: 4096, iodepth: 8, numjobs: 1 }, lineOf(text, 'rand4k: (groupid')],
    ]);
    expect(run!.rows[0]!.values).toEqual({
      fio_read_bw: 400,
      fio_read_iops: 3200,
      fio_read_lat: 9990.12,
      fio_read_p50: 10028,
      fio_read_p90: 12387,
      fio_read_p99: 15270,
      fio_read_p99_9: 21103,
      fio_read_p99_99: 28967,
    });
    expect(run!.rows[1]!.values).toEqual({ fio_write_bw: 10, fio_write_iops: 2560, fio_write_lat: 3125 });
    expect(run!.meta).toEqual({
      version: 'fio-3.28',
      time: expect.any(String),
      options: { ioengine: 'io_uring' },
      jobs: 2,
    });
  });

  it('leaves out failed jobs, warning on their lines with what fio said', () => {
    const failing = [
      'readcheck: (g=0): rw=read, bs=(R) 1024KiB-1024KiB, (W) 1024KiB-1024KiB, (T) 1024KiB-1024KiB, ioengine=libaio, iodepth=8',
      'nodev: (g=1): rw=write, bs=(R) 64.0KiB-64.0KiB, (W) 64.0KiB-64.0KiB, (T) 64.0KiB-64.0KiB, ioengine=psync, iodepth=1',
      'good: (g=2): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=16',
      'fio-3.33',
      'Starting 3 processes',
      'readcheck: (groupid=0, jobs=1): err= 5 (file:io_u.c:1889, func=io_u error, error=Input/output error): pid=6066: Fri May 10 03:12:44 2024',
      '  read: IOPS=212, BW=212MiB/s (223MB/s)(1024MiB/4823msec)',
      '     lat (msec): min=2, max=110, avg=37.66, stdev= 9.04',
      '  cpu          : usr=0.21%, sys=3.11%, ctx=1030, majf=0, minf=2061',
      'nodev: (groupid=1, jobs=1): err= 2 (file:filesetup.c:804, func=open(/dev/nvme9n1), error=No such file or directory): pid=0: Fri May 10 03:12:44 2024',
      '  cpu          : usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0',
      '     issued rwts: total=0,0,0,0 short=0,0,0,0 dropped=0,0,0,0',
      'good: (groupid=2, jobs=1): err= 0: pid=6067: Fri May 10 03:12:44 2024',
      '  read: IOPS=20480, BW=80.0MiB/s (83.9MB/s)(4800MiB/60001msec)',
      '     lat (usec): min=52, max=9000, avg=781.25, stdev=100.00',
      '  cpu          : usr=0.21%, sys=3.11%, ctx=1030, majf=0, minf=2061',
      '',
    ].join('\n');
    const runs = runsOf(failing);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.rows.map((r) => r.job)).toEqual(['good']);
    expect(runs[0]!.rows[0]!.values).toEqual({ fio_read_bw: 80, fio_read_iops: 20480, fio_read_lat: 781.25 });
    expect(runs[0]!.warnings).toEqual([
      {
        line: lineOf(failing, 'readcheck: (groupid'),
        message:
          'job "readcheck" failed with error 5 (file:io_u.c:1889, func=io_u error, error=Input/output error): left out',
      },
      {
        line: lineOf(failing, 'nodev: (groupid'),
        message:
          'job "nodev" failed with error 2 (file:filesetup.c:804, func=open(/dev/nvme9n1), ' +
          'error=No such file or directory): left out',
      },
    ]);
    // The run counts the job results its rows hold; the options of every job are described.
    expect(runs[0]!.meta.jobs).toBe(1);
    expect(runs[0]!.meta.options).toEqual({ ioengine: 'libaio, psync' });
    // The run starts on the job it kept.
    expect(runs[0]!.startLine).toBe(lineOf(failing, 'good: (groupid'));
  });

  it('merges the hosts of a --client run at one point: bandwidth and IOPS summed, latency weighted by IOPS', () => {
    const client = [
      'hostname=stor-a, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.36, flags=1',
      'hostname=stor-b, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.36, flags=1',
      '<stor-a> seq: (g=0): rw=read, bs=(R) 1024KiB-1024KiB, (W) 1024KiB-1024KiB, (T) 1024KiB-1024KiB, ioengine=libaio, iodepth=4',
      '<stor-b> seq: (g=0): rw=read, bs=(R) 1024KiB-1024KiB, (W) 1024KiB-1024KiB, (T) 1024KiB-1024KiB, ioengine=libaio, iodepth=4',
      '<stor-a> Starting 1 process',
      '<stor-b> Starting 1 process',
      '<stor-a> seq: (groupid=0, jobs=1): err= 0: pid=3300: Wed Jun 12 12:00:10 2024',
      '  read: IOPS=1500, BW=1500MiB/s (1573MB/s)(14.6GiB/10001msec)',
      '     lat (usec): min=52, max=9000, avg=2000.00, stdev=100.00',
      '  cpu          : usr=1.10%, sys=9.80%, ctx=15002, majf=0, minf=1040',
      '<stor-b> seq: (groupid=0, jobs=1): err= 0: pid=4100: Wed Jun 12 12:00:10 2024',
      '  read: IOPS=500, BW=500MiB/s (524MB/s)(5000MiB/10001msec)',
      '     lat (usec): min=52, max=9000, avg=6000.00, stdev=100.00',
      '  cpu          : usr=8.10%, sys=40.20%, ctx=1280120, majf=0, minf=45',
      '',
    ].join('\n');
    const [run] = runsOf(client);
    expect(run!.rows).toHaveLength(1);
    expect(run!.rows[0]).toMatchObject({
      point: { rw: 'read', bs: 1048576, iodepth: 4, numjobs: 1 },
      job: 'seq',
      client: 'stor-a',
      line: 7,
    });
    // (1500 x 2000 + 500 x 6000) / 2000
    expect(run!.rows[0]!.values).toEqual({ fio_read_bw: 2000, fio_read_iops: 2000, fio_read_lat: 3000 });
    expect(run!.warnings).toEqual([
      {
        line: 7,
        message: '2 results of one job at one point (seq: one a client): their bandwidth and IOPS are added up',
      },
    ]);
    expect(run!.meta.clients).toEqual(['stor-a', 'stor-b']);
  });

  it('makes each pass of a job file its own run (two runs of a one-job file, one after the other)', () => {
    const pass = (iops: number, bw: string) => [
      header('seq128k', 'read', '128KiB', 32),
      'fio-3.28',
      'Starting 1 process',
      'seq128k: (groupid=0, jobs=1): err= 0: pid=901: Thu Feb  1 09:00:20 2024',
      `  read: IOPS=${iops}, BW=${bw} (419MB/s)(8000MiB/20001msec)`,
      '  cpu          : usr=0.90%, sys=6.12%, ctx=64010, majf=0, minf=1035',
      '',
    ];
    const twice = [...pass(3200, '400MiB/s'), ...pass(5120, '640MiB/s')].join('\n');
    const runs = runsOf(twice);
    expect(runs.map((r) => [r.index, r.rows.map((row) => row.values.fio_read_bw)])).toEqual([
      [0, [400]],
      [1, [640]],
    ]);
    expect(runs[1]!.startLine).toBe(lineOf(twice, 'seq128k: (groupid', 6));
  });
});

describe('clones of one job at one point', () => {
  const clone = (iops: number): WrittenJob => ({ rw: 'randwrite', bs: 4096, iodepth: 4, numjobs: 2, iops });
  const other: WrittenJob = { rw: 'randread', bs: 4096, iodepth: 1, iops: 900 };

  it('merges numjobs results in a row into one row, its percentiles left out, with a warning', () => {
    const text = fioJson({ jobs: [clone(300), clone(100), other] });
    const [run, ...more] = runsOf(text);
    expect(more).toEqual([]);
    expect(run!.rows.map((r) => r.point)).toEqual([
      { rw: 'randwrite', bs: 4096, iodepth: 4, numjobs: 2 },
      { rw: 'randread', bs: 4096, iodepth: 1, numjobs: 1 },
    ]);
    const merged = run!.rows[0]!;
    expect(Object.keys(merged.values).sort()).toEqual(['fio_write_bw', 'fio_write_iops', 'fio_write_lat']);
    expect(merged.values.fio_write_bw).toBe((400 * 4096) / MiB);
    expect(merged.values.fio_write_iops).toBe(400);
    // Each clone's latency is 8 in flight over its IOPS: 26.67 ms and 80 ms, weighted 300 : 100.
    expect(merged.values.fio_write_lat).toBeCloseTo(40_000, 6);
    expect(merged.line).toBe(jobLines(text)[0]);
    expect(run!.warnings).toEqual([
      {
        line: jobLines(text)[0],
        message:
          '2 results of one job at one point (randwrite-4k-qd4-nj2: numjobs without group_reporting): ' +
          'their bandwidth and IOPS are added up, their percentiles left out ' +
          '(fio cannot combine them: run with group_reporting)',
      },
    ]);
    // The row that was not merged keeps its percentiles.
    expect(run!.rows[1]!.values.fio_read_p99).toBeDefined();
  });

  it('keeps results in a row that are not numjobs of them as runs', () => {
    const single: WrittenJob = { rw: 'read', bs: 65536, iodepth: 2, iops: 100 };
    const runs = runsOf(fioJson({ jobs: [single, { ...single, iops: 120 }, { ...single, iops: 140 }] }));
    expect(runs.map((r) => r.rows.map((row) => row.values.fio_read_iops))).toEqual([[100], [120], [140]]);
    expect(runs.flatMap((r) => r.warnings)).toEqual([]);
  });

  it('keeps two passes of a group-reported job as two runs (each result sums its numjobs already)', () => {
    // group_reporting: one result of `jobs=2` a pass. The same job file run twice is two runs
    // of 125 MiB/s, not one job of 250 MiB/s.
    const pass = [
      'seq: (g=0): rw=read, bs=(R) 128KiB-128KiB, (W) 128KiB-128KiB, (T) 128KiB-128KiB, ioengine=libaio, iodepth=8',
      '...',
      'fio-3.33',
      'Starting 2 processes',
      'seq: (groupid=0, jobs=2): err= 0: pid=5120: Mon Apr 15 14:22:03 2024',
      '  read: IOPS=1000, BW=125MiB/s (131MB/s)(7500MiB/60002msec)',
      '     lat (usec): min=52, max=52318, avg=16000.00, stdev=880.40',
      '  cpu          : usr=3.10%, sys=12.22%, ctx=2800312, majf=0, minf=58',
      '',
    ];
    const text = [...pass, ...pass].join('\n');
    const runs = runsOf(text);
    expect(runs.map((r) => r.rows.map((row) => [row.point.numjobs, row.values.fio_read_bw]))).toEqual([
      [[2, 125]],
      [[2, 125]],
    ]);
  });

  it('keeps the summary of a --client run (`All clients`) out of the rows: its hosts are already there', () => {
    const client = [
      'hostname=stor-a, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.36, flags=1',
      'hostname=stor-b, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.36, flags=1',
      '<stor-a> seq: (g=0): rw=read, bs=(R) 1024KiB-1024KiB, (W) 1024KiB-1024KiB, (T) 1024KiB-1024KiB, ioengine=libaio, iodepth=4',
      '<stor-b> seq: (g=0): rw=read, bs=(R) 1024KiB-1024KiB, (W) 1024KiB-1024KiB, (T) 1024KiB-1024KiB, ioengine=libaio, iodepth=4',
      '<stor-a> Starting 1 process',
      '<stor-b> Starting 1 process',
      '<stor-a> seq: (groupid=0, jobs=1): err= 0: pid=3300: Wed Jun 12 12:00:10 2024',
      '  read: IOPS=1500, BW=1500MiB/s (1573MB/s)(14.6GiB/10001msec)',
      '  cpu          : usr=1.10%, sys=9.80%, ctx=15002, majf=0, minf=1040',
      '<stor-b> seq: (groupid=0, jobs=1): err= 0: pid=4100: Wed Jun 12 12:00:10 2024',
      '  read: IOPS=500, BW=500MiB/s (524MB/s)(5000MiB/10001msec)',
      '  cpu          : usr=8.10%, sys=40.20%, ctx=1280120, majf=0, minf=45',
      'All clients: (groupid=0, jobs=2): err= 0: pid=0: Wed Jun 12 12:00:10 2024',
      '  read: IOPS=2000, BW=2000Mi (2097M)(19.5GiB/10001msec)',
      '  cpu          : usr=4.60%, sys=25.00%, ctx=1295122, majf=0, minf=1085',
      '',
    ].join('\n');
    const runs = runsOf(client);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.rows.map((r) => [r.job, r.values.fio_read_bw])).toEqual([['seq', 2000]]);
  });
});

describe('a point met again starts the next run', () => {
  const sweep: WrittenJob[] = [
    { rw: 'randread', bs: 4096, iodepth: 1, iops: 10_000 },
    { rw: 'randread', bs: 4096, iodepth: 32, iops: 80_000 },
    { rw: 'write', bs: 1048576, iodepth: 4, iops: 1000 },
  ];
  const pass = (k: number) => sweep.map((j) => ({ ...j, iops: j.iops * (k + 1) }));

  it('puts the k-th result of each point in run k (a sweep three times in one document)', () => {
    const text = fioJson({ jobs: [...pass(0), ...pass(1), ...pass(2)] });
    const runs = runsOf(text);
    const lines = jobLines(text);
    expect(runs.map((r) => r.index)).toEqual([0, 1, 2]);
    for (const [k, run] of runs.entries()) {
      expect(run.rows.map((r) => r.point)).toEqual(sweep.map(writtenPoint));
      expect(run.rows.map((r) => r.values.fio_read_iops ?? r.values.fio_write_iops)).toEqual(
        sweep.map((j) => j.iops * (k + 1)),
      );
      expect(run.rows.map((r) => r.line)).toEqual(lines.slice(3 * k, 3 * k + 3));
      expect(run.startLine).toBe(lines[3 * k]);
      // A run ends where the next begins, the last at the output's end.
      expect(run.endLine).toBe(k === 2 ? LAST_LINE : lines[3 * k + 3]! - 1);
      expect(run.name).toBe('randread-4k-qd1');
      expect(run.meta).toEqual(runs[0]!.meta);
      expect(run.meta.jobs).toBe(3);
    }
  });

  it('reads documents one after the other as runs', () => {
    const text = fioJson({ jobs: pass(0) }) + fioJson({ jobs: pass(1) });
    const runs = runsOf(text);
    expect(runs.map((r) => r.rows.map((row) => row.values.fio_read_iops ?? row.values.fio_write_iops))).toEqual([
      [10_000, 80_000, 1000],
      [20_000, 160_000, 2000],
    ]);
  });

  it('gives a later run only the points met that often, its columns those its rows carry, and run 0 the warnings', () => {
    const failed = JSON.parse(fioJson({ jobs: [{ rw: 'read', bs: 4096, iodepth: 1, iops: 5 }] })).jobs[0];
    failed.error = 5;
    failed.jobname = 'broken';
    const document = JSON.parse(fioJson({ jobs: [sweep[0]!, sweep[2]!, { ...sweep[0]!, iops: 11_000 }] }));
    document.jobs.push(failed);
    const runs = runsOf(JSON.stringify(document, null, 2));
    expect(runs.map((r) => r.rows.map((row) => row.job))).toEqual([
      ['randread-4k-qd1', 'write-1m-qd4'],
      ['randread-4k-qd1'],
    ]);
    expect(runs[1]!.rows[0]!.values.fio_read_iops).toBe(11_000);
    expect(runs[1]!.columns.every((m) => m.startsWith('fio_read_'))).toBe(true);
    expect(runs[0]!.columns.some((m) => m.startsWith('fio_write_'))).toBe(true);
    expect(runs[0]!.warnings.map((w) => w.message)).toEqual(['job "broken" failed with error 5: left out']);
    expect(runs[1]!.warnings).toEqual([]);
  });
});

describe('terse outputs', () => {
  const seq: TerseDirection = {
    kib: 192_000_000,
    bwKiB: 3_276_800,
    iops: 3200,
    clatMean: 1240.5,
    latMean: 1248.1,
    percentiles: [1172, 1499, 2024, 3261, 7701],
  };
  const rand: TerseDirection = {
    kib: 1_440_000,
    bwKiB: 24_000,
    iops: 6000,
    clatMean: 2311.22,
    latMean: 2319.1212,
    percentiles: [1860, 4146, 8586, 13042, 19006],
  };
  const text = ['fio --minimal jobs.fio', terseLine('seq-read', 0, seq), terseLine('rand-mix', 0, seq, rand)].join(
    '\n',
  );

  it('names each point by its job (terse prints no job options)', () => {
    const [run] = runsOf(text);
    expect(run!.dialect).toBe('fio-terse');
    expect(run!.rows.map((r) => [r.point, r.line])).toEqual([
      [{ job: 'seq-read' }, 2],
      [{ job: 'rand-mix' }, 3],
    ]);
    expect(run!.rows[0]!.values).toEqual({
      fio_read_bw: 3200,
      fio_read_iops: 3200,
      fio_read_lat: 1248.1,
      fio_read_p50: 1172,
      fio_read_p90: 1499,
      fio_read_p99: 2024,
      fio_read_p99_9: 3261,
      fio_read_p99_99: 7701,
    });
    expect(run!.rows[1]!.values).toMatchObject({ fio_write_bw: 24_000 / 1024, fio_write_iops: 6000 });
    expect(run!.rows[1]!.values.fio_write_lat).toBeCloseTo(2319.1212, 9);
    expect(run!.meta).toEqual({ version: 'fio-3.33', jobs: 2 });
    expect(fioPointOfJob(parseFioText(text).jobs[0]!)).toEqual({ job: 'seq-read' });
  });

  it('makes a job met again (a status-interval record) the next run', () => {
    const again = `${text}\n${terseLine('seq-read', 0, { ...seq, iops: 3300 })}\n`;
    const runs = runsOf(again);
    expect(runs.map((r) => r.rows.map((row) => [row.job, row.values.fio_read_iops]))).toEqual([
      [
        ['seq-read', 3200],
        ['rand-mix', 3200],
      ],
      [['seq-read', 3300]],
    ]);
  });

  it('warns of a job that did no I/O on its line', () => {
    const idle = `${text}\n${terseLine('idle', 0)}\n`;
    const [run] = runsOf(idle);
    expect(run!.rows.map((r) => r.job)).toEqual(['seq-read', 'rand-mix']);
    expect(run!.warnings).toEqual([{ line: 4, message: 'job "idle" did no I/O: left out' }]);
  });
});

describe('the driver on a fio output that measured nothing', () => {
  it('is a ParseError naming the first job and its line', async () => {
    const text = ['fio --minimal jobs.fio', terseLine('missing-dev', 2), terseLine('idle', 0), ''].join('\n');
    const error = await parseText(text, 'nothing.terse').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ParseError);
    const parseError = error as ParseError;
    expect(parseError.line).toBe(2);
    expect(parseError.source).toBe('nothing.terse');
    expect(parseError.problem).toBe(
      'no job of this fio output measured anything (job "missing-dev" failed with error 2; job "idle" did no I/O)',
    );
    expect(parseError.message).toMatch(/^nothing\.terse:2: no job of this fio output measured anything/);
  });

  it('yields runs when one job measured something', async () => {
    const text = [
      'fio --minimal jobs.fio',
      terseLine('missing-dev', 2),
      terseLine('ok', 0, undefined, {
        kib: 1024,
        bwKiB: 2048,
        iops: 512,
        clatMean: 10,
        latMean: 12,
        percentiles: [10, 20, 30, 40, 50],
      }),
    ].join('\n');
    const parsed = await parseText(text, 'some.terse');
    expect(parsed.format).toBe('fio');
    const run = parsed.runs[0] as FioRun;
    expect(run.rows.map((r) => [r.job, r.values.fio_write_bw])).toEqual([['ok', 2]]);
    expect(run.warnings).toEqual([{ line: 2, message: 'job "missing-dev" failed with error 2: left out' }]);
  });

  it("passes the caller's own error thrown from onRun as it is", async () => {
    const mine = new Error('the caller gave up');
    const text = fioJson({ jobs: [{ rw: 'read', bs: 4096, iodepth: 1, iops: 100 }] });
    const seen: Run[] = [];
    const parsing = parseStream([Buffer.from(text)], {
      source: 'x.json',
      onRun: (run) => {
        seen.push(run);
        throw mine;
      },
    });
    await expect(parsing).rejects.toBe(mine);
    expect(seen).toHaveLength(1);
  });
});
