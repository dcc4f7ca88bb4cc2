/**
 * parseStream on fio output (driver.ts): told from the other formats by its first line
 * that shows a format, read with fio's own line rules, its runs through onRun. Errors
 * keep their kind as for the logs: the input's own pass as they are, the caller's from
 * onRun too, a bug of the parser is an InternalParseError. The format is told without
 * reading on: a source that waits for the parser's first run before its last chunk
 * does not hang.
 */
import { describe, expect, it } from 'vitest';
import { fioJson } from '../../../harness/fio-output.ts';
import { FormatSniffer } from '../../../shared/parsers/driver.ts';
import { isInternalParseError, parseStream, parseText } from '../../../shared/parsers/index.ts';
import type { Run } from '../../../shared/model.ts';

const OUTPUT = fioJson({
  jobs: [
    { rw: 'randread', bs: 4096, iodepth: 1, iops: 9000 },
    { rw: 'randwrite', bs: 4096, iodepth: 1, iops: 7000 },
  ],
});

const normal = [
  'randread: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=1',
  'fio-3.36',
  'Starting 1 process',
  'randread: (groupid=0, jobs=1): err= 0: pid=4242: Tue Dec  3 10:00:00 2024',
  '  read: IOPS=9000, BW=35.2MiB/s (36.9MB/s)(1055MiB/30001msec)',
  '',
].join('\n');

describe('parseStream on fio output', () => {
  it('json after lines of stderr is fio: one run, its points', async () => {
    const parsed = await parseText(`fio: some warning\n${OUTPUT}`, 'x.json');
    expect(parsed.format).toBe('fio');
    const run = parsed.runs[0] as Extract<Run, { format: 'fio' }>;
    expect(run.dialect).toBe('fio-json');
    expect(run.rows.map((r) => r.point)).toEqual([
      { rw: 'randread', bs: 4096, iodepth: 1, numjobs: 1 },
      { rw: 'randwrite', bs: 4096, iodepth: 1, numjobs: 1 },
    ]);
    expect(run.rows[0]!.values.fio_read_iops).toBe(9000);
  });

  it('the normal report is fio, its job line counted from 1', async () => {
    const parsed = await parseText(normal, 'x.txt');
    expect(parsed.format).toBe('fio');
    const run = parsed.runs[0] as Extract<Run, { format: 'fio' }>;
    expect(run.rows[0]).toMatchObject({ line: 4, point: { rw: 'randread', bs: 4096, iodepth: 1 } });
  });

  it('an iostat log stays iostat though a later line names fio', async () => {
    const log = [
      'extended device statistics',
      '    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device',
      '    0.0   10.0    0.0   80.0  0.0  0.1    0.0    5.0   0   5 c0t0d0',
      '# then: 3;fio-3.36;job;0;0;...',
      '',
    ].join('\n');
    expect((await parseText(log, 'io.txt')).format).toBe('iostat');
  });

  it("an error of reading the input passes as it is, after fio's first chunk", async () => {
    const broken = new Error('connection reset');
    async function* chunks() {
      yield Buffer.from(OUTPUT.slice(0, 500));
      throw broken;
    }
    await expect(parseStream(chunks(), { source: 'x.json', onRun: () => {} })).rejects.toBe(broken);
  });

  it("the caller's error from onRun passes as it is; its bug is an internal error", async () => {
    const mine = new Error('store is full');
    await expect(
      parseStream([Buffer.from(OUTPUT)], {
        source: 'x.json',
        onRun: () => {
          throw mine;
        },
      }),
    ).rejects.toBe(mine);
    const bug = await parseStream([Buffer.from(OUTPUT)], {
      source: 'x.json',
      onRun: () => {
        throw new TypeError('x is undefined');
      },
    }).catch((error: unknown) => error);
    expect(isInternalParseError(bug)).toBe(true);
  });

  it('tells the format from the first chunk: a source holding its last chunk back does not hang', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const lines = OUTPUT.split('\n');
    const head = `${lines.slice(0, 10).join('\n')}\n`;
    let asked = 0;
    async function* chunks() {
      yield Buffer.from(head);
      asked++;
      // Only once parsing is under way would a slow source go on: here, at once.
      setTimeout(release, 10);
      await held;
      yield Buffer.from(OUTPUT.slice(head.length));
    }
    const parsed = await parseStream(chunks(), { source: 'x.json', onRun: () => {} });
    expect(parsed).toMatchObject({ format: 'fio', runs: 1 });
    expect(asked).toBe(1);
  });
});

describe('telling fio from the logs (FormatSniffer)', () => {
  it('looks at each line once, however the bytes are cut: one-byte chunks cost no more', () => {
    const text = `${'prose before the log\r\n'.repeat(1500)}# req_size  fwd_wt  fwd_rd\n`;
    const sniffer = new FormatSniffer();
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i++) sniffer.push(bytes.subarray(i, i + 1));
    expect(sniffer.fio).toBe(false);
    expect(sniffer.lines).toBe(1501);
  });

  it('a line with no end yet is looked at when the input ends', () => {
    const sniffer = new FormatSniffer();
    for (const piece of ['{ "fio ', 'version" : "fio-3.36"']) sniffer.push(Buffer.from(piece));
    expect(sniffer.fio).toBeUndefined();
    expect(sniffer.end()).toBe(true);
    expect(sniffer.lines).toBe(1);
  });
});

describe('damaged fio output (found by the parser fuzz)', () => {
  it('a timestamp that is no date dates nothing, instead of an internal error', async () => {
    const damaged = OUTPUT.replace(/"timestamp": \d+/, '"timestamp": 1.7976931348623157e308');
    expect(damaged).not.toBe(OUTPUT);
    const run = (await parseText(damaged, 'x.json')).runs[0] as Extract<Run, { format: 'fio' }>;
    expect(run.meta.time).toBeUndefined();
    expect(run.rows).toHaveLength(2);
  });

  it('keeps 100 warnings of a run and counts the rest, as every parser does', async () => {
    const failed = fioJson({ jobs: [{ rw: 'randread', bs: 4096, iodepth: 1, iops: 1 }] });
    const job = failed.slice(failed.indexOf('{', failed.indexOf('"jobs"')), failed.lastIndexOf(']'));
    const broken = job.trimEnd().replace('"error": 0', '"error": 5');
    const many = OUTPUT.replace('"jobs": [', `"jobs": [${`${broken},`.repeat(150)}`);
    const run = (await parseText(many, 'x.json')).runs[0]!;
    expect(run.warnings).toHaveLength(101);
    expect(run.warnings[0]!.message).toMatch(/failed with error 5: left out$/);
    expect(run.warnings[100]!.message).toBe('50 more warnings not shown');
  });
});
