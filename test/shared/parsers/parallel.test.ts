/**
 * parallel.ts: a large log parsed in parts on worker threads must give what one
 * sequential pass gives (summaries to rounding, counts, lines, run boundaries).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { IostatRun, ParsedFile } from '../../../shared/model.ts';
import { parseFile } from '../../../shared/parsers/index.ts';
import { parseFileInParallel } from '../../../shared/parsers/parallel.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures');
const dir = mkdtempSync(join(tmpdir(), 'benchdrop-parallel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A deterministic pseudo-random stream, so every run of the test sees the same file. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function solarisLog(
  reports: number,
  devices: number,
  seed: number,
  between?: (report: number) => string | undefined,
): string {
  const random = prng(seed);
  const lines: string[] = ['iostat -xn 5'];
  for (let r = 0; r < reports; r++) {
    const extra = between?.(r);
    if (extra !== undefined) lines.push(extra);
    lines.push('                    extended device statistics');
    lines.push('    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device');
    for (let d = 0; d < devices; d++) {
      const v = () => (random() * 900).toFixed(1).padStart(6);
      lines.push(
        `${v()} ${v()} ${v()} ${v()}  0.${r % 10}  1.${d % 10} ${v()} ${v()}  ${String(r % 100).padStart(2)}  ${String(d % 100).padStart(2)} c0t${d}d0`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

function linuxLog(reports: number, devices: number, seed: number): string {
  const random = prng(seed);
  const lines: string[] = ['Linux 5.15.0-91-generic (h1) \t01/15/2024 \t_x86_64_\t(8 CPU)', ''];
  for (let r = 0; r < reports; r++) {
    lines.push(
      'avg-cpu:  %user   %nice %system %iowait  %steal   %idle',
      '           6.10    0.02    2.40    1.30    0.00   90.18',
      '',
    );
    lines.push(
      'Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz  aqu-sz  %util',
    );
    for (let d = 0; d < devices; d++) {
      const v = () => (random() * 500).toFixed(2).padStart(8);
      lines.push(
        `sd${String.fromCharCode(97 + d)}         ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()}`,
      );
    }
    lines.push('', '');
  }
  return lines.join('\n');
}

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function expectSame(parallel: ParsedFile, sequential: ParsedFile): void {
  expect(parallel.lines).toBe(sequential.lines);
  expect(parallel.runs.map((r) => [r.index, r.startLine, r.endLine, r.context, r.warnings])).toEqual(
    sequential.runs.map((r) => [r.index, r.startLine, r.endLine, r.context, r.warnings]),
  );
  parallel.runs.forEach((run, i) => {
    const seq = sequential.runs[i] as IostatRun;
    const par = run as IostatRun;
    expect(par.reports).toBe(seq.reports);
    expect(par.series.map((s) => [s.device, s.sampleCount])).toEqual(seq.series.map((s) => [s.device, s.sampleCount]));
    par.series.forEach((series, k) => {
      const expected = seq.series[k]!.summary;
      expect(Object.keys(series.summary).sort()).toEqual(Object.keys(expected).sort());
      for (const [metric, summary] of Object.entries(series.summary)) {
        const want = expected[metric as keyof typeof expected]!;
        expect(summary.count).toBe(want.count);
        expect(summary.min).toBe(want.min);
        expect(summary.max).toBe(want.max);
        expect(summary.mean).toBeCloseTo(want.mean, 9);
        expect(summary.stddev).toBeCloseTo(want.stddev, 6);
      }
    });
  });
}

async function both(path: string, workers: number): Promise<[ParsedFile, ParsedFile]> {
  const parallel = await parseFileInParallel(path, { workers, minBytes: 0 });
  expect(parallel, 'the file is cut into parts').toBeDefined();
  return [parallel!, await parseFile(path, { keepSamples: false, parallel: false })];
}

describe('parsing a file in parallel parts', () => {
  it('a Solaris -xn session cut in two equals one pass', async () => {
    const [parallel, sequential] = await both(write('solaris.txt', solarisLog(400, 6, 1)), 2);
    expectSame(parallel, sequential);
    expect((parallel.runs[0] as IostatRun).reports).toBe(400);
  });

  it('a Linux -x session with avg-cpu blocks cut in three equals one pass', async () => {
    const [parallel, sequential] = await both(write('linux.txt', linuxLog(300, 5, 2)), 3);
    expectSame(parallel, sequential);
  });

  it('commands between sessions are never cut away from the run they open', async () => {
    // Every 7th report is a new run with its own command: a cut must not fall right after one.
    const text = solarisLog(350, 4, 3, (r) => (r > 0 && r % 7 === 0 ? `tunefs -a ${r} /opt` : undefined));
    const [parallel, sequential] = await both(write('runs.txt', text), 3);
    expect(sequential.runs).toHaveLength(50);
    expectSame(parallel, sequential);
  });

  it('parseFile uses parts only for summaries of files above the threshold', async () => {
    const path = write('small.txt', solarisLog(20, 2, 4));
    expect(await parseFileInParallel(path, { workers: 2 })).toBeUndefined();
    const withSamples = await parseFile(path, { keepSamples: true, parallel: { minBytes: 0, workers: 2 } });
    expect((withSamples.runs[0] as IostatRun).series[0]!.samples).toHaveLength(20);
  });

  it('gzip input and non-iostat files are left to one pass', async () => {
    const diskperf = write('diskperf.txt', '# req_size  fwd_wt  fwd_rd\n       4096    2.84    5.96\n'.repeat(3));
    expect(await parseFileInParallel(diskperf, { workers: 2, minBytes: 0 })).toBeUndefined();
  });
});

/**
 * Cuts the fuzzer (test/support/fuzz/parsers.ts, target `iostat parallel`) found
 * to change the outcome: each file below was parsed in parts into something one
 * pass does not give. Now the cut is not made, or the parts are found not to join
 * and the file is parsed in one piece: either way, what one pass gives.
 */
