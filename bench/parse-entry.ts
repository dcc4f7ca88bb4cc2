/**
 * The benchdrop side of the parsing benchmark, bundled by bench/parse.ts into
 * bench/out/parse-entry.mjs and run as `node bench/out/parse-entry.mjs FILE`: plain
 * Node, no loader, so its peak RSS is the parser's and not tsx's.
 *
 * Parses FILE with parseFile and summaries only (keepSamples: false), the way the
 * CLI reads a large log: on every core (parallel.ts, its worker bundled beside this
 * file as parse-worker.mjs; BENCHDROP_SEQUENTIAL=1 keeps one thread), and prints
 * one JSON line per run and device with the mean (and count) of every canonical
 * metric, then a last line with totals and the peak RSS (VmHWM and
 * process.resourceUsage().maxRSS).
 */
import { statSync } from 'node:fs';
import { IOSTAT_METRICS } from '../shared/metrics.ts';
import type { Run } from '../shared/model.ts';
import { parseFile } from '../shared/parsers/index.ts';
import { fileArgument } from './file-argument.ts';
import { peakRss, type PeakRss } from './peak-rss.ts';

export interface DeviceMeans {
  run: number;
  device: string;
  sampleCount: number;
  count: Record<string, number>;
  mean: Record<string, number>;
}

export interface ParseTotals {
  done: true;
  format: string;
  dialect: string;
  lines: number;
  bytes: number;
  runs: number;
  /** Per run: the parser's layout name and number of reports. */
  dialects: string[];
  reports: number[];
  warnings: number;
  firstWarnings: string[];
  parseMs: number;
  /** Node flags of the measuring process: empty when no loader is involved. */
  execArgv: string[];
  /** Peak RSS of this process (see peak-rss.ts for why not maxRSS alone). */
  rss: PeakRss;
}

const file = fileArgument('parse-entry');

const out: string[] = [];
const reports: number[] = [];
const dialects: string[] = [];
let warnings = 0;
const firstWarnings: string[] = [];

function onRun(run: Run): void {
  if (run.format !== 'iostat') throw new Error(`expected iostat runs, got ${run.format}`);
  reports.push(run.reports);
  dialects.push(run.dialect);
  warnings += run.warnings.length;
  for (const w of run.warnings) if (firstWarnings.length < 5) firstWarnings.push(`line ${w.line}: ${w.message}`);
  for (const series of run.series) {
    const line: DeviceMeans = {
      run: run.index,
      device: series.device,
      sampleCount: series.sampleCount,
      count: {},
      mean: {},
    };
    for (const metric of IOSTAT_METRICS) {
      const summary = series.summary[metric];
      if (summary === undefined) continue;
      line.count[metric] = summary.count;
      line.mean[metric] = summary.mean;
    }
    out.push(JSON.stringify(line));
  }
}

const started = performance.now();
const parsed = await parseFile(file, {
  keepSamples: false,
  parallel: process.env['BENCHDROP_SEQUENTIAL'] ? false : {},
});
for (const run of parsed.runs) onRun(run);
const result = {
  format: parsed.format,
  dialect: parsed.format,
  lines: parsed.lines,
  bytes: statSync(file).size,
  runs: parsed.runs.length,
};
const parseMs = performance.now() - started;

const totals: ParseTotals = {
  done: true,
  format: result.format,
  dialect: result.dialect,
  lines: result.lines,
  bytes: result.bytes,
  runs: result.runs,
  dialects,
  reports,
  warnings,
  firstWarnings,
  parseMs,
  execArgv: process.execArgv,
  rss: peakRss(),
};
out.push(JSON.stringify(totals));
process.stdout.write(`${out.join('\n')}\n`);
