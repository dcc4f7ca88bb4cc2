/**
 * `benchdrop compare A B [--metric M] [--json]`: how many times better A is than B
 * (GET /compare), as a benchstat-like table:
 *
 *   - one row per point: metric and request size (diskperf) or metric (iostat),
 *     A, B and the ratio (oriented so that > 1 means A is better);
 *   - for diskperf with several metrics, a geomean row closing each metric;
 *   - a summary row: the geometric-mean ratio, its point count and range, the 95%
 *     interval when there is one (or the note why not), `~` first when the
 *     difference is not significant;
 *   - under the table the excluded points with their reason, the warnings as
 *     numbered notes, and the comparison's sentence last.
 *
 * `--json` prints the API's Comparison unchanged; `--html FILE` also writes the
 * report page's view of it (charts, uploads list) as one self-contained file, for
 * labs on AWS where no page is served.
 */
import { writeFile } from 'node:fs/promises';
import { reportHtml } from '../../report/build.ts';
import type { UploadListing } from '../../shared/api.ts';
import { isMetricSpec, METRIC_SPEC_HELP, type Comparison, type ComparisonPoint, type SideSummary } from '../../shared/compare.ts';
import { METRICS, type Metric } from '../../shared/metrics.ts';
import { apiClientFor, guarded, plural, type CliDeps } from '../context.ts';
import { CliError, type Output } from '../io.ts';
import { formatNumber, renderTable, type Align, type Cell } from '../table.ts';
import type { TargetFlags } from '../target.ts';

export interface CompareCommandOptions extends TargetFlags {
  metric?: string;
  json?: boolean;
  html?: string;
}

export function compareCommand(a: string, b: string, options: CompareCommandOptions, io: Output, deps: CliDeps = {}): Promise<number> {
  return guarded(io, async () => {
    const metric = options.metric ?? 'all';
    if (!isMetricSpec(metric)) throw new CliError(`--metric ${metric}: expected ${METRIC_SPEC_HELP}`);
    const api = await apiClientFor(options, deps);
    const comparison = await api.get<Comparison>('/compare', { a, b, metric });
    io.out(options.json ? JSON.stringify(comparison, null, 2) : renderComparison(comparison));
    if (options.html !== undefined) {
      const { uploads } = await api.get<{ uploads: UploadListing[] }>('/uploads', { limit: 100 });
      await writeFile(options.html, await reportHtml({ comparison, uploads }, `benchdrop: ${comparison.sentence}`));
      io.err(`wrote ${options.html}`);
    }
    return 0;
  });
}

/** A ratio as the sentence prints it: 1.90, 12.3, 140; tiny ones keep two significant digits. */
export function formatRatio(r: number | null | undefined): string {
  if (r === null || r === undefined || !Number.isFinite(r)) return '-';
  if (r >= 100) return r.toFixed(0);
  if (r >= 10) return r.toFixed(1);
  if (r >= 0.01) return r.toFixed(2);
  return r.toPrecision(2);
}

function describeSide(name: 'A' | 'B', s: SideSummary): string {
  const parts = [plural(s.runs, 'run')];
  if (s.observations !== s.runs) parts.push(plural(s.observations, 'series', 'series'));
  if (s.devices.length > 1) parts.push(`devices ${s.devices.slice(0, 4).join(', ')}${s.devices.length > 4 ? `, +${s.devices.length - 4} more` : ''}`);
  parts.push(s.formats.join('+'));
  const selector = s.selector && s.selector !== s.label ? ` (${s.selector})` : '';
  return `${name}: ${s.label}${selector}: ${parts.join(', ')}`;
}

function pointName(p: ComparisonPoint): string {
  return p.req_size === undefined ? p.metric : `${p.metric} at ${p.req_size}`;
}

const unitOf = (m: Metric) => METRICS[m]?.unit ?? '';

export function renderComparison(c: Comparison): string {
  const paired = c.rows.filter((r) => r.ratio !== undefined);
  const bySize = c.rows.some((r) => r.req_size !== undefined);
  const units = [...new Set((paired.length ? paired : c.rows).map((r) => unitOf(r.metric)))];
  const oneUnit = units.length === 1 ? units[0] : undefined;

  const header = ['metric', ...(bySize ? ['req_size'] : []), oneUnit ? `A ${oneUnit}` : 'A', oneUnit ? `B ${oneUnit}` : 'B', ...(oneUnit ? [] : ['unit']), 'ratio', ''];
  const align: Align[] = ['left', ...(bySize ? (['right'] as Align[]) : []), 'right', 'right', ...(oneUnit ? [] : (['left'] as Align[])), 'right', 'left'];
  const row = (metric: string, size: Cell, a: Cell, b: Cell, unit: string, ratio: string, note: string): Cell[] => [
    metric,
    ...(bySize ? [size] : []),
    a,
    b,
    ...(oneUnit ? [] : [unit]),
    ratio,
    note,
  ];

  const rows: Cell[][] = [];
  const subtotals = bySize && c.metrics.length > 1;
  for (const metric of c.metrics) {
    const mine = paired.filter((r) => r.metric === metric);
    for (const p of mine) rows.push(row(p.metric, p.req_size ?? '', p.a, p.b, unitOf(p.metric), formatRatio(p.ratio), ''));
    const m = c.byMetric[metric];
    if (subtotals && m && m.points > 1) rows.push(row(metric, 'geomean', '', '', '', formatRatio(m.ratio), `${m.points} points, ${formatRatio(m.min)}x-${formatRatio(m.max)}x`));
  }
  rows.push(row(bySize ? c.metric : 'geomean', bySize ? 'geomean' : '', '', '', '', formatRatio(c.ratio), summaryNote(c)));

  const out: string[] = [describeSide('A', c.a), describeSide('B', c.b), 'ratio: how many times better A is (A/B for throughput and IOPS, B/A for times, queues and busy %)', ''];
  out.push(renderTable(header, rows, '', align));

  if (c.excluded.length > 0) {
    out.push('', `excluded (${plural(c.excluded.length, 'point')}):`);
    for (const p of c.excluded) {
      const values = [p.a !== undefined && `A ${formatNumber(p.a)}`, p.b !== undefined && `B ${formatNumber(p.b)}`].filter(Boolean).join(', ');
      out.push(`  ${pointName(p)}: ${p.excluded}${values ? ` (${values}${unitOf(p.metric) ? ` ${unitOf(p.metric)}` : ''})` : ''}`);
    }
  }
  if (c.warnings.length > 0) {
    out.push('', 'notes:');
    c.warnings.forEach((w, i) => out.push(`  [${i + 1}] ${w}`));
  }
  out.push('', c.sentence);
  return out.join('\n');
}

function summaryNote(c: Comparison): string {
  if (c.ratio === null) return c.ciNote ?? 'no point could be paired';
  const parts = [`${plural(c.points, 'point')}, ${formatRatio(c.min)}x-${formatRatio(c.max)}x`];
  if (c.ci) parts.push(`95% interval ${formatRatio(c.ci.low)}x-${formatRatio(c.ci.high)}x`);
  else if (c.ciNote) parts.push(c.ciNote);
  const note = parts.join('; ');
  return c.significant === false ? `~ not significant: ${note}` : note;
}
