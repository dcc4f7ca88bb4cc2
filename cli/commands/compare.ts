/**
 * `benchdrop compare A B [--metric M] [--format text|csv|md] [--json]`: how many
 * times better A is than B (GET /compare), as the comparison's table
 * (shared/comparison/table.ts, which defines the formats; the CLI prints the
 * API's JSON in them, so --html and --json see the same answer):
 *
 *   - text (the default): the sides and how to read the table, then the table
 *     (per point each side's centre, spread and runs, the ratio, its 95% interval,
 *     p and `~`; a geomean row per metric; the summary), its notes (footnotes,
 *     excluded points, warnings, advice, the sentence), and last the runs' setups
 *     side by side, `*` marking the fields that differ;
 *   - csv, md: the same table as RFC 4180 CSV or GitHub Markdown, nothing more.
 *
 * `--json` prints the API's Comparison unchanged; `--html [FILE]` also writes the
 * report page's view of this comparison alone (charts and tables, no uploads) as
 * one self-contained file, for labs on AWS where no page is served. Without a
 * FILE it goes to `--out PATH`, else to a fresh folder in the OS temp dir, so a
 * report never lands in the working tree unasked; the path is said on stderr.
 * `--share` also freezes the comparison in the lab (POST /reports) and prints the
 * link that serves it (GET /reports/{id}), unchanged by later uploads.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  comparisonTable,
  LEVEL,
  printComparison,
  TABLE_FORMATS,
  tableText,
  type Comparison,
  type RunSetup,
  type SideSummary,
  type TableFormat,
} from '../../shared/comparison/index.ts';
import type { CreatedReport } from '../../shared/api.ts';
import { levelText, plural } from '../../shared/comparison/format.ts';
import { isMetricSpec, LOAD_METRICS, METRIC_SPEC_HELP } from '../../shared/metrics.ts';
import { apiClientFor, guarded, type CliDeps } from '../context.ts';
import { CliError, type Output } from '../io.ts';
import { clip, renderTable } from '../table.ts';
import type { TargetFlags } from '../target.ts';

export interface CompareCommandOptions extends TargetFlags {
  metric?: string;
  /** text (the default), csv or md. */
  format?: string;
  json?: boolean;
  /** A path, or true for `--html` given without one. */
  html?: string | boolean;
  out?: string;
  /** Freeze the comparison in the lab (POST /reports) and print its link. */
  share?: boolean;
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
    const format = formatOf(options);
    const target = htmlTarget(options);
    const api = await apiClientFor(options, deps, io);
    const comparison = await api.get<Comparison>('/compare', { a, b, metric });
    io.out(
      options.json
        ? JSON.stringify(comparison, null, 2)
        : format === 'text'
          ? renderComparison(comparison)
          : printComparison(comparison, format),
    );
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
    if (options.share) {
      const report = await api.request<CreatedReport>('POST', '/reports', {}, { a, b, metric });
      const frozen = `frozen ${report.createdAt}: later uploads do not change it`;
      const line = `shared: ${api.target.url}${report.path} (${frozen})`;
      // On stdout after the text table; beside JSON, CSV or Markdown it would spoil what a script reads.
      if (format === 'text' && !options.json) io.out(line);
      else io.err(line);
    }
    return 0;
  });
}

