/**
 * `benchdrop compare A B [--metric M] [--json]`: how many times better A is than B
 * (GET /compare), as a benchstat-like table:
 *
 *   - one row per point: metric and request size (diskperf) or metric (iostat),
 *     A and B as the API gives them, and the ratio (oriented so that > 1 means A
 *     is better) with its 95% interval `1.30x [1.26x-1.34x]` when both sides have
 *     2+ runs, `~` when it is not significant (Holm-corrected p >= 0.05) and the
 *     p-value; a letter marks a row with a footnote (a side near 0, devices left
 *     out of the point);
 *   - for diskperf with several metrics, a geomean row closing each metric, with
 *     its interval and `~`;
 *   - a summary row: the geometric-mean ratio and its interval, its point count
 *     and range, and what the interval resampled (its label) or why there is none;
 *   - under the table the footnotes, the excluded points with their reason, the
 *     warnings as numbered notes, the advice on how many runs would tell a 5%
 *     difference apart, which side is better per metric, and the comparison's
 *     sentence last.
 *
 * `--json` prints the API's Comparison unchanged; `--html [FILE]` also writes the
 * report page's view of this comparison alone (charts and tables, no uploads) as
 * one self-contained file, for labs on AWS where no page is served. Without a
 * FILE it goes to `--out PATH`, else to a fresh folder in the OS temp dir, so a
 * report never lands in the working tree unasked; the path is said on stderr.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  LEVEL,
  type Comparison,
  type ComparisonPoint,
  type Interval,
  type MetricRatio,
  type SideSummary,
} from '../../shared/comparison/index.ts';
import {
  formatInterval,
  formatP,
  formatTimes,
  formatTimesRange,
  insignificantMark,
  levelText,
  PAIRED_NOTE,
  plural,
  pointName,
  RESOLUTION_STEPS,
} from '../../shared/comparison/format.ts';
import { isMetricSpec, LOAD_METRICS, METRIC_SPEC_HELP, METRICS, type Metric } from '../../shared/metrics.ts';
import { apiClientFor, guarded, type CliDeps } from '../context.ts';
import { CliError, type Output } from '../io.ts';
import { renderTable, type Align, type Cell } from '../table.ts';
import type { TargetFlags } from '../target.ts';

export interface CompareCommandOptions extends TargetFlags {
  metric?: string;
  json?: boolean;
  /** A path, or true for `--html` given without one. */
  html?: string | boolean;
  out?: string;
}

export function compareCommand(
  a: string,
  b: string,
  options: CompareCommandOptions,
  io: Output,
  deps: CliDeps = {},
): Promise<number> {
  return guarded(io, async () => {
    const metric = options.metric ?? 'all';
    if (!isMetricSpec(metric)) throw new CliError(`--metric ${metric}: expected ${METRIC_SPEC_HELP}`);
    const target = htmlTarget(options);
    const api = await apiClientFor(options, deps, io);
    const comparison = await api.get<Comparison>('/compare', { a, b, metric });
    io.out(options.json ? JSON.stringify(comparison, null, 2) : renderComparison(comparison));
    if (target !== undefined) {
      const path = await htmlPath(target, a, b);
      // Only --html needs the page and esbuild, which bundles it.
      const { reportHtml } = await import('../../report/build.ts');
      await writeFile(
        resolve(deps.cwd ?? process.cwd(), path),
        await reportHtml({ comparison }, `benchdrop: ${comparison.sentence}`),
      );
      io.err(`wrote ${path}`);
    }
    return 0;
  });
}

/** Where the HTML goes, as asked: a file named by --html or --out, a new temp file, or nowhere. */
type HtmlTarget = { file: string } | { temp: true };

function htmlTarget(options: CompareCommandOptions): HtmlTarget | undefined {
  const named = typeof options.html === 'string' ? options.html : undefined;
  if (named !== undefined && options.out !== undefined)
    throw new CliError(
      `--html ${named} and --out ${options.out}: name the file once (--html FILE, or --html --out FILE)`,
    );
  const file = named ?? options.out;
  if (file !== undefined) return { file };
  return options.html === true ? { temp: true } : undefined;
}

