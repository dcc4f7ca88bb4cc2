/**
 * A large iostat log parsed on every core: the file is cut at report boundaries
 * into one part per worker thread, each part is parsed for summaries, and the run
 * a cut went through is stitched back together (sample counts add up, column
 * summaries merge, the since-boot report of the first part still counts as such).
 * Used by parseFile when only summaries are wanted; results equal a sequential
 * parse but for floating-point rounding in the merged summaries.
 *
 * A cut goes right before a repeat of the file's first header line whose preceding
 * lines are all part of the same session (rows, blank, title, timestamp, avg-cpu)
 * and whose next line is a device row under it, so the second part's first run is
 * the first part's last run continued, with rows from its first report on.
 *
 * The parallel parse never changes the outcome: when a part meets a ParseError,
 * or the parts do not join (the part before a cut must end inside an iostat run,
 * in a report that the header at the cut ends, as its parser says; the part after
 * it must begin with that run, reading its columns and devices as one pass would),
 * the file is parsed again in one piece, and that parse has the last word. A bug
 * met in any part is an InternalParseError, its line counted in the whole file.
 */
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { IostatRun, IostatSeries, MetricSummary, ParsedFile, Run } from '../model.ts';
import type { IostatMetric } from '../metrics.ts';
import { nativeInLabel } from '../labels.ts';
import { commandFromLine } from './context.ts';
import { detectLine } from './detect.ts';
import { InternalParseError, isInternalParseError, isParseError } from './errors.ts';
import { freebsdIostat } from './iostat-freebsd.ts';
import type { TableLayout } from './iostat-layout.ts';
import { linuxIostat, parseLinuxBanner } from './iostat-linux.ts';
import { deviceProblem, MAX_COLUMNS } from './iostat-run.ts';
import { solarisIostat } from './iostat-solaris.ts';
import { cleanLine, decodeLine } from './lines.ts';
import { MAX_VALUE, parseIostatNumber } from './numbers.ts';
import { mergeSummaries } from './summary.ts';
import { parseTimestamp } from './timestamps.ts';
import { isSource, siblingModule } from '../module-paths.ts';
import { errorOfPart, parsePart, type PartRequest, type PartResult } from './parse-worker.ts';

export interface ParallelOptions {
  source?: string;
  /** Worker threads to use (default: the machine's parallelism, at most 8). */
  workers?: number;
  /** Files smaller than this are parsed in one piece (default 32 MiB). */
  minBytes?: number;
  /** Parse the parts one after another in this thread: the cutting and stitching alone, without worker threads (tests). */
  inThisThread?: boolean;
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
  let layout: TableLayout;
  try {
    size = (await file.stat()).size;
    if (workers < 2 || size < (options.minBytes ?? PARALLEL_MIN_BYTES)) return undefined;
    const anchor = await firstHeaderLine(file);
    const anchorLayout = anchor === undefined ? undefined : layoutOf(anchor);
    if (anchor === undefined || anchorLayout === undefined) return undefined;
    layout = anchorLayout;
    cuts = await findCuts(file, size, workers, anchor, layout);
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
      return k === 0 || options.inThisThread === true ? parsePart(request) : runPart(request);
    }),
  );
  return stitch(source, parts, layout.columns.map((c) => c.name));
}

/**
 * The bytes of the first header line, if the file opens as a text iostat log.
 * Lines are read as the line splitter hands them to format detection (decoded,
 * quoting removed), so both see the same format; files whose lines it would split
 * otherwise (UTF-16, lone CR line ends) are not cut.
 */
