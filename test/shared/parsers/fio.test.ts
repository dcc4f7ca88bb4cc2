/**
 * The fio style dispatcher (shared/parsers/fio.ts): each style told from its first
 * telling line, the block prefix that line carries taken off every line after it,
 * and the same records whether the output is bare or quoted in a comment.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../shared/parsers/errors.ts';
import type { FioJob } from '../../../shared/parsers/fio-record.ts';
import { fioStyleOf, parseFioChunks, parseFioText } from '../../../shared/parsers/fio.ts';
import { MAX_LINE_LENGTH } from '../../../shared/parsers/lines.ts';
import { fioFixtures } from '../../support/fio.ts';

const DIR = join(import.meta.dirname, '../../fixtures/fio');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');
const commented = (text: string, marker: string) =>
  text
    .split('\n')
    .map((line) => (line === '' ? marker.trimEnd() : `${marker}${line}`))
    .join('\n');

describe('fio styles', () => {
  it.each([
    ['json-fio3-randread-randwrite.json', 'json'],
    ['jsonplus-fio3-client-stats.json', 'json+'],
    ['terse-v3-randrw-percentiles.txt', 'terse'],
    ['terse-v5-randread.txt', 'terse'],
    ['terse-v2-fio20-randread-randrw.txt', 'terse'],
    ['normal-fio3-randrw-progress.txt', 'normal'],
    ['normal-fio2-randwrite-kbs.txt', 'normal'],
  ])('%s reads as %s', (name, style) => {
    expect(parseFioText(read(name), name).style).toBe(style);
  });

  it('tells a line of each style, and none from prose or an iostat header', () => {
    expect(fioStyleOf('  "fio version" : "fio-3.36",')).toBe('json');
    expect(fioStyleOf('3;fio-3.36;seq;0;0;1024;')).toBe('terse');
    expect(fioStyleOf('the output was 3;fio-3.36;seq;0;0;1024;')).toBe('terse');
    expect(fioStyleOf('seq: (g=0): rw=read, bs=(R) 128KiB-128KiB, ioengine=libaio, iodepth=4')).toBe('normal');
    expect(fioStyleOf('seq: (groupid=0, jobs=2): err= 0: pid=77: Mon Jan  6 10:00:00 2025')).toBe('normal');
    expect(fioStyleOf('device    r/s    w/s   kr/s   kw/s')).toBeUndefined();
    expect(fioStyleOf('we ran fio 3.36 on it; it was fast')).toBeUndefined();
    // Version 2 records name no fio version: only the whole record's shape tells them from other lists.
    expect(fioStyleOf(read('terse-v2-fio20-randread-randrw.txt').split('\n')[1]!)).toBe('terse');
    expect(fioStyleOf('2;seq;0;0;1024;')).toBeUndefined();
  });

  for (const [name, marker] of [
    ['normal-fio3-randrw-progress.txt', '# '],
    ['normal-fio2-randwrite-kbs.txt', '// '],
    ['terse-v3-randrw-percentiles.txt', '# '],
    ['terse-v2-fio20-randread-randrw.txt', '// '],
    ['json-fio3-randread-randwrite.json', ' * '],
  ] as const) {
    it(`${name} behind "${marker.trim()}" gives the records it gives bare`, () => {
      const bare = parseFioText(read(name), name);
      const quoted = parseFioText(commented(read(name), marker), name);
      expect(quoted.style).toBe(bare.style);
      expect(quoted.version).toBe(bare.version);
      expect(quoted.jobs.map(({ line: _line, ...job }) => job)).toEqual(
        bare.jobs.map(({ line: _line, ...job }) => job),
      );
    });
  }

  it('reads a terse record quoted after text in a comment', () => {
    const record = read('terse-v3-randrw-percentiles.txt').split('\n')[0]!;
    const text = `# Results of the run, output version ${record}\n# end\n`;
    const out = parseFioText(text, 'notes.rb');
    expect(out.style).toBe('terse');
    expect(out.jobs.map((j) => j.name)).toEqual(['randrw-8k-qd16']);
    expect(out.jobs[0]!.directions.map((d) => [d.direction, d.iops])).toEqual([
      ['read', 7000],
      ['write', expect.any(Number)],
    ]);
  });
});

async function* pieces(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

/** The output and jobs of `text` read in chunks of `size` bytes. */
async function chunked(text: string, size: number, source: string) {
  const jobs: FioJob[] = [];
  const out = await parseFioChunks(pieces(Buffer.from(text), size), { source, onJob: (j) => jobs.push(j) });
  return { ...out, jobs };
}