/** A named file as named (said back as typed); else a new folder per report, so two of one pair never collide. */
async function htmlPath(target: HtmlTarget, a: string, b: string): Promise<string> {
  if ('file' in target) return target.file;
  const dir = await mkdtemp(join(tmpdir(), 'benchdrop-compare-'));
  return join(dir, `benchdrop-compare-${fileSafe(a)}-vs-${fileSafe(b)}.html`);
}

/** A selector as part of a file name: letters, digits, `.`, `_` and `-` only, short, never hidden. */
function fileSafe(selector: string): string {
  const safe = selector
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .slice(0, 60)
    .replace(/^[._-]+|[._-]+$/g, '');
  return safe === '' ? 'selector' : safe;
}

function describeSide(name: 'A' | 'B', s: SideSummary): string {
  const parts = [plural(s.runs, 'run')];
  if (s.observations !== s.runs) parts.push(plural(s.observations, 'series', 'series'));
  if (s.devices.length > 1)
    parts.push(
      `devices ${s.devices.slice(0, 4).join(', ')}${s.devices.length > 4 ? `, +${s.devices.length - 4} more` : ''}`,
    );
  parts.push(s.formats.join('+'));
  const selector = s.selector && s.selector !== s.label ? ` (${s.selector})` : '';
  return `${name}: ${s.label}${selector}: ${parts.join(', ')}`;
}

const unitOf = (m: Metric) => METRICS[m]?.unit ?? '';
/** A value as the API gives it (already rounded to 6 significant digits). */
const valueText = (v: number | undefined): string => (v === undefined ? '' : String(v));
const LEVEL_TEXT = levelText(LEVEL);

/** One line of the table before it is laid out. */
interface Line {
  metric: string;
  size: Cell;
  a: string;
  b: string;
  unit: string;
  ratio: number | null | undefined;
  ci: Interval | null | undefined;
  significant: boolean | null | undefined;
  p: number | undefined;
  note: string;
}

/** What shapes the table: a request-size column, one unit for both value columns, the interval columns. */
interface Layout {
  bySize: boolean;
  oneUnit: string | undefined;
  intervals: boolean;
}

type MetricRatios = readonly (readonly [Metric, MetricRatio])[];

/** Footnotes of points, each text once, lettered in the order the table first needs them. */
class Footnotes {
  readonly byText = new Map<string, string>();

  markOf(p: ComparisonPoint): string {
    const texts = [...(p.nearResolution ? [nearResolutionText(p.metric)] : []), ...(p.notes ?? [])];
    const letters = texts.map((text) => {
      let letter = this.byText.get(text);
      if (letter === undefined) this.byText.set(text, (letter = footnoteLetter(this.byText.size)));
      return letter;
    });
    return letters.length > 0 ? `(${letters.join(',')})` : '';
  }
}

const footnoteLetter = (i: number) => (i < 26 ? String.fromCharCode(97 + i) : `n${i + 1}`);

function nearResolutionText(metric: Metric): string {
  const floor = Number((RESOLUTION_STEPS * METRICS[metric].resolution).toPrecision(6));
  return (
    `a side is under ${floor} ${unitOf(metric)} ` +
    `(${RESOLUTION_STEPS} printing steps of ${METRICS[metric].resolution}): the ratio is mostly rounding`
  );
}

const pairedRows = (c: Comparison) => c.rows.filter((r) => r.ratio !== undefined);
const metricRatiosOf = (c: Comparison): MetricRatios =>
  c.metrics.flatMap((m) => (c.byMetric[m] ? [[m, c.byMetric[m]] as const] : []));

export function renderComparison(c: Comparison): string {
  const layout = layoutOf(c);
  const footnotes = new Footnotes();
  const table = renderTable(
    headerOf(layout),
    tableRows(tableLines(c, layout, footnotes), layout),
    '',
    alignmentOf(layout),
  );
  return [...legend(c, layout), '', table, ...afterTable(c, footnotes)].join('\n');
}