async function firstHeaderLine(file: Awaited<ReturnType<typeof open>>): Promise<Buffer | undefined> {
  const head = Buffer.allocUnsafe(HEAD_BYTES);
  const { bytesRead } = await file.read(head, 0, HEAD_BYTES, 0);
  if (bytesRead >= 2 && ((head[0] === 0x1f && head[1] === 0x8b) || (head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) return undefined;
  let from = 0;
  while (from < bytesRead) {
    const lf = head.indexOf(10, from);
    if (lf === -1 || lf >= bytesRead) return undefined;
    const text = lineText(head, from, lf);
    if (text === undefined) return undefined;
    const format = detectLine(text);
    // Only text iostat reports are cut; sysstat JSON and diskperf files are small.
    if (format !== undefined && format !== 'iostat') return undefined;
    if (format === 'iostat' && isHeader(text)) return Buffer.from(head.subarray(from, head[lf - 1] === 13 ? lf - 1 : lf));
    from = lf + 1;
  }
  return undefined;
}

/** The table a header line announces, read as the iostat parser reads it (same dialects, same order). */
function layoutOf(header: Buffer): TableLayout | undefined {
  const tokens = cleanLine(decodeLine(header, 0, header.length)).trim().split(/\s+/);
  for (const dialect of [solarisIostat, freebsdIostat, linuxIostat]) {
    const layout = dialect.matchHeader(tokens);
    if (layout !== undefined) return layout;
  }
  return undefined;
}

/**
 * Whether the line starting at `lineStart` is the anchor itself (nothing more on
 * it) and the next one a device row the parser takes under it.
 */
function rowFollows(view: Buffer, lineStart: number, anchor: Buffer, layout: TableLayout): boolean {
  let next = lineStart + anchor.length;
  if (view[next] === 13) next++;
  if (view[next] !== 10) return false;
  const lf = view.indexOf(10, next + 1);
  const line = lf === -1 ? undefined : lineText(view, next + 1, lf);
  return line !== undefined && fitsRow(line.split(/\s+/), layout);
}

/**
 * The line [start, lf) as the line splitter hands it on (decoded, quoting
 * removed), trimmed; undefined if a lone CR makes it two lines there.
 */
function lineText(view: Buffer, start: number, lf: number): string | undefined {
  const end = view[lf - 1] === 13 ? lf - 1 : lf;
  if (view.subarray(start, end).includes(13)) return undefined;
  return cleanLine(decodeLine(view, start, end)).trim();
}

/**
 * A device row the parser takes under this header: a device name it keeps and a
 * valid number for every column. Rows with a mount point or tty/cpu values do not
 * count: fewer cuts, never a wrong one.
 */
function fitsRow(tokens: readonly string[], layout: TableLayout): boolean {
  const width = layout.columns.length;
  if (tokens.length !== width + 1) return false;
  const deviceAt = layout.deviceAt === 'first' ? 0 : width;
  const device = tokens[deviceAt]!;
  if (!Number.isNaN(parseIostatNumber(device)) || deviceProblem(device) !== undefined) return false;
  return tokens.every((token, i) => {
    const value = parseIostatNumber(token);
    return i === deviceAt || (value >= 0 && value < MAX_VALUE);
  });
}

function isHeader(text: string): boolean {
  const trimmed = text.trim();
  return !/extended\s+device\s+statistics/i.test(trimmed) && parseLinuxBanner(trimmed) === undefined;
}

async function findCuts(file: Awaited<ReturnType<typeof open>>, size: number, workers: number, anchor: Buffer, layout: TableLayout): Promise<number[]> {
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
      if (rowFollows(view, lineStart, anchor, layout) && startsSameSession(view, lineStart, layout)) {
        cuts.push(windowStart + lineStart);
        break;
      }
    }
  }
  return cuts;
}

/** The lines before `lineStart` back to the last data row belong to one session: nothing there opens a new run. */
function startsSameSession(view: Buffer, lineStart: number, layout: TableLayout): boolean {
  let end = lineStart - 1;
  for (let lines = 0; lines < 40 && end > 0; lines++) {
    const start = view.lastIndexOf(10, end - 1) + 1;
    if (start === 0 && view.lastIndexOf(10, end - 1) === -1) return false;
    const text = lineText(view, start, end);
    if (text === undefined) return false;
    end = start - 1;
    if (text.length === 0 || /extended\s+device\s+statistics/i.test(text) || parseTimestamp(text) !== undefined || text.startsWith('avg-cpu:')) continue;
    const tokens = text.split(/\s+/);
    // A row of the header is a row, even when it reads like a command (`ada0 3 11 ...`).
    if (fitsRow(tokens, layout)) return true;
    if (commandFromLine(text) !== undefined || parseLinuxBanner(text) !== undefined) return false;
    const numeric = tokens.filter((t) => /^-?\d+(?:[.,]\d+)?$/.test(t)).length;
    // A device row (or an avg-cpu row): the session goes on.
    if (tokens.length >= 3 && numeric >= tokens.length - 2) return true;
    return false;
  }
  return false;
}

