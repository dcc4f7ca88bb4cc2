/**
 * A large iostat log parsed on every core: the file is cut at report boundaries
 * into one part per worker thread, each part is parsed for summaries, and the run
 * a cut went through is stitched back together (sample counts add up, column
 * summaries merge, the since-boot report of the first part still counts as such).
 * Used by parseFile when only summaries are wanted; results equal a sequential
 * parse but for floating-point rounding in the merged summaries.
 *
 * A cut goes right before a repeat of the file's first header line whose preceding
 * lines are all part of the same session (rows, blank, title, timestamp, avg-cpu),
 * so the second part's first run is always the first part's last run continued.
 */
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { IostatRun, IostatSeries, MetricSummary, ParsedFile, Run } from '../model.ts';
import type { IostatMetric } from '../metrics.ts';
import { commandFromLine } from './context.ts';
import { detectLine } from './detect.ts';
import { ParseError } from './errors.ts';
import { parseLinuxBanner } from './iostat-linux.ts';
import { mergeSummaries } from './summary.ts';
import { parseTimestamp } from './timestamps.ts';
import { parsePart, type PartRequest, type PartResult } from './parse-worker.ts';

export interface ParallelOptions {
  source?: string;
  /** Worker threads to use (default: the machine's parallelism, at most 8). */
  workers?: number;
  /** Files smaller than this are parsed in one piece (default 32 MiB). */
  minBytes?: number;
}

export const PARALLEL_MIN_BYTES = 32 * 1024 * 1024;
/** How far past each nominal cut to look for a report boundary (a report of 100 devices is ~20 KiB). */
const SEARCH_WINDOW = 1024 * 1024;
const HEAD_BYTES = 256 * 1024;

/**
 * Parse a file in parallel parts, or return undefined when it is not worth it or
 * not possible (small file, one core, gzip, not a text iostat log, no safe cut).
 */
export async function parseFileInParallel(path: string, options: ParallelOptions = {}): Promise<ParsedFile | undefined> {
  const workers = Math.min(options.workers ?? availableParallelism(), 8);
  const file = await open(path, 'r');
  let cuts: number[];
  let size: number;
  try {
    size = (await file.stat()).size;
    if (workers < 2 || size < (options.minBytes ?? PARALLEL_MIN_BYTES)) return undefined;
    const anchor = await firstHeaderLine(file);
    if (anchor === undefined) return undefined;
    cuts = await findCuts(file, size, workers, anchor);
  } finally {
    await file.close();
  }
  if (cuts.length === 0) return undefined;
  const source = options.source ?? path;
  const bounds = [0, ...cuts, size];
  // The first part is parsed right here while workers take the others: one thread fewer to start.
  const parts = await Promise.all(
    bounds.slice(0, -1).map((start, k) => {
      const request: PartRequest = { benchdropPart: true, path, source, start, end: bounds[k + 1]!, continuation: k > 0 };
      return k === 0 ? parsePart(request) : runPart(request);
    }),
  );
  return stitch(source, parts);
}

/** The bytes of the first header line, if the file opens as a text iostat log. */
async function firstHeaderLine(file: Awaited<ReturnType<typeof open>>): Promise<Buffer | undefined> {
  const head = Buffer.allocUnsafe(HEAD_BYTES);
  const { bytesRead } = await file.read(head, 0, HEAD_BYTES, 0);
  if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return undefined;
  let from = 0;
  while (from < bytesRead) {
    const lf = head.indexOf(10, from);
    if (lf === -1 || lf >= bytesRead) return undefined;
    const line = head.subarray(from, head[lf - 1] === 13 ? lf - 1 : lf);
    const text = line.toString('utf8');
    const format = detectLine(text);
    // Only text iostat reports are cut; sysstat JSON and diskperf files are small.
    if (format !== undefined && format !== 'iostat') return undefined;
    if (format === 'iostat' && isHeader(text)) return Buffer.from(line);
    from = lf + 1;
  }
  return undefined;
}

function isHeader(text: string): boolean {
  const trimmed = text.trim();
  return !/extended\s+device\s+statistics/i.test(trimmed) && parseLinuxBanner(trimmed) === undefined;
}

async function findCuts(file: Awaited<ReturnType<typeof open>>, size: number, workers: number, anchor: Buffer): Promise<number[]> {
  const cuts: number[] = [];
  const needle = Buffer.concat([Buffer.from('\n'), anchor]);
  for (let k = 1; k < workers; k++) {
    const nominal = Math.floor((size * k) / workers);
    if (cuts.length > 0 && nominal <= cuts[cuts.length - 1]!) continue;
    // Read a little before the nominal cut too, to check the lines preceding a candidate.
    const windowStart = Math.max(0, nominal - 64 * 1024);
    const window = Buffer.allocUnsafe(Math.min(SEARCH_WINDOW, size - windowStart));
    const { bytesRead } = await file.read(window, 0, window.length, windowStart);
    const view = window.subarray(0, bytesRead);
    for (let at = view.indexOf(needle, nominal - windowStart); at !== -1; at = view.indexOf(needle, at + 1)) {
      const lineStart = at + 1;
      if (startsSameSession(view, lineStart)) {
        cuts.push(windowStart + lineStart);
        break;
      }
    }
  }
  return cuts;
}

