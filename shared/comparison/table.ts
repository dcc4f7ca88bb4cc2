/**
 * A comparison as one table, benchstat's way, and its three printings: aligned
 * text (what `benchdrop compare` prints), CSV and GitHub Markdown. The CLI,
 * the API's `format=csv|md` and the report page all take this model, so the
 * three say the same thing.
 *
 *   metric  req size (bytes)  A MB/s  A spread  n A  B MB/s  B spread  n B  ratio  95% interval        p
 *   fwd_wt              4096   2.855     ±3.7%    4   1.255     ±4.4%    4  2.27x  [2.14x-2.41x]  <0.001
 *   fwd_wt           geomean   4.052                  2.625                 1.54x  [1.46x-1.64x]  <0.001 ...
 *   all              geomean   3.582                  1.863                 1.92x  [1.81x-2.04x]  <0.001 ...
 *   (then the `~` column, and the note: `9 points, 1.13x-2.27x` on a geomean row)
 *
 * Rows: every point with a ratio, a geomean row closing each metric of several
 * points (when several metrics are shown), the summary last. A spread is the
 * farthest run from the centre, in percent of it; `~` marks what is not
 * significant (Holm-corrected p >= 0.05). Notes: the points' footnotes
 * (lettered, marked on their rows), the excluded points, every warning
 * (numbered; `setups` when about how the runs differ), then the advice and the
 * sentence. Pure (the comparison modules and the metric table): the page bundles it.
 */
import type { Comparison, ComparisonPoint, MetricRatio } from './answer.ts';
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
} from './format.ts';
import { fioPointOf, fioPointText } from '../fio-point.ts';
import { METRICS, type Metric } from '../metrics.ts';
import { LEVEL, type SideSpread } from './model.ts';

export interface TableRow {
  kind: 'point' | 'geomean' | 'summary';
  metric: string;
  reqSize?: number;
  /** fio: the row's point key. */
  point?: string;
  /** One per column, as printed. */
  cells: string[];
  /** The marks of the notes about this row (`a`, `b`). */
  marks: string[];
}

export interface TableNote {
  /** Letters for a point's footnotes, numbers for warnings, empty for the rest. */
  mark: string;
  text: string;
  kind: 'point' | 'warning' | 'excluded' | 'advice';
  /** A warning about how the runs differ (their setups side by side say how). */
  setups?: true;
}

export interface ComparisonTable {
  title: string;
  columns: string[];
  rows: TableRow[];
  notes: TableNote[];
}

/** The formats a comparison prints in: the API's `format=` and the CLI's `--format` (text is the CLI's only). */
export const TABLE_FORMATS = ['text', 'csv', 'md'] as const;
export type TableFormat = (typeof TABLE_FORMATS)[number];
/** GET /compare's `format=`: the Comparison's JSON, or its table printed (csv, md). */
export const ANSWER_FORMATS = ['json', 'csv', 'md'] as const;
export type AnswerFormat = (typeof ANSWER_FORMATS)[number];
/** What the API answers each printed format as. */
export const TABLE_CONTENT_TYPES = {
  csv: 'text/csv; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
} as const satisfies Partial<Record<TableFormat, string>>;

const LEVEL_TEXT = levelText(LEVEL);
/** Column names that are not those of numbers: left-aligned. */
const LEFT_COLUMNS = new Set(['metric', 'unit', 'note', '~', `${LEVEL_TEXT} interval`]);

const unitOf = (metric: string) => METRICS[metric as Metric]?.unit ?? '';
const valueText = (v: number | undefined) => (v === undefined ? '' : String(v));
/** A centre formed here (a geomean row's), to 4 significant digits. */
const derivedText = (v: number) => String(Number(v.toPrecision(4)));

/** What shapes the columns. */
interface Layout {
  bySize: boolean;
  /** fio: the rows are at points (rw, block size, queue depth, jobs), named in the size column. */
  byPoint: boolean;
  /** The one unit of every row, named in the value headers; undefined: a unit column. */
  oneUnit: string | undefined;
  spreads: boolean;
  intervals: boolean;
}

