/**
 * parallel.ts: a large log parsed in parts on worker threads must give what one
 * sequential pass gives (summaries to rounding, counts, lines, run boundaries).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { IostatRun, ParsedFile } from '../../../shared/model.ts';
import { parseFile } from '../../../shared/parsers/index.ts';
import { parseFileInParallel } from '../../../shared/parsers/parallel.ts';

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

function solarisLog(reports: number, devices: number, seed: number, between?: (report: number) => string | undefined): string {
  const random = prng(seed);
  const lines: string[] = ['iostat -xn 5'];
  for (let r = 0; r < reports; r++) {
    const extra = between?.(r);
    if (extra !== undefined) lines.push(extra);
    lines.push('                    extended device statistics');
    lines.push('    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device');
    for (let d = 0; d < devices; d++) {
      const v = () => (random() * 900).toFixed(1).padStart(6);
      lines.push(`${v()} ${v()} ${v()} ${v()}  0.${r % 10}  1.${d % 10} ${v()} ${v()}  ${String(r % 100).padStart(2)}  ${String(d % 100).padStart(2)} c0t${d}d0`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function linuxLog(reports: number, devices: number, seed: number): string {
  const random = prng(seed);
  const lines: string[] = ['Linux 5.15.0-91-generic (h1) \t01/15/2024 \t_x86_64_\t(8 CPU)', ''];
  for (let r = 0; r < reports; r++) {
    lines.push('avg-cpu:  %user   %nice %system %iowait  %steal   %idle', '           6.10    0.02    2.40    1.30    0.00   90.18', '');
    lines.push('Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz  aqu-sz  %util');
    for (let d = 0; d < devices; d++) {
      const v = () => (random() * 500).toFixed(2).padStart(8);
      lines.push(`sd${String.fromCharCode(97 + d)}         ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()} ${v()}`);
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