describe('cuts that would change the outcome are not made', () => {
  const TITLE = '                    extended device statistics';
  const HEADER = '    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device';
  const row = (device: string, r: number) =>
    `  ${r.toFixed(1)}    2.0   12.0   16.0  0.0  0.0    0.0    1.2   0   1 ${device}`;
  const reports = (n: number, devices = ['c0t0d0', 'c0t1d0']) =>
    Array.from({ length: n }, (_, r) => [TITLE, HEADER, ...devices.map((d) => row(d, r))].join('\n')).join('\n');

  /** `a` then `b`, `b` padded with blank lines so that the middle of the file falls just before it: two parts are cut at `b` if anywhere. */
  function cutBefore(a: string, b: string): string {
    const head = `${a}\n`;
    const pad = head.length - 20 - b.length;
    if (pad < 0) throw new Error('a must be longer than b');
    return head + b + '\n'.repeat(pad);
  }

  async function asOnePass(name: string, text: string, workers = 2): Promise<ParsedFile | undefined> {
    const path = write(name, text);
    const inParts = await parseFileInParallel(path, { workers, minBytes: 0, inThisThread: true });
    if (inParts !== undefined) expectSame(inParts, await parseFile(path, { keepSamples: false, parallel: false }));
    return inParts;
  }

  it('the control: the same log without the damage is cut right there', async () => {
    const parts = await asOnePass(
      'control.txt',
      cutBefore(`iostat -xn 5 60\n${reports(30)}\n${TITLE}`, `${HEADER}\n${row('c0t0d0', 1)}\n${reports(20)}`),
    );
    expect(parts).toBeDefined();
  });

  it('a command, then a line of numbers and words, before the header at the cut: a new run opens there', async () => {
    const text = cutBefore(
      `iostat -xn 5 60\n${reports(30)}\ntunefs -a 8 /opt\n40.62 %b %b\n${TITLE}`,
      `${HEADER}\n${row('c0t0d0', 1)}\n${reports(20)}`,
    );
    expect(await asOnePass('command.txt', text)).toBeUndefined();
    expect((await parseFile(write('command.txt', text), { keepSamples: false, parallel: false })).runs).toHaveLength(2);
  });

  it('prose between the header at the cut and its first row (one pass takes it for prose inside the table)', async () => {
    const text = cutBefore(
      `iostat -xn 5 60\n${reports(30)}\n${TITLE}`,
      `${HEADER}\nsome words here\n${row('c0t0d0', 1)}\niostat -xn 5 2\n${reports(2)}`,
    );
    // Cut at a later header instead, and the parts agree with one pass.
    expect(await asOnePass('prose.txt', text)).toBeDefined();
  });

  it('a lone CR in the row after the header at the cut (the line splitter makes it two lines)', async () => {
    const text = cutBefore(
      `iostat -xn 5 60\n${reports(30)}\n${TITLE}`,
      `${HEADER}\n   63.\r${row('c0t0d0', 1)}\n${row('c0t1d0', 2)}\niostat -xn 5 2\n${reports(2)}`,
    );
    expect(await asOnePass('cr.txt', text)).toBeDefined();
  });

  it('--pretty with the first header line above the banner: that header only adds a group to the report before the cut', async () => {
    const lines = readFileSync(join(FIXTURES, 'linux/linux-sysstat-12.5.2-x-pretty.txt'), 'utf8').split('\n');
    [lines[0], lines[2]] = [lines[2]!, lines[0]!];
    expect(await asOnePass('pretty.txt', lines.join('\n'))).toBeUndefined();
  });

  it('a run whose read kB/s came from rMB/s before the cut: rkB/s after it feeds no metric in one pass', async () => {
    const kB = 'Device            r/s     rkB/s     w/s     wkB/s';
    const MB = 'Device            r/s     rMB/s     w/s     wMB/s';
    const before = Array.from(
      { length: 30 },
      (_, r) => `${MB}\nsda              ${(r + 1).toFixed(2)}      0.50    2.00      0.25\n`,
    ).join('\n');
    const after = Array.from(
      { length: 20 },
      (_, r) => `${kB}\nsda              ${(r + 1).toFixed(2)}    100.00    2.00     50.00\n`,
    ).join('\n');
    const text = cutBefore(`${kB}\nLinux 5.15.0-91-generic (h) \t01/15/2024 \t_x86_64_\t(4 CPU)\n\n${before}`, after);
    expect(await asOnePass('units.txt', text)).toBeUndefined();
  });

  it('a device after the cut that one pass lists under the name of another before it', async () => {
    // `sd30` and `sd30` followed by a no-break space: one name in a series label (labels.ts nativeInLabel).
    const text = cutBefore(
      `iostat -xn 5 60\n${reports(30, ['sd30\u00a0', 'sd31'])}\n${TITLE}`,
      `${HEADER}\n${row('sd31', 1)}\n${reports(20, ['sd31', 'sd30'])}`,
    );
    expect(await asOnePass('listed.txt', text)).toBeUndefined();
  });
});
