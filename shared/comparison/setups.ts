/**
 * The two sides' runs side by side: one RunSetup per run of each side, from
 * what its observations carry (their facts and RunDescription), and the setup
 * fields whose values differ across them.
 *
 *   { runId: 'r1', label: 'scsi2sd_redux', devices: ['scsi2sd_redux'], format: 'diskperf',
 *     platform: 'irix', version: 'IRIX 6.5', host: 'IRIS', date: '2020-04-03T21:10:13',
 *     parameters: { time: 60, direct: 0, 'file size': 1073741824 }, tags: {} }
 *   { runId: 'r2', label: 'x4100', devices: ['c0t0d0', 'c0t1d0'], format: 'iostat',
 *     platform: 'solaris', command: 'iostat -xnz 5 2', samples: 12,
 *     timeRange: { first: '...', last: '...' }, tags: { rpm: '10000' } }
 *   differs: ['format', 'platform', 'parameters.time', 'tags.rpm']
 */
import type { Format, Platform } from '../model.ts';
import type { Observation } from './observations.ts';

export interface RunSetup {
  runId: string;
  label: string;
  /** iostat: the native devices of the run on this side (`sda`); diskperf: its label. */
  devices: string[];
  format: Format;
  platform?: Platform;
  /** The OS and its release or kernel as the log prints them. */
  version?: string;
  host?: string;
  /** The first sample's time, or when the diskperf run started. */
  date?: string;
  /** The iostat command line, when the log holds it. */
  command?: string;
  context?: string[];
  /** diskperf: what it was asked to do, as printed (`file size` in bytes); fio: its jobs' options and version. */
  parameters?: Record<string, string | number>;
  /** The uploaded object's size in bytes when the store has it, else diskperf's file size. */
  fileSizeBytes?: number;
  tags: Record<string, string>;
  /** iostat: the samples behind the means (the most of the run's devices). */
  samples?: number;
  timeRange?: { first: string; last: string };
}

export interface Setups {
  a: RunSetup[];
  b: RunSetup[];
  /** The setup fields whose values differ across the runs of both sides (`parameters.time`, `tags.rpm`). */
  differs: string[];
  /** Indices into Comparison.warnings of those about how the runs differ (the sides' setups). */
  warnings: number[];
}

/**
 * The fields `differs` looks at: how a run was made. Not its identity (runId,
 * label, devices), when it ran (date, timeRange) or what came of it (samples,
 * the object's size): those differ between any two runs. A diskperf run's
 * context is its own command line, naming its label: its parameters say how it
 * ran, so context counts among iostat runs only (as in the warnings).
 */
const COMPARED_FIELDS = ['format', 'platform', 'version', 'host', 'command'] as const;

/** One RunSetup per run of a side, in date order (then by id). */
export function runSetups(side: readonly Observation[]): RunSetup[] {
  const byRun = new Map<string, Observation[]>();
  for (const o of side) {
    const run = byRun.get(o.runId);
    if (run) run.push(o);
    else byRun.set(o.runId, [o]);
  }
  return [...byRun.values()].map(setupOf).sort(byDateThenId);
}

function byDateThenId(x: RunSetup, y: RunSetup): number {
  const dx = x.date ?? '';
  const dy = y.date ?? '';
  if (dx !== dy) return dx < dy ? -1 : 1;
  return x.runId < y.runId ? -1 : x.runId > y.runId ? 1 : 0;
}

function setupOf(run: readonly Observation[]): RunSetup {
  const first = run[0]!;
  const about = first.about ?? {};
  const devices =
    first.format === 'iostat'
      ? [...new Set(run.map((o) => o.native ?? o.device))].sort()
      : [first.label ?? first.device];
  const samples = Math.max(0, ...run.map((o) => o.samples ?? 0));
  const fileSize = first.setup?.['file size'];
  const fileSizeBytes = about.objectSize ?? (typeof fileSize === 'number' ? fileSize : undefined);
  return {
    runId: first.runId,
    label: first.label ?? first.device,
    devices,
    format: first.format,
    ...(first.platform !== undefined ? { platform: first.platform } : {}),
    ...(about.version !== undefined ? { version: about.version } : {}),
    ...(first.host !== undefined ? { host: first.host } : {}),
    ...(about.from !== undefined ? { date: about.from } : {}),
    ...(about.command !== undefined ? { command: about.command } : {}),
    ...(first.context !== undefined && first.context.length > 0 ? { context: [...first.context] } : {}),
    ...(first.setup !== undefined ? { parameters: { ...first.setup } } : {}),
    ...(fileSizeBytes !== undefined ? { fileSizeBytes } : {}),
    tags: { ...(about.tags ?? {}) },
    ...(first.format === 'iostat' && samples > 0 ? { samples } : {}),
    ...(about.from !== undefined && about.to !== undefined ? { timeRange: { first: about.from, last: about.to } } : {}),
  };
}

/**
 * The setup fields that take more than one value across these runs (a field
 * absent from some runs counts as one value more): the plain fields,
 * `context` among the iostat runs, `parameters.NAME` among the diskperf and fio runs
 * and `tags.NAME`, by name.
 */
export function differingFields(runs: readonly RunSetup[]): string[] {
  const varies = (values: readonly unknown[]) => new Set(values.map((v) => JSON.stringify(v ?? null))).size > 1;
  const out: string[] = COMPARED_FIELDS.filter((field) => varies(runs.map((r) => r[field])));
  if (varies(runs.filter((r) => r.format === 'iostat').map((r) => r.context))) out.push('context');
  const diskperf = runs.filter((r) => r.format === 'diskperf' || r.format === 'fio');
  const parameterNames = [...new Set(diskperf.flatMap((r) => Object.keys(r.parameters ?? {})))].sort();
  for (const name of parameterNames)
    if (varies(diskperf.map((r) => r.parameters?.[name]))) out.push(`parameters.${name}`);
  const tagNames = [...new Set(runs.flatMap((r) => Object.keys(r.tags)))].sort();
  for (const name of tagNames) if (varies(runs.map((r) => r.tags[name]))) out.push(`tags.${name}`);
  return out;
}

/** Both sides' setups; `warnings` the indices of the warnings that are about them. */
export function setupsOf(a: readonly Observation[], b: readonly Observation[], warnings: number[]): Setups {
  const sa = runSetups(a);
  const sb = runSetups(b);
  return { a: sa, b: sb, differs: differingFields([...sa, ...sb]), warnings };
}
