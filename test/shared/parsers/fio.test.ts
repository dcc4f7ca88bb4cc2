/**
 * The fio style dispatcher (shared/parsers/fio.ts): each style told from its first
 * telling line, the block prefix that line carries taken off every line after it,
 * and the same records whether the output is bare or quoted in a comment.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FioJob } from '../../../shared/parsers/fio-record.ts';
import { fioStyleOf, parseFioChunks, parseFioText } from '../../../shared/parsers/fio.ts';

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
    // Version 2 records name no fio version: nothing tells them from other semicolon lists.
    expect(fioStyleOf('2;seq;0;0;1024;')).toBeUndefined();
  });

  for (const [name, marker] of [
    ['normal-fio3-randrw-progress.txt', '# '],
    ['normal-fio2-randwrite-kbs.txt', '// '],
    ['terse-v3-randrw-percentiles.txt', '# '],
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

describe('fio from a stream of chunks', () => {
  async function* pieces(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
  }

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
});