function layoutOf(c: Comparison): Layout {
  const paired = pairedRows(c);
  const units = [...new Set((paired.length ? paired : c.rows).map((r) => unitOf(r.metric)))];
  const intervals =
    c.ci !== null || paired.some((r) => r.ci !== undefined) || metricRatiosOf(c).some(([, m]) => m.ci !== null);
  return {
    bySize: c.rows.some((r) => r.req_size !== undefined),
    oneUnit: units.length === 1 ? units[0] : undefined,
    intervals,
  };
}

/** Each metric's points, a geomean row closing each metric (diskperf, several metrics), the summary last. */
function tableLines(c: Comparison, layout: Layout, footnotes: Footnotes): Line[] {
  const paired = pairedRows(c);
  const subtotals = layout.bySize && c.metrics.length > 1;
  const lines: Line[] = [];
  for (const metric of c.metrics) {
    for (const p of paired.filter((r) => r.metric === metric)) lines.push(pointLine(p, footnotes.markOf(p)));
    const m = c.byMetric[metric];
    if (subtotals && m && m.points > 1) lines.push(metricLine(metric, m));
  }
  lines.push(summaryLine(c, layout.bySize));
  return lines;
}

function pointLine(p: ComparisonPoint, note: string): Line {
  const { metric, ratio, ci, significant } = p;
  return {
    metric,
    size: p.req_size ?? '',
    a: valueText(p.a),
    b: valueText(p.b),
    unit: unitOf(metric),
    ratio,
    ci,
    significant,
    p: p.p,
    note,
  };
}

function metricLine(metric: Metric, m: MetricRatio): Line {
  const note = `${plural(m.points, 'point')}, ${formatTimesRange(m.min, m.max)}`;
  return {
    metric,
    size: 'geomean',
    a: '',
    b: '',
    unit: '',
    ratio: m.ratio,
    ci: m.ci,
    significant: m.significant,
    p: m.p,
    note,
  };
}

function summaryLine(c: Comparison, bySize: boolean): Line {
  const [metric, size] = bySize ? [c.metric, 'geomean'] : ['geomean', ''];
  return {
    metric,
    size,
    a: '',
    b: '',
    unit: '',
    ratio: c.ratio,
    ci: c.ci,
    significant: c.significant,
    p: undefined,
    note: summaryNote(c),
  };
}

function summaryNote(c: Comparison): string {
  if (c.ratio === null) return c.ciNote ?? 'no point could be paired';
  const parts = [`${plural(c.points, 'point')}${c.points > 1 ? `, ${formatTimesRange(c.min, c.max)}` : ''}`];
  if (c.ci) parts.push(c.ci.label);
  else if (c.ciNote) parts.push(c.ciNote);
  return parts.join('; ');
}

function headerOf({ bySize, oneUnit, intervals }: Layout): string[] {
  return [
    'metric',
    ...(bySize ? ['req_size'] : []),
    oneUnit ? `A ${oneUnit}` : 'A',
    oneUnit ? `B ${oneUnit}` : 'B',
    ...(oneUnit ? [] : ['unit']),
    intervals ? `ratio [${LEVEL_TEXT} interval]` : 'ratio',
    ...(intervals ? ['p'] : []),
    '',
  ];
}

function alignmentOf({ bySize, oneUnit, intervals }: Layout): Align[] {
  return [
    'left',
    ...(bySize ? (['right'] as Align[]) : []),
    'right',
    'right',
    ...(oneUnit ? [] : (['left'] as Align[])),
    intervals ? 'left' : 'right',
    ...(intervals ? (['right'] as Align[]) : []),
    'left',
  ];
}

function tableRows(lines: readonly Line[], layout: Layout): Cell[][] {
  const { bySize, oneUnit, intervals } = layout;
  const ratios = ratioCells(lines, intervals);
  return lines.map((l, i) => [
    l.metric,
    ...(bySize ? [l.size] : []),
    l.a,
    l.b,
    ...(oneUnit ? [] : [l.unit]),
    ratios[i]!,
    ...(intervals ? [formatP(l.p)] : []),
    l.note,
  ]);
}