function workerScript(): { script: string | URL; eval: boolean } {
  const worker = siblingModule(import.meta.url, './parse-worker');
  if (!isSource(import.meta.url)) return { script: worker, eval: false };
  // Running from TypeScript source: the worker registers tsx before loading the parser.
  const here = import.meta.url;
  const tsx = import.meta.resolve?.('tsx/esm/api') ?? pathToFileURL(createRequire(here).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  return { script: `import(${JSON.stringify(tsx)}).then((api) => { (api.register ?? api.default.register)(); return import(${JSON.stringify(worker.href)}); })`, eval: true };
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

/**
 * Join the parts: line numbers and run indexes offset, the cut runs merged.
 * Undefined when the file is better parsed in one piece (see the top of this file).
 */
function stitch(source: string, parts: PartResult[], anchorColumns: readonly string[]): ParsedFile | undefined {
  const runs: Run[] = [];
  let lineOffset = 0;
  for (const [k, part] of parts.entries()) {
    if (!part.ok) {
      if (part.kind === 'parse') return undefined;
      throw errorOfPart(part, source, lineOffset);
    }
    const shifted = part.runs.map((run) => shiftLines(run, lineOffset));
    if (k > 0) {
      // The lines before the cut opened a new run after all (a command, prose), or the header at the cut
      // would only add a group to the report before it: the cut went wrong.
      const previous = parts[k - 1]!;
      const open = previous.ok ? previous.openReport : undefined;
      if (open === undefined || !anchorColumns.some((name) => open.columns.includes(name))) return undefined;
      const before = runs[runs.length - 1];
      const after = shifted.shift();
      if (before?.format !== 'iostat' || after?.format !== 'iostat' || !columnsAgree(before, after) || listingsClash(before, after)) return undefined;
      runs[runs.length - 1] = joined(source, before, after, lineOffset + 1);
    }
    runs.push(...shifted);
    lineOffset += part.lines;
  }
  runs.forEach((run, index) => (run.index = index));
  return { source, format: 'iostat', runs, lines: lineOffset };
}

/**
 * Whether the second half read its columns as one pass would have: a column the
 * first half has means the same (metric, factor) in both, and a new one feeds a
 * metric only if no column of the first half does (one pass gives a metric to
 * the first column that feeds it); and the run stays within MAX_COLUMNS.
 */
function columnsAgree(a: IostatRun, b: IostatRun): boolean {
  const known = new Map(a.columns.map((c) => [c.name, c]));
  const fed = new Set(a.columns.map((c) => c.metric));
  let added = 0;
  for (const column of b.columns) {
    const before = known.get(column.name);
    if (before === undefined) {
      added++;
      if (column.metric !== undefined && fed.has(column.metric)) return false;
    } else if (before.metric !== column.metric || before.factor !== column.factor) return false;
  }
  return a.columns.length + added <= MAX_COLUMNS;
}

/** Whether a device of the second half would be listed under the name of another device of the first (one pass skips its rows). */
function listingsClash(a: IostatRun, b: IostatRun): boolean {
  const listed = new Map(a.series.map((s) => [nativeInLabel(s.device), s.device]));
  return b.series.some((s) => {
    const other = listed.get(nativeInLabel(s.device));
    return other !== undefined && other !== s.device;
  });
}

/** The two halves of the run a cut went through, as one; a bug in joining them is an InternalParseError at the cut. */
function joined(source: string, a: IostatRun, b: IostatRun, cutLine: number): IostatRun {
  try {
    return mergeRuns(a, b);
  } catch (error) {
    if (isParseError(error) || isInternalParseError(error)) throw error;
    throw new InternalParseError({ source, line: cutLine, cause: error });
  }
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