const pairedRows = (c: Comparison) => c.rows.filter((r) => r.ratio !== undefined);
const metricRatiosOf = (c: Comparison) =>
  c.metrics.flatMap((m) => (c.byMetric[m] ? [[m, c.byMetric[m]] as const] : []));

function layoutOf(c: Comparison): Layout {
  const paired = pairedRows(c);
  const units = [...new Set((paired.length ? paired : c.rows).map((r) => unitOf(r.metric)))];
  return {
    bySize: c.rows.some((r) => r.req_size !== undefined || r.point !== undefined),
    byPoint: c.rows.some((r) => r.point !== undefined),
    oneUnit: units.length === 1 ? units[0] : undefined,
    spreads: paired.some((r) => r.spread !== undefined && (r.spread.a.runs > 1 || r.spread.b.runs > 1)),
    intervals:
      c.ci !== null || paired.some((r) => r.ci !== undefined) || metricRatiosOf(c).some(([, m]) => m.ci !== null),
  };
}

function columnsOf({ bySize, byPoint, oneUnit, spreads, intervals }: Layout): string[] {
  const side = (name: 'A' | 'B') => [
    oneUnit ? `${name} ${oneUnit}` : name,
    ...(spreads ? [`${name} spread`] : []),
    `n ${name}`,
  ];
  return [
    'metric',
    ...(bySize ? [byPoint ? 'point (rw bs qd jobs)' : 'req size (bytes)'] : []),
    ...(oneUnit ? [] : ['unit']),
    ...side('A'),
    ...side('B'),
    'ratio',
    ...(intervals ? [`${LEVEL_TEXT} interval`, 'p', '~'] : []),
    'note',
  ];
}

/** What a row says, before its cells are laid out in the columns at hand. */
interface Line {
  metric: string;
  size: string;
  unit: string;
  a: string;
  b: string;
  spreadA: string;
  spreadB: string;
  nA: string;
  nB: string;
  ratio: number | null | undefined;
  ci: { low: number; high: number } | null | undefined;
  p: number | undefined;
  significant: boolean | null | undefined;
  note: string;
}

function cellsOf(l: Line, { bySize, oneUnit, spreads, intervals }: Layout): string[] {
  const side = (value: string, spread: string, n: string) => [value, ...(spreads ? [spread] : []), n];
  return [
    l.metric,
    ...(bySize ? [l.size] : []),
    ...(oneUnit ? [] : [l.unit]),
    ...side(l.a, l.spreadA, l.nA),
    ...side(l.b, l.spreadB, l.nB),
    l.ratio === null || l.ratio === undefined ? '-' : formatTimes(l.ratio),
    ...(intervals ? [formatInterval(l.ci), formatP(l.p), insignificantMark(l.significant)] : []),
    l.note,
  ];
}

/** A side's spread at a point: the farthest run from its centre, in percent of it; empty for one run. */
export function spreadText(centre: number | undefined, spread: SideSpread | undefined): string {
  if (spread === undefined || spread.runs < 2 || centre === undefined || centre <= 0) return '';
  const farthest = Math.max(spread.high / centre - 1, 1 - spread.low / centre) * 100;
  return `±${farthest >= 10 ? Math.round(farthest) : Number(farthest.toFixed(1))}%`;
}

function pointLine(p: ComparisonPoint): Line {
  return {
    metric: p.metric,
    size:
      p.point !== undefined ? fioPointText(fioPointOf(p.point)) : p.req_size === undefined ? '' : String(p.req_size),
    unit: unitOf(p.metric),
    a: valueText(p.a),
    b: valueText(p.b),
    spreadA: spreadText(p.a, p.spread?.a),
    spreadB: spreadText(p.b, p.spread?.b),
    nA: p.spread ? String(p.spread.a.runs) : '',
    nB: p.spread ? String(p.spread.b.runs) : '',
    ratio: p.ratio,
    ci: p.ci,
    p: p.p,
    significant: p.significant,
    note: '',
  };
}