/** The --format asked for (text by default); --json is a format of its own. */
function formatOf(options: CompareCommandOptions): TableFormat {
  const format = options.format ?? 'text';
  if (!(TABLE_FORMATS as readonly string[]).includes(format))
    throw new CliError(`--format ${format}: expected ${TABLE_FORMATS.join(', ')}`);
  if (options.json && options.format !== undefined)
    throw new CliError(`--json and --format ${format}: choose one (--json prints the API's JSON)`);
  return format as TableFormat;
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

const LEVEL_TEXT = levelText(LEVEL);

/** The text the CLI prints: the sides and how to read the table, the table and its notes, the setups. */
export function renderComparison(c: Comparison): string {
  const table = comparisonTable(c);
  return [...legend(c, table.columns), '', tableText(table), ...setupsText(c)].join('\n');
}

/** Above the table: the sides, and how to read the columns at hand. */
function legend(c: Comparison, columns: readonly string[]): string[] {
  const out: string[] = [describeSide('A', c.a), describeSide('B', c.b)];
  out.push('ratio: how many times better A is (A/B for throughput and IOPS, B/A for times)');
  out.push(
    `       queue lengths and %util (${LOAD_METRICS.join(', ')}) are only shown when asked by name with --metric`,
  );
  if (columns.includes('A spread'))
    out.push('spread: the farthest run from the centre (the median of the runs), in percent of it; n: runs');
  if (columns.includes('p')) {
    out.push(`interval: the ratio's ${LEVEL_TEXT} interval (each row on its own); p: Holm-corrected over the points`);
    out.push(`       (over the metrics on geomean rows); ~: not significant (p >= ${(1 - LEVEL).toFixed(2)})`);
  }
  return out;
}

/** A setup field as the compact table shows it, and its name in `differs`. */
interface SetupColumn {
  header: string;
  field: string;
  cell: (s: RunSetup, differs: ReadonlySet<string>) => string;
}

/** `k=v` pairs of a record, a `*` after those whose key differs across the runs. */
const pairs = (prefix: string, record: Record<string, string | number> | undefined, differs: ReadonlySet<string>) =>
  Object.entries(record ?? {})
    .map(([k, v]) => `${k}=${v}${differs.has(`${prefix}.${k}`) ? '*' : ''}`)
    .join(' ');

const SETUP_COLUMNS: readonly SetupColumn[] = [
  { header: 'run', field: 'runId', cell: (s) => s.runId },
  { header: 'label', field: 'label', cell: (s) => s.label },
  { header: 'devices', field: 'devices', cell: (s) => clip(s.devices.join(' '), 30) },
  { header: 'format', field: 'format', cell: (s) => s.format },
  { header: 'platform', field: 'platform', cell: (s) => s.platform ?? '' },
  { header: 'version', field: 'version', cell: (s) => s.version ?? '' },
  { header: 'host', field: 'host', cell: (s) => s.host ?? '' },
  { header: 'date', field: 'date', cell: (s) => s.date ?? '' },
  { header: 'samples', field: 'samples', cell: (s) => (s.samples === undefined ? '' : String(s.samples)) },
  { header: 'command', field: 'command', cell: (s) => clip(s.command ?? '', 30) },
  { header: 'context', field: 'context', cell: (s) => clip((s.context ?? []).join('; '), 40) },
  { header: 'parameters', field: 'parameters', cell: (s, d) => pairs('parameters', s.parameters, d) },
  { header: 'tags', field: 'tags', cell: (s, d) => pairs('tags', s.tags, d) },
];

/** After the notes: one line per run of each side, the columns some run fills, `*` on what differs. */
function setupsText(c: Comparison): string[] {
  // An API older than the setups answers without them.
  if (c.setups === undefined) return [];
  const runs = [...c.setups.a.map((s) => ['A', s] as const), ...c.setups.b.map((s) => ['B', s] as const)];
  if (runs.length === 0) return [];
  const differs = new Set(c.setups.differs);
  const differsIn = (field: string) => differs.has(field) || [...differs].some((d) => d.startsWith(`${field}.`));
  const columns = SETUP_COLUMNS.filter((col) => runs.some(([, s]) => col.cell(s, differs) !== ''));
  const header = ['side', ...columns.map((col) => `${col.header}${differsIn(col.field) ? '*' : ''}`)];
  const rows = runs.map(([side, s]) => [side, ...columns.map((col) => col.cell(s, differs))]);
  const note = differs.size > 0 ? `* differs: ${c.setups.differs.join(', ')}` : 'the runs share every setup field';
  return ['', `setups (${plural(runs.length, 'run')}; ${note}):`, renderTable(header, rows)];
}