/** The ratio and its interval share a column, each part aligned: `1.30x [1.26x-1.34x]`, then `~` when any has one. */
function ratioCells(lines: readonly Line[], intervals: boolean): string[] {
  const ratios = lines.map((l) => (l.ratio === null || l.ratio === undefined ? '-' : formatTimes(l.ratio)));
  if (!intervals) return ratios;
  const cis = lines.map((l) => formatInterval(l.ci));
  const ratioWidth = Math.max(...ratios.map((r) => r.length));
  const ciWidth = Math.max(...cis.map((r) => r.length));
  const anyTilde = lines.some((l) => l.significant === false);
  return lines.map((l, i) => {
    const mark = anyTilde ? ` ${insignificantMark(l.significant) || ' '}` : '';
    return `${ratios[i]!.padStart(ratioWidth)} ${cis[i]!.padEnd(ciWidth)}${mark}`;
  });
}

/** Above the table: the sides, and how to read it. */
function legend(c: Comparison, layout: Layout): string[] {
  const out: string[] = [describeSide('A', c.a), describeSide('B', c.b)];
  if (c.paired) out.push(PAIRED_NOTE);
  out.push('ratio: how many times better A is (A/B for throughput and IOPS, B/A for times)');
  out.push(
    `       queue lengths and %util (${LOAD_METRICS.join(', ')}) are only shown when asked by name with --metric`,
  );
  if (layout.intervals) {
    out.push(`[low-high]: the ratio's ${LEVEL_TEXT} interval (each row on its own); p: Holm-corrected over the points`);
    out.push(`       (over the metrics on geomean rows); ~: not significant (p >= ${(1 - LEVEL).toFixed(2)})`);
  }
  return out;
}

/** Under the table: footnotes, the excluded points, the warnings, the advice, the directions, the sentence last. */
function afterTable(c: Comparison, footnotes: Footnotes): string[] {
  const out: string[] = [];
  if (footnotes.byText.size > 0) {
    out.push('');
    for (const [text, letter] of footnotes.byText) out.push(`(${letter}) ${text}`);
  }
  if (c.excluded.length > 0)
    out.push('', `excluded (${plural(c.excluded.length, 'point')}):`, ...c.excluded.map(excludedLine));
  if (c.warnings.length > 0) out.push('', 'notes:', ...c.warnings.map((w, i) => `  [${i + 1}] ${w}`));
  if (c.advice) out.push('', `runs needed: ${c.advice.note}`);
  out.push(...directions(c, metricRatiosOf(c)));
  out.push('', c.sentence);
  return out;
}

function excludedLine(p: ComparisonPoint): string {
  const values = [p.a !== undefined && `A ${valueText(p.a)}`, p.b !== undefined && `B ${valueText(p.b)}`]
    .filter(Boolean)
    .join(', ');
  const notes = p.notes && p.notes.length > 0 ? `; ${p.notes.join('; ')}` : '';
  const unit = unitOf(p.metric) ? ` ${unitOf(p.metric)}` : '';
  return `  ${pointName(p)}: ${p.excluded}${values ? ` (${values}${unit})` : ''}${notes}`;
}

/**
 * Which side is better per metric, the better side first: the metric's own
 * sentence when there is one metric, else one short line each.
 */
function directions(c: Comparison, metricRatios: MetricRatios): string[] {
  if (metricRatios.length === 0) return [];
  if (metricRatios.length === 1) {
    const [, m] = metricRatios[0]!;
    return ['', `direction: ${m.significant === false ? '~ ' : ''}${m.sentence}`];
  }
  const nameWidth = Math.max(...metricRatios.map(([metric]) => metric.length));
  const how = (m: MetricRatio) => `${m.unit}, ${m.direction === 'higher-better' ? 'higher' : 'lower'} is better`;
  const howWidth = Math.max(...metricRatios.map(([, m]) => how(m).length));
  return [
    '',
    'directions (the better side first):',
    ...metricRatios.map(([metric, m]) => {
      const flip = m.ratio < 1;
      const [first, second] = flip ? [c.b.label, c.a.label] : [c.a.label, c.b.label];
      const said =
        `${first} is ${formatTimes(flip ? 1 / m.ratio : m.ratio)} ${second}` +
        `${m.significant === false ? ' (~ not significant)' : ''}`;
      return `  ${metric.padEnd(nameWidth)}  ${how(m).padEnd(howWidth)}  ${said}`;
    }),
  ];
}