/** The geometric mean of some points' centres on each side: their ratio is the points' geometric-mean ratio. */
function centresOf(points: readonly ComparisonPoint[]): { a: string; b: string } {
  const g = (values: number[]) =>
    values.length === 0 || values.some((v) => !(v > 0))
      ? ''
      : derivedText(Math.exp(values.reduce((s, v) => s + Math.log(v), 0) / values.length));
  return { a: g(points.map((p) => p.a!)), b: g(points.map((p) => p.b!)) };
}

const emptyLine = (metric: string): Line => ({
  metric,
  size: '',
  unit: '',
  a: '',
  b: '',
  spreadA: '',
  spreadB: '',
  nA: '',
  nB: '',
  ratio: undefined,
  ci: undefined,
  p: undefined,
  significant: undefined,
  note: '',
});

function metricLine(metric: Metric, m: MetricRatio, points: readonly ComparisonPoint[], bySize: boolean): Line {
  return {
    ...emptyLine(bySize ? metric : `${metric} geomean`),
    size: 'geomean',
    unit: m.unit,
    ...centresOf(points),
    ratio: m.ratio,
    ci: m.ci,
    p: m.p,
    significant: m.significant,
    note: `${plural(m.points, 'point')}, ${formatTimesRange(m.min, m.max)}`,
  };
}

