/**
 * `benchdrop parse FILE... [--json]`: offline, no lab needed. Per file: the format
 * found, each run with its context, series and sample counts, warnings, and a
 * compact table; --json prints the canonical records. A file that cannot be parsed
 * is reported and the others still are; the exit code says whether all parsed.
 * Everything that came from a file (names, context lines, devices, messages) is
 * printed escaped (shared/printable.ts): a log cannot move the cursor or ring the bell.
 */
import { plural } from '../../shared/comparison/format.ts';
import { DISKPERF_METRICS, FIO_METRICS, IOSTAT_METRICS, type IostatMetric } from '../../shared/metrics.ts';
import { fioPointText } from '../../shared/fio-point.ts';
import type { DiskperfRun, FioRun, IostatRun, ParsedFile, Run } from '../../shared/model.ts';
import { isInternalParseError, isParseError, parseFile } from '../../shared/parsers/index.ts';
import { printable, printableJson } from '../../shared/printable.ts';
import type { Output } from '../io.ts';
import { renderTable } from '../table.ts';

export interface ParseCommandOptions {
  json?: boolean;
}

export type { Output };

export async function parseCommand(
  files: readonly string[],
  options: ParseCommandOptions,
  io: Output,
): Promise<number> {
  let failures = 0;
  const parsed: (ParsedFile | { source: string; error: { message: string; line: number } })[] = [];
  for (const file of files) {
    try {
      // The summary view needs no samples: large logs then parse in flat memory, on every core.
      const result = await parseFile(file, { keepSamples: options.json === true });
      parsed.push(result);
      if (!options.json) io.out(describeFile(result));
    } catch (error) {
      failures++;
      const message = isParseError(error) ? error.message : printable(`${file}: ${(error as Error).message}`);
      parsed.push({
        source: file,
        error: { message, line: isParseError(error) || isInternalParseError(error) ? error.line : 0 },
      });
      io.err(`error: ${message}`);
      if (isInternalParseError(error)) io.err(bugReport(error.cause));
    }
  }
  if (options.json) io.out(printableJson(files.length === 1 && failures === 0 ? parsed[0] : parsed, 2));
  else if (files.length > 1)
    io.out(`${files.length - failures} of ${files.length} files parsed${failures ? `, ${failures} failed` : ''}`);
  return failures === 0 ? 0 : 1;
}

/** What a person can send with a bug report: the original error and its stack, escaped line by line. */
function bugReport(cause: unknown): string {
  const trace = cause instanceof Error ? (cause.stack ?? `${cause.name}: ${cause.message}`) : String(cause);
  return ['a bug in benchdrop, not in the file; please report it with this:', ...trace.split('\n')]
    .map((line) => `  ${printable(line)}`)
    .join('\n');
}

function describeFile(file: ParsedFile): string {
  const lines = [`${printable(file.source)}: ${file.format}, ${plural(file.runs.length, 'run')}, ${file.lines} lines`];
  for (const run of file.runs) lines.push(describeRun(run));
  return lines.join('\n') + '\n';
}

function describeRun(run: Run): string {
  const out: string[] = [];
  const head = run.format === 'diskperf' ? diskperfHead(run) : run.format === 'fio' ? fioHead(run) : iostatHead(run);
  out.push(`  run ${run.index}: ${head} (lines ${run.startLine}-${run.endLine})`);
  for (const c of run.context) out.push(`    context: ${printable(c)}`);
  out.push(run.format === 'diskperf' ? diskperfTable(run) : run.format === 'fio' ? fioTable(run) : iostatTable(run));
  for (const w of run.warnings) out.push(`    warning: line ${w.line}: ${printable(w.message)}`);
  return out.join('\n');
}

function diskperfHead(run: DiskperfRun): string {
  const parts = [
    run.name,
    run.dialect,
    run.meta.host && `host ${run.meta.host}`,
    run.meta.startedAt,
    `${run.rows.length} request sizes`,
  ];
  return printable(parts.filter(Boolean).join(', '));
}

function diskperfTable(run: DiskperfRun): string {
  const columns = DISKPERF_METRICS.filter((m) => run.columns.includes(m));
  const rows = run.rows.map((r) => [r.req_size, ...columns.map((m) => r.values[m])]);
  return renderTable(['req_size', ...columns.map((c) => `${c} MB/s`)], rows, '    ');
}

function fioHead(run: FioRun): string {
  const options = Object.entries(run.meta.options ?? {}).map(([k, v]) => `${k} ${v}`);
  const parts = [
    run.meta.version,
    run.dialect,
    run.meta.host && `host ${run.meta.host}`,
    run.meta.time,
    ...options,
    `${plural(run.meta.jobs, 'job')} at ${plural(run.rows.length, 'point')}`,
  ];
  return printable(parts.filter(Boolean).join(', '));
}

/** A row per point: bandwidth, IOPS and latency of each direction the output measured. */
function fioTable(run: FioRun): string {
  const shown = FIO_METRICS.filter((m) => run.columns.includes(m) && /_(bw|iops|lat|p99)$/.test(m));
  const rows = run.rows.map((r) => [printable(fioPointText(r.point)), ...shown.map((m) => r.values[m])]);
  const unit = (m: string) => (m.endsWith('_bw') ? ' MiB/s' : m.endsWith('_iops') ? '' : ' us');
  return renderTable(['point', ...shown.map((m) => `${m.replace(/^fio_/, '')}${unit(m)}`)], rows, '    ');
}

function iostatHead(run: IostatRun): string {
  const samples = run.series.reduce((n, s) => n + s.sampleCount, 0);
  const parts = [
    run.name || undefined,
    `${run.platform} ${run.dialect}`,
    plural(run.reports, 'report'),
    `${run.series.length} series`,
    `${samples} samples`,
  ];
  return printable(parts.filter(Boolean).join(', '));
}

/** Summary means per device, for the metrics this run carries. */
function iostatTable(run: IostatRun): string {
  const metrics = IOSTAT_METRICS.filter((m) => run.series.some((s) => s.summary[m] !== undefined));
  const rows = run.series.map((s) => [
    printable(s.device),
    String(s.sampleCount),
    ...metrics.map((m: IostatMetric) => s.summary[m]?.mean),
  ]);
  const note = run.reports > 1 ? '    (means over reports 1..n; report 0 counts since boot)\n' : '';
  return note + renderTable(['device', 'samples', ...metrics], rows, '    ');
}
