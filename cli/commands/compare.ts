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
import { formatRatio, isMetricSpec, LEVEL, METRIC_SPEC_HELP, RESOLUTION_STEPS, type Comparison, type ComparisonPoint, type Interval, type MetricRatio, type SideSummary } from '../../shared/compare.ts';
import { METRICS, type Metric } from '../../shared/metrics.ts';
import { apiClientFor, guarded, plural, type CliDeps } from '../context.ts';
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

export function compareCommand(a: string, b: string, options: CompareCommandOptions, io: Output, deps: CliDeps = {}): Promise<number> {
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
      await writeFile(resolve(deps.cwd ?? process.cwd(), path), await reportHtml({ comparison }, `benchdrop: ${comparison.sentence}`));
      io.err(`wrote ${path}`);
    }
    return 0;
  });
}

/** Where the HTML goes, as asked: a file named by --html or --out, a new temp file, or nowhere. */
type HtmlTarget = { file: string } | { temp: true };

function htmlTarget(options: CompareCommandOptions): HtmlTarget | undefined {
  const named = typeof options.html === 'string' ? options.html : undefined;
  if (named !== undefined && options.out !== undefined) throw new CliError(`--html ${named} and --out ${options.out}: name the file once (--html FILE, or --html --out FILE)`);
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
  if (s.devices.length > 1) parts.push(`devices ${s.devices.slice(0, 4).join(', ')}${s.devices.length > 4 ? `, +${s.devices.length - 4} more` : ''}`);
  parts.push(s.formats.join('+'));
  const selector = s.selector && s.selector !== s.label ? ` (${s.selector})` : '';
  return `${name}: ${s.label}${selector}: ${parts.join(', ')}`;
}


function pointName(p: ComparisonPoint): string {
  return p.req_size === undefined ? p.metric : `${p.metric} at ${p.req_size}`;
}

const unitOf = (m: Metric) => METRICS[m]?.unit ?? '';
/** A value as the API gives it (already rounded to 6 significant digits). */
const valueText = (v: number | undefined): string => (v === undefined ? '' : String(v));
const times = (r: number | null | undefined) => `${formatRatio(r)}x`;
const intervalText = (ci: Interval | null | undefined) => (ci ? `[${times(ci.low)}-${times(ci.high)}]` : '');
/** p as the API rounds it (3 significant digits); tiny ones as a bound. */
const pText = (p: number | undefined) => (p === undefined ? '' : p < 0.001 ? '<0.001' : String(p));
/** benchstat's `~`: the difference is not significant. */
const tilde = (significant: boolean | null | undefined) => (significant === false ? '~' : '');
const LEVEL_TEXT = `${LEVEL * 100}%`;
/** The metrics only asked for by name: the load on a device (queues, %util). */
const LOAD_METRICS = (Object.keys(METRICS) as Metric[]).filter((m) => METRICS[m].role === 'load');

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
  return `a side is under ${floor} ${unitOf(metric)} (${RESOLUTION_STEPS} printing steps of ${METRICS[metric].resolution}): the ratio is mostly rounding`;
}