describe('fio from a stream of chunks', () => {
  it.each([
    ['jsonplus-fio3-client-stats.json', 7],
    ['terse-v3-jobs-commented.txt', 13],
    ['normal-fio3-randrw-progress.txt', 1],
  ])('%s cut into %i-byte chunks gives the jobs the whole text does, CRLF line ends and all', async (name, size) => {
    const text = read(name).replaceAll('\n', '\r\n');
    const whole = parseFioText(text, name);
    const jobs: FioJob[] = [];
    const streamed = await parseFioChunks(pieces(Buffer.from(text), size), {
      source: name,
      onJob: (j) => jobs.push(j),
    });
    expect(jobs).toEqual(whole.jobs);
    expect(streamed.style).toBe(whole.style);
    expect(streamed.lines).toBe(text.split('\r\n').length - (text.endsWith('\r\n') ? 1 : 0));
  });

  it('keeps a character split between two chunks', async () => {
    const record = read('terse-v3-randrw-percentiles.txt').split('\n')[0]!.replace('randrw-8k-qd16', 'débit-8k');
    const bytes = Buffer.from(`${record}\n`);
    const cut = bytes.indexOf(Buffer.from('é')) + 1;
    const jobs: FioJob[] = [];
    async function* two() {
      yield bytes.subarray(0, cut);
      yield bytes.subarray(cut);
    }
    await parseFioChunks(two(), { source: 'run.terse', onJob: (j) => jobs.push(j) });
    expect(jobs.map((j) => j.name)).toEqual(['débit-8k']);
  });

  for (const name of fioFixtures(/./)) {
    it(`${name} gives the same output whole and in 1-byte and 7-byte chunks, LF and CRLF`, async () => {
      for (const text of [read(name), read(name).replaceAll('\n', '\r\n')]) {
        const { jobs, ...whole } = parseFioText(text, name);
        for (const size of [1, 7]) {
          const { jobs: streamedJobs, lines, ...streamed } = await chunked(text, size, name);
          expect(streamedJobs).toEqual(jobs);
          expect(streamed).toEqual(whole);
          expect(lines).toBe(text.split('\n').length - (text.endsWith('\n') ? 1 : 0));
        }
      }
    });
  }
});

describe('fio progress redrawn with carriage returns', () => {
  const fio3 = read('normal-fio3-randrw-progress.txt');
  const REDRAWS =
    'Jobs: 1 (f=1): [r(1)][10.0%][r=40.1MiB/s][eta 00m:09s]\rJobs: 1 (f=1): [r(1)][100.0%][eta 00m:00s]\r';
  const lineOf = (text: string, start: string) => text.split('\n').findIndex((l) => l.startsWith(start)) + 1;

  /** The whole text's output, once its 1-byte chunks gave the same jobs. */
  async function bothWays(text: string, source: string) {
    const whole = parseFioText(text, source);
    expect((await chunked(text, 1, source)).jobs).toEqual(whole.jobs);
    return whole;
  }

  it('keeps a job line that follows a redraw on the same line: its jobs read, on that line', async () => {
    const glued = fio3.replace('[eta 00m:00s]\nrw70: (groupid=', '[eta 00m:00s]\rrw70: (groupid=');
    const [plain] = parseFioText(fio3).jobs;
    const [job] = (await bothWays(glued, 'glued.txt')).jobs;
    expect(job!.directions).toEqual(plain!.directions);
    expect(job!.line).toBe(plain!.line - 1);
    expect(job!.line).toBe(lineOf(glued, 'Jobs: 1 (f=1): [m(1)][100.0%]'));
  });

  it.each([
    ['json-fio3-randread-randwrite.json'],
    ['terse-v3-randrw-percentiles.txt'],
    ['terse-v2-fio20-randread-randrw.txt'],
    ['normal-fio3-randwrite-group-jobs4.txt'],
  ])('%s after redraws on its first line gives the jobs it gives bare, on the same lines', async (name) => {
    const bare = parseFioText(read(name), name);
    const redrawn = await bothWays(REDRAWS + read(name), name);
    expect(redrawn).toEqual(bare);
  });

  it('names the line fio wrote (counting LF only) in an error after redraws', async () => {
    const broken = fio3.replace('read: IOPS=10.5k,', 'read: IOPS=fast,');
    const errors: unknown[] = [];
    for (const parse of [() => parseFioText(broken), () => bothWays(broken, 'broken.txt')]) {
      try {
        await parse();
      } catch (error) {
        errors.push(error);
      }
    }
    expect(errors).toHaveLength(2);
    for (const error of errors) {
      expect(error).toBeInstanceOf(ParseError);
      expect((error as ParseError).line).toBe(lineOf(broken, '  read: IOPS=fast'));
    }
  });

  it('reads a run whose progress redraws run past the line limit together, each redraw short', async () => {
    const redraw = 'Jobs: 1 (f=1): [m(1)][50.0%][r=41.0MiB/s,w=17.5MiB/s][r=10.5k,w=4480 IOPS][eta 00m:15s]\r';
    const redraws = redraw.repeat(Math.ceil((2 * MAX_LINE_LENGTH) / redraw.length));
    const long = fio3.replace('Jobs: 1 (f=1): [m(1)][10.0%]', `${redraws}Jobs: 1 (f=1): [m(1)][10.0%]`);
    expect(long.split('\n').some((line) => line.length > MAX_LINE_LENGTH)).toBe(true);
    const { jobs } = await chunked(long, 4096, 'long.txt');
    expect(jobs).toEqual(parseFioText(fio3).jobs);
    expect(parseFioText(long).jobs).toEqual(jobs);
  });
});
