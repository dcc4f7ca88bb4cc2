/**
 * fio json and json+ (shared/parsers/fio-json.ts) through the style-detecting
 * parser (shared/parsers/fio.ts): every fixture exact, the document found behind
 * stderr lines, in prose, in a comment; cut-short and wrong documents fail on the line.
 */
import { describe, expect, it } from 'vitest';
import { parseFioText } from '../../../shared/parsers/fio.ts';
import { describeFioFixtures, fioFailure, readFio as read } from '../../support/fio.ts';

const failure = (text: string) => fioFailure(text, 'run.json');

describeFioFixtures('fio json fixtures', /^json/, 4, 'fio 2.x, 3.x, json+ and client runs');

describe('fio json', () => {
  const base = read('json-fio3-randread-randwrite.json');

  it('reads the same jobs behind a comment prefix as bare', () => {
    const wrapped = base
      .split('\n')
      .map((l) => `// ${l}`)
      .join('\n');
    const bare = parseFioText(base);
    const commented = parseFioText(wrapped);
    expect(commented.jobs.map((j) => j.directions)).toEqual(bare.jobs.map((j) => j.directions));
    expect(commented.jobs.map((j) => j.options)).toEqual(bare.jobs.map((j) => j.options));
  });

  it('reads a document opened after other text on its line (a raw string)', () => {
    const text = `const output = \`${base.trimEnd()}\`\n`;
    expect(parseFioText(text).jobs.map((j) => j.name)).toEqual(['rr-4k-qd32', 'rw-4k-qd32']);
  });

  it('reads two documents in one file in order', () => {
    const twice = parseFioText(`${base}\n${read('json-fio2-randwrite-stderr.json')}`);
    expect(twice.jobs.map((j) => j.name)).toEqual(['rr-4k-qd32', 'rw-4k-qd32', 'randwrite-8k']);
    expect(twice.version).toBe('fio-3.35');
  });

  it('converts ns to µs and KiB to bytes by the layout of the version', () => {
    const fio3 = parseFioText(base).jobs[0]!.directions[0]!;
    expect(fio3.clatPercentilesUs.p99).toBe(1351.68);
    expect(fio3.ioBytes).toBe(4_915_200_000);
    const fio2 = parseFioText(read('json-fio2-randwrite-stderr.json')).jobs[0]!.directions[0]!;
    expect(fio2.clatPercentilesUs.p99).toBe(2320);
    expect(fio2.ioBytes).toBe(1_228_800 * 1024);
    expect(fio2.bandwidthBytesPerSec).toBe(20_480 * 1024);
  });

  it('fails on the last line when the input stops inside a job, naming where the job began', () => {
    const lines = base.split('\n').slice(0, 60);
    const error = failure(lines.join('\n'));
    expect(error.line).toBe(60);
    expect(error.problem).toMatch(/inside the job that starts on line 15/);
  });

  it('fails on the line that is not JSON', () => {
    const lines = base.split('\n');
    const at = lines.findIndex((l) => l.includes('"iops" : 40000.000000'));
    lines[at] = lines[at]!.replace(',', ',,');
    const error = failure(lines.join('\n'));
    expect(error.line).toBe(at + 1);
    expect(error.problem).toMatch(/not valid JSON/);
  });

  it('fails on a figure that is not a number, naming it', () => {
    const error = failure(base.replace('"iops" : 40000.000000', '"iops" : "fast"'));
    expect(error.problem).toMatch(/read\.iops is "fast", not a number/);
    expect(error.line).toBe(15);
  });

  it('fails on a document without jobs, and on text without fio output', () => {
    expect(failure('{ "fio version" : "fio-3.36", "jobs" : [] }\n').problem).toBe('a fio JSON document with no jobs');
    expect(failure('hello\nworld\n').problem).toBe('no fio output');
  });
});