/** The lines before `lineStart` back to the last data row belong to one session: nothing there opens a new run. */
function startsSameSession(view: Buffer, lineStart: number): boolean {
  let end = lineStart - 1;
  for (let lines = 0; lines < 40 && end > 0; lines++) {
    const start = view.lastIndexOf(10, end - 1) + 1;
    if (start === 0 && view.lastIndexOf(10, end - 1) === -1) return false;
    const text = view.toString('utf8', start, end).trim();
    end = start - 1;
    if (text.length === 0 || /extended\s+device\s+statistics/i.test(text) || parseTimestamp(text) !== undefined || text.startsWith('avg-cpu:')) continue;
    if (commandFromLine(text) !== undefined || parseLinuxBanner(text) !== undefined) return false;
    const tokens = text.split(/\s+/);
    const numeric = tokens.filter((t) => /^-?\d+(?:[.,]\d+)?$/.test(t)).length;
    // A device row (or an avg-cpu row): the session goes on.
    if (tokens.length >= 3 && numeric >= tokens.length - 2) return true;
    return false;
  }
  return false;
}

function workerScript(): { script: string | URL; eval: boolean } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) {
    // Bundled (esbuild): the worker is bundled beside this module as parse-worker.mjs.
    return { script: new URL('./parse-worker.mjs', here), eval: false };
  }
  // Running from TypeScript source: the worker registers tsx before loading the parser.
  const tsx = import.meta.resolve?.('tsx/esm/api') ?? pathToFileURL(createRequire(here).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const worker = new URL('./parse-worker.ts', here).href;
  return { script: `import(${JSON.stringify(tsx)}).then((api) => { (api.register ?? api.default.register)(); return import(${JSON.stringify(worker)}); })`, eval: true };
}

function runPart(request: PartRequest): Promise<PartResult> {
  const { script, eval: isEval } = workerScript();
  return new Promise((resolve, reject) => {
    const worker = new Worker(script, { eval: isEval, workerData: request });
    worker.once('message', (result: PartResult) => resolve(result));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`parse worker for bytes ${request.start}-${request.end} exited with code ${code} before answering`)));
  });
}

/** Join the parts: line numbers and run indexes offset, the cut runs merged. */
function stitch(source: string, parts: PartResult[]): ParsedFile {
  const runs: Run[] = [];
  let lineOffset = 0;
  let lines = 0;
  for (const [k, part] of parts.entries()) {
    if (!part.ok) {
      if (part.parseError) throw new ParseError({ source, line: part.parseError.line === 0 ? 0 : part.parseError.line + lineOffset, problem: part.parseError.problem, expected: part.parseError.expected });
      throw new Error(part.message);
    }
    const shifted = part.runs.map((run) => shiftLines(run, lineOffset));
    if (k > 0 && runs.length > 0 && shifted.length > 0) {
      runs[runs.length - 1] = mergeRuns(runs[runs.length - 1] as IostatRun, shifted.shift() as IostatRun);
    }
    runs.push(...shifted);
    lineOffset += part.lines;
    lines += part.lines;
  }
  runs.forEach((run, index) => (run.index = index));
  return { source, format: 'iostat', runs, lines };
}

function shiftLines(run: Run, offset: number): Run {
  if (offset === 0) return run;
  return { ...run, startLine: run.startLine + offset, endLine: run.endLine + offset, warnings: run.warnings.map((w) => ({ ...w, line: w.line + offset })) } as Run;
}

/** The run a cut went through, from its two halves. */
function mergeRuns(a: IostatRun, b: IostatRun): IostatRun {
  const columns = [...a.columns, ...b.columns.filter((c) => !a.columns.some((x) => x.name === c.name))];
  const series = new Map<string, IostatSeries>();
  for (const s of a.series) {
    // With one report, a's summaries are of its since-boot report: the merged run has more, so they go.
    series.set(s.device, { ...s, summary: a.reports > 1 ? s.summary : {} });
  }
  for (const s of b.series) {
    const before = series.get(s.device);
    if (before === undefined) {
      series.set(s.device, s);
      continue;
    }
    const summary: Partial<Record<IostatMetric, MetricSummary>> = { ...before.summary };
    for (const [metric, value] of Object.entries(s.summary) as [IostatMetric, MetricSummary][]) {
      const existing = summary[metric];
      summary[metric] = existing === undefined ? value : mergeSummaries([existing, value]);
    }
    const merged: IostatSeries = { ...before, sampleCount: before.sampleCount + s.sampleCount, summary };
    if (s.mount !== undefined) merged.mount = s.mount;
    series.set(s.device, merged);
  }
  return { ...a, endLine: b.endLine, warnings: [...a.warnings, ...b.warnings], columns, reports: a.reports + b.reports, series: [...series.values()] };
}