export function renderComparison(c: Comparison): string {
  const paired = c.rows.filter((r) => r.ratio !== undefined);
  const bySize = c.rows.some((r) => r.req_size !== undefined);
  const units = [...new Set((paired.length ? paired : c.rows).map((r) => unitOf(r.metric)))];
  const oneUnit = units.length === 1 ? units[0] : undefined;
  const metricRatios = c.metrics.flatMap((m) => (c.byMetric[m] ? [[m, c.byMetric[m]] as const] : []));
  const intervals = c.ci !== null || paired.some((r) => r.ci !== undefined) || metricRatios.some(([, m]) => m.ci !== null);
  const footnotes = new Footnotes();

  const lines: Line[] = [];
  const subtotals = bySize && c.metrics.length > 1;
  for (const metric of c.metrics) {
    for (const p of paired.filter((r) => r.metric === metric)) {
      lines.push({ metric: p.metric, size: p.req_size ?? '', a: valueText(p.a), b: valueText(p.b), unit: unitOf(p.metric), ratio: p.ratio, ci: p.ci, significant: p.significant, p: p.p, note: footnotes.markOf(p) });
    }
    const m = c.byMetric[metric];
    if (subtotals && m && m.points > 1) {
      lines.push({ metric, size: 'geomean', a: '', b: '', unit: '', ratio: m.ratio, ci: m.ci, significant: m.significant, p: m.p, note: `${plural(m.points, 'point')}, ${times(m.min)}-${times(m.max)}` });
    }
  }
  lines.push({ metric: bySize ? c.metric : 'geomean', size: bySize ? 'geomean' : '', a: '', b: '', unit: '', ratio: c.ratio, ci: c.ci, significant: c.significant, p: undefined, note: summaryNote(c) });

  // The ratio and its interval share a column, each part aligned: `1.30x [1.26x-1.34x]`.
  const ratios = lines.map((l) => (l.ratio === null || l.ratio === undefined ? '-' : times(l.ratio)));
  const cis = lines.map((l) => intervalText(l.ci));
  const ratioWidth = Math.max(...ratios.map((r) => r.length));
  const ciWidth = Math.max(...cis.map((r) => r.length));
  const anyTilde = lines.some((l) => l.significant === false);
  const ratioCell = (i: number) => {
    if (!intervals) return ratios[i]!;
    const mark = anyTilde ? ` ${tilde(lines[i]!.significant) || ' '}` : '';
    return `${ratios[i]!.padStart(ratioWidth)} ${cis[i]!.padEnd(ciWidth)}${mark}`;
  };

  const header = [
    'metric',
    ...(bySize ? ['req_size'] : []),
    oneUnit ? `A ${oneUnit}` : 'A',
    oneUnit ? `B ${oneUnit}` : 'B',
    ...(oneUnit ? [] : ['unit']),
    intervals ? `ratio [${LEVEL_TEXT} interval]` : 'ratio',
    ...(intervals ? ['p'] : []),
    '',
  ];
  const align: Align[] = ['left', ...(bySize ? (['right'] as Align[]) : []), 'right', 'right', ...(oneUnit ? [] : (['left'] as Align[])), intervals ? 'left' : 'right', ...(intervals ? (['right'] as Align[]) : []), 'left'];
  const rows: Cell[][] = lines.map((l, i) => [
    l.metric,
    ...(bySize ? [l.size] : []),
    l.a,
    l.b,
    ...(oneUnit ? [] : [l.unit]),
    ratioCell(i),
    ...(intervals ? [pText(l.p)] : []),
    l.note,
  ]);

  const out: string[] = [describeSide('A', c.a), describeSide('B', c.b)];
  if (c.paired) out.push('devices paired disk with disk: each device of A with the device of the same name on B');
  out.push('ratio: how many times better A is (A/B for throughput and IOPS, B/A for times)');
  out.push(`       queue lengths and %util (${LOAD_METRICS.join(', ')}) are only shown when asked by name with --metric`);
  if (intervals) {
    out.push(`[low-high]: the ratio's ${LEVEL_TEXT} interval (each row on its own); p: Holm-corrected over the points`);
    out.push(`       (over the metrics on geomean rows); ~: not significant (p >= ${(1 - LEVEL).toFixed(2)})`);
  }
  out.push('', renderTable(header, rows, '', align));

  if (footnotes.byText.size > 0) {
    out.push('');
    for (const [text, letter] of footnotes.byText) out.push(`(${letter}) ${text}`);
  }
  if (c.excluded.length > 0) {
    out.push('', `excluded (${plural(c.excluded.length, 'point')}):`);
    for (const p of c.excluded) {
      const values = [p.a !== undefined && `A ${valueText(p.a)}`, p.b !== undefined && `B ${valueText(p.b)}`].filter(Boolean).join(', ');
      const notes = p.notes && p.notes.length > 0 ? `; ${p.notes.join('; ')}` : '';
      out.push(`  ${pointName(p)}: ${p.excluded}${values ? ` (${values}${unitOf(p.metric) ? ` ${unitOf(p.metric)}` : ''})` : ''}${notes}`);
    }
  }
  if (c.warnings.length > 0) {
    out.push('', 'notes:');
    c.warnings.forEach((w, i) => out.push(`  [${i + 1}] ${w}`));
  }
  if (c.advice) out.push('', `runs needed: ${c.advice.note}`);
  out.push(...directions(c, metricRatios));
  out.push('', c.sentence);
  return out.join('\n');
}

function summaryNote(c: Comparison): string {
  if (c.ratio === null) return c.ciNote ?? 'no point could be paired';
  const parts = [`${plural(c.points, 'point')}${c.points > 1 ? `, ${times(c.min)}-${times(c.max)}` : ''}`];
  if (c.ci) parts.push(c.ci.label);
  else if (c.ciNote) parts.push(c.ciNote);
  return parts.join('; ');
}

/**
 * Which side is better per metric, the better side first: the metric's own
 * sentence when there is one metric, else one short line each.
 */
function directions(c: Comparison, metricRatios: readonly (readonly [Metric, MetricRatio])[]): string[] {
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
      const said = `${first} is ${times(flip ? 1 / m.ratio : m.ratio)} ${second}${m.significant === false ? ' (~ not significant)' : ''}`;
      return `  ${metric.padEnd(nameWidth)}  ${how(m).padEnd(howWidth)}  ${said}`;
    }),
  ];
}
