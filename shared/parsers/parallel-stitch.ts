/**
 * The parts of a file parsed in parallel (parallel.ts), joined into what one pass
 * gives: line numbers and run indexes offset, and the run a cut went through
 * merged from its two halves (sample counts add up, column summaries merge, the
 * since-boot report of the first half still counts as such).
 *
 *   part 0: runs [A, B1], 1200 lines, open report of B1 with columns [r/s, w/s, ...]
 *   part 1: runs [B2, C], lines counted from the cut
 *
 * yields ParsedFile { runs: [A, B (B1 + B2), C], lines } or, when the halves do
 * not join as one pass would read them, undefined: the file is parsed again in one piece.
 */
import { printsBootReport } from './context.ts';
import type { IostatMetric } from '../metrics.ts';
import type { IostatRun, IostatSeries, MetricSummary, ParsedFile, Run } from '../model.ts';
import { nativeInLabel } from '../labels.ts';
import { InternalParseError, isInternalParseError, isParseError } from './errors.ts';
import { MAX_COLUMNS } from './iostat-run.ts';
import { errorOfPart, type PartResult } from './parse-worker.ts';
import { mergeSummaries } from './summary.ts';

/**
 * Join the parts: line numbers and run indexes offset, the cut runs merged.
 * Undefined when the file is better parsed in one piece (see the top of this file).
 */
export function stitch(source: string, parts: PartResult[], anchorColumns: readonly string[]): ParsedFile | undefined {
  const runs: Run[] = [];
  let lineOffset = 0;
  for (const [k, part] of parts.entries()) {
    if (!part.ok) {
      if (part.kind === 'parse') return undefined;
      throw errorOfPart(part, source, lineOffset);
    }
    const shifted = part.runs.map((run) => shiftLines(run, lineOffset));
    if (k > 0) {
      const before = runs[runs.length - 1];
      const after = shifted.shift();
      if (!joins(parts[k - 1]!, before, after, anchorColumns)) return undefined;
      runs[runs.length - 1] = joined(source, before, after, lineOffset + 1);
    }
    runs.push(...shifted);
    lineOffset += part.lines;
  }
  runs.forEach((run, index) => (run.index = index));
  return { source, format: 'iostat', runs, lines: lineOffset };
}

/**
 * Whether the last run of the part before a cut and the first after it are one
 * run: the part before ended in a report that the header at the cut continues
 * (else the lines before the cut opened a new run after all, or the header would
 * only add a group to the report), and one pass would read the second half's
 * columns and devices as its parts did.
 */
function joins(
  previous: PartResult,
  before: Run | undefined,
  after: Run | undefined,
  anchorColumns: readonly string[],
): after is IostatRun {
  const open = previous.ok ? previous.openReport : undefined;
  if (open === undefined || !anchorColumns.some((name) => open.columns.includes(name))) return false;
  if (before?.format !== 'iostat' || after?.format !== 'iostat') return false;
  return columnsAgree(before, after) && !listingsClash(before, after);
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

/**
 * Whether a device of the second half would be listed under the name of another device of the first
 * (one pass skips its rows).
 */
function listingsClash(a: IostatRun, b: IostatRun): boolean {
  const listed = new Map(a.series.map((s) => [nativeInLabel(s.device), s.device]));
  return b.series.some((s) => {
    const other = listed.get(nativeInLabel(s.device));
    return other !== undefined && other !== s.device;
  });
}

/** The two halves of the run a cut went through, as one; a bug in joining them is an InternalParseError at the cut. */
function joined(source: string, a: Run | undefined, b: IostatRun, cutLine: number): IostatRun {
  try {
    return mergeRuns(a as IostatRun, b);
  } catch (error) {
    if (isParseError(error) || isInternalParseError(error)) throw error;
    throw new InternalParseError({ source, line: cutLine, cause: error });
  }
}

function shiftLines(run: Run, offset: number): Run {
  if (offset === 0) return run;
  const warnings = run.warnings.map((w) => ({ ...w, line: w.line + offset }));
  return { ...run, startLine: run.startLine + offset, endLine: run.endLine + offset, warnings } as Run;
}

/** The run a cut went through, from its two halves. */
function mergeRuns(a: IostatRun, b: IostatRun): IostatRun {
  const columns = [...a.columns, ...b.columns.filter((c) => !a.columns.some((x) => x.name === c.name))];
  const series = new Map<string, IostatSeries>();
  // With one report, a's summaries are of its since-boot report (if it printed one): the merged run has more,
  // so they go.
  const keep = a.reports > 1 || !printsBootReport(a.platform, a.meta.command);
  for (const s of a.series) series.set(s.device, { ...s, summary: keep ? s.summary : {} });
  for (const s of b.series) {
    const before = series.get(s.device);
    series.set(s.device, before === undefined ? s : mergeSeries(before, s));
  }
  const warnings = [...a.warnings, ...b.warnings];
  return { ...a, endLine: b.endLine, warnings, columns, reports: a.reports + b.reports, series: [...series.values()] };
}

/** One device's series over both halves: sample counts add up, summaries of a metric merge. */
function mergeSeries(before: IostatSeries, s: IostatSeries): IostatSeries {
  const summary: Partial<Record<IostatMetric, MetricSummary>> = { ...before.summary };
  for (const [metric, value] of Object.entries(s.summary) as [IostatMetric, MetricSummary][]) {
    const existing = summary[metric];
    summary[metric] = existing === undefined ? value : mergeSummaries([existing, value]);
  }
  const merged: IostatSeries = { ...before, sampleCount: before.sampleCount + s.sampleCount, summary };
  if (s.mount !== undefined) merged.mount = s.mount;
  return merged;
}