function summaryLine(c: Comparison, layout: Layout): Line {
  const [metric, size] = layout.bySize ? [c.metric, 'geomean'] : ['geomean', ''];
  return {
    ...emptyLine(metric),
    size,
    // Centres of one unit only: a geometric mean over MB/s and ms is no figure.
    ...(layout.oneUnit !== undefined ? centresOf(pairedRows(c)) : {}),
    ratio: c.ratio,
    ci: c.ci,
    p: c.p,
    significant: c.significant,
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

/** Footnotes of points, each text once, lettered in the order the rows first need them. */
class PointNotes {
  readonly notes: TableNote[] = [];
  private readonly byText = new Map<string, string>();

  marksOf(p: ComparisonPoint): string[] {
    const texts = [...(p.nearResolution ? [nearResolutionText(p.metric)] : []), ...(p.notes ?? [])];
    return texts.map((text) => {
      let mark = this.byText.get(text);
      if (mark === undefined) {
        this.byText.set(text, (mark = footnoteLetter(this.byText.size)));
        this.notes.push({ mark, text, kind: 'point' });
      }
      return mark;
    });
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

function excludedText(p: ComparisonPoint): string {
  const values = [p.a !== undefined && `A ${valueText(p.a)}`, p.b !== undefined && `B ${valueText(p.b)}`]
    .filter(Boolean)
    .join(', ');
  const notes = p.notes && p.notes.length > 0 ? `; ${p.notes.join('; ')}` : '';
  const unit = unitOf(p.metric) ? ` ${unitOf(p.metric)}` : '';
  return `${pointName(p)}: ${p.excluded}${values ? ` (${values}${unit})` : ''}${notes}`;
}

/**
 * Which side is better per metric, the better side first: the metric's own
 * sentence when it is the only one, else a line each.
 */
function directionsText(c: Comparison): string[] {
  const ratios = metricRatiosOf(c);
  if (ratios.length === 1) {
    const [, m] = ratios[0]!;
    return [`direction: ${m.significant === false ? '~ ' : ''}${m.sentence}`];
  }
  return ratios.map(([metric, m]) => {
    const flip = m.ratio < 1;
    const [first, second] = flip ? [c.b.label, c.a.label] : [c.a.label, c.b.label];
    const how = `${m.unit}, ${m.direction === 'higher-better' ? 'higher' : 'lower'} is better`;
    return (
      `${metric} (${how}): ${first} is ${formatTimes(flip ? 1 / m.ratio : m.ratio)} ${second}` +
      `${m.significant === false ? ' (~ not significant)' : ''}`
    );
  });
}

function closingNotes(c: Comparison): TableNote[] {
  const setupWarnings = new Set(c.setups?.warnings ?? []);
  const advice = (text: string): TableNote => ({ mark: '', text, kind: 'advice' });
  return [
    ...c.excluded.map((p): TableNote => ({ mark: '', text: excludedText(p), kind: 'excluded' })),
    ...c.warnings.map((text, i): TableNote => ({
      mark: String(i + 1),
      text,
      kind: 'warning',
      ...(setupWarnings.has(i) ? { setups: true as const } : {}),
    })),
    ...(c.paired ? [advice(PAIRED_NOTE)] : []),
    ...(c.advice ? [advice(`runs needed: ${c.advice.note}`)] : []),
    ...directionsText(c).map(advice),
    advice(c.sentence),
  ];
}

export function comparisonTable(c: Comparison): ComparisonTable {
  const layout = layoutOf(c);
  const paired = pairedRows(c);
  const pointNotes = new PointNotes();
  // A geomean row per metric of several points; with one metric the summary is that row.
  const subtotals = c.metrics.length > 1;
  const rows: TableRow[] = [];
  for (const metric of c.metrics) {
    const mine = paired.filter((r) => r.metric === metric);
    for (const p of mine)
      rows.push({
        kind: 'point',
        metric,
        ...(p.req_size !== undefined ? { reqSize: p.req_size } : {}),
        ...(p.point !== undefined ? { point: p.point } : {}),
        cells: cellsOf(pointLine(p), layout),
        marks: pointNotes.marksOf(p),
      });
    const m = c.byMetric[metric];
    if (subtotals && m && m.points > 1)
      rows.push({
        kind: 'geomean',
        metric,
        cells: cellsOf(metricLine(metric, m, mine, layout.bySize), layout),
        marks: [],
      });
  }
  rows.push({ kind: 'summary', metric: c.metric, cells: cellsOf(summaryLine(c, layout), layout), marks: [] });
  return {
    title: `${c.a.label} (A) vs ${c.b.label} (B) on ${c.metric}`,
    columns: columnsOf(layout),
    rows,
    notes: [...pointNotes.notes, ...closingNotes(c)],
  };
}

// ---------------------------------------------------------------- text

/** A row's last cell with its marks: `9 points, 1.12x-2.25x (a,b)`. */
function withMarks(cells: readonly string[], marks: readonly string[]): string[] {
  if (marks.length === 0) return [...cells];
  const last = cells.at(-1)!;
  const said = `(${marks.join(',')})`;
  return [...cells.slice(0, -1), last === '' ? said : `${last} ${said}`];
}

/** Aligned columns: names and words left, numbers right; two spaces between; no trailing spaces. */
function alignedText(columns: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = columns.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (LEFT_COLUMNS.has(columns[i]!) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns), ...rows.map(line)];
}

/** The table as `benchdrop compare` prints it: the title, the table, then its notes by kind. */
export function tableText(t: ComparisonTable): string {
  const out = [
    t.title,
    '',
    ...alignedText(
      t.columns,
      t.rows.map((r) => withMarks(r.cells, r.marks)),
    ),
  ];
  const of = (kind: TableNote['kind']) => t.notes.filter((n) => n.kind === kind);
  const points = of('point');
  if (points.length > 0) out.push('', ...points.map((n) => `(${n.mark}) ${n.text}`));
  const excluded = of('excluded');
  if (excluded.length > 0)
    out.push('', `excluded (${plural(excluded.length, 'point')}):`, ...excluded.map((n) => `  ${n.text}`));
  const warnings = of('warning');
  if (warnings.length > 0) out.push('', 'notes:', ...warnings.map((n) => `  [${n.mark}] ${n.text}`));
  // The advice in one block, the sentence (the last note) on its own.
  const advice = of('advice').map((n) => n.text);
  if (advice.length > 1) out.push('', ...advice.slice(0, -1));
  if (advice.length > 0) out.push('', advice.at(-1)!);
  return out.join('\n');
}

// ---------------------------------------------------------------- CSV

/** A field as RFC 4180 writes it: quoted when it holds a quote, a comma or a line break, quotes doubled. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A note as the CSV's notes column says it: its mark first, as the text table shows it. */
function csvNote(n: TableNote): string {
  if (n.kind === 'point') return `(${n.mark}) ${n.text}`;
  if (n.kind === 'warning') return `[${n.mark}] ${n.text}`;
  if (n.kind === 'excluded') return `excluded: ${n.text}`;
  return n.text;
}

/**
 * RFC 4180: a header row (the columns, then `notes`), one record per row, CRLF
 * line ends. The notes column holds a row's own notes; the summary row's holds
 * every note about the whole comparison (excluded points, warnings, advice, the
 * sentence), one per line within the field. Every record has every field.
 */
export function tableCsv(t: ComparisonTable): string {
  const byMark = new Map(t.notes.filter((n) => n.kind === 'point').map((n) => [n.mark, n]));
  const whole = t.notes.filter((n) => n.kind !== 'point');
  const notesOf = (r: TableRow) =>
    [...r.marks.map((m) => byMark.get(m)!), ...(r.kind === 'summary' ? whole : [])].map(csvNote).join('\n');
  const records = [[...t.columns, 'notes'], ...t.rows.map((r) => [...r.cells, notesOf(r)])];
  return records.map((record) => record.map(csvField).join(',')).join('\r\n') + '\r\n';
}

// ---------------------------------------------------------------- Markdown

/** Text inside a GitHub Markdown table cell or paragraph: its markup characters escaped. */
function mdText(text: string): string {
  return text.replace(/[\\`*_~[\]<>|#]/g, (ch) => `\\${ch}`);
}

/**
 * A GitHub table under the title (a heading), marks in the last cell as
 * `(a)`; then the points' footnotes, the excluded points, the warnings as a
 * numbered list (the numbers are their marks), and the advice and the sentence
 * as paragraphs.
 */
export function tableMarkdown(t: ComparisonTable): string {
  const row = (cells: readonly string[]) => `| ${cells.map((c) => mdText(c)).join(' | ')} |`;
  const rule = `|${t.columns.map((c) => (LEFT_COLUMNS.has(c) ? ' --- ' : ' ---: ')).join('|')}|`;
  const out = [
    `### ${mdText(t.title)}`,
    '',
    row(t.columns),
    rule,
    ...t.rows.map((r) => row(withMarks(r.cells, r.marks))),
  ];
  const of = (kind: TableNote['kind']) => t.notes.filter((n) => n.kind === kind);
  const points = of('point');
  if (points.length > 0) out.push('', ...points.map((n) => `- **(${n.mark})** ${mdText(n.text)}`));
  const excluded = of('excluded');
  if (excluded.length > 0)
    out.push('', `Excluded (${plural(excluded.length, 'point')}):`, '', ...excluded.map((n) => `- ${mdText(n.text)}`));
  const warnings = of('warning');
  if (warnings.length > 0) out.push('', 'Notes:', '', ...warnings.map((n) => `${n.mark}. ${mdText(n.text)}`));
  // The advice a line each (a hard line break), the sentence a paragraph of its own.
  const advice = of('advice').map((n) => mdText(n.text));
  if (advice.length > 1) out.push('', advice.slice(0, -1).join('  \n'));
  if (advice.length > 0) out.push('', advice.at(-1)!);
  return out.join('\n') + '\n';
}

/** A comparison printed in a format: one place for the CLI and the API. */
export function printComparison(c: Comparison, format: TableFormat): string {
  const t = comparisonTable(c);
  return format === 'csv' ? tableCsv(t) : format === 'md' ? tableMarkdown(t) : tableText(t);
}
