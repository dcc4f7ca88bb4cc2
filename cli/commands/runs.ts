/**
 * `benchdrop runs [--device GLOB] [--format F] [--limit N] [--json]`: the runs a
 * lab holds (GET /runs, as many pages as --limit asks for, 100 by default), in
 * the API's order (an exact label's newest first; a pattern's label by label),
 * a row per run (per disk when --device names disk labels only): its device,
 * host, the samples' time range (its zone said), context, tags and the object
 * it came from, and how many more there are past --limit.
 * Run ids are what `compare run=ID ...` takes.
 */
import { DEFAULT_PAGE, type RunListing } from '../../shared/api.ts';
import type { Query } from '../api-client.ts';
import { apiClientFor, guarded, moreText, plural, timeRange, type CliDeps, type Listing } from '../context.ts';
import { CliError, type Output } from '../io.ts';
import { clip, renderTable } from '../table.ts';
import type { TargetFlags } from '../target.ts';

const RUNS_LISTING: Listing = { path: '/runs', field: 'runs', noun: 'run', narrowedBy: '--device or --format' };

export interface RunsOptions extends TargetFlags {
  device?: string;
  format?: string;
  limit?: string | number;
  json?: boolean;
}

export function runsCommand(options: RunsOptions, io: Output, deps: CliDeps = {}): Promise<number> {
  return guarded(io, async () => {
    const limit = options.limit === undefined ? DEFAULT_PAGE : Number(options.limit);
    if (!(Number.isSafeInteger(limit) && limit >= 1)) throw new CliError(`--limit ${options.limit}: expected a whole number of runs, 1 or more`);
    const api = await apiClientFor(options, deps, io);
    const filters: Query = { device: options.device, format: options.format };
    const { items: runs, next } = await api.list<RunListing>('/runs', 'runs', filters, limit);
    if (options.json) {
      // `next` goes on after these runs: GET /runs with the same filters and next=<it>.
      io.out(JSON.stringify({ runs, ...(next !== undefined ? { next } : {}) }, null, 2));
      return 0;
    }
    if (runs.length === 0 && next === undefined) {
      const filter = [options.device && `device ${options.device}`, options.format && `format ${options.format}`].filter(Boolean).join(', ');
      io.out(filter ? `no runs match ${filter}` : 'no runs yet: upload logs with `benchdrop upload FILE... --device LABEL`');
      return 0;
    }
    if (runs.length > 0) io.out(renderTable(['run id', 'device', 'format', 'host', 'measured', 'context', 'tags', 'key'], runs.map(runRow), ''));
    const distinct = new Set(runs.map((r) => r.runId)).size;
    if (distinct < runs.length) {
      // Disk labels listed: a run is a row per disk it has among them.
      io.out(next === undefined ? `${plural(runs.length, 'row')}: ${plural(distinct, 'run')}, a row per disk` : await moreText(api, { ...RUNS_LISTING, noun: 'row' }, filters, runs.length, next));
    } else io.out(next === undefined ? plural(runs.length, 'run') : await moreText(api, RUNS_LISTING, filters, runs.length, next));
    return 0;
  });
}

/** Widest context and tags cells: enough to tell runs apart, the rest is in --json. */
const CONTEXT_WIDTH = 40;
const TAGS_WIDTH = 40;

function runRow(run: RunListing): string[] {
  return [
    run.runId,
    run.disks !== undefined ? `${run.device} (${plural(run.disks, 'disk')})` : run.device,
    run.format,
    run.host || '-',
    timeRange(run.from, run.to),
    clip(run.context.join('; '), CONTEXT_WIDTH) || '-',
    clip(
      Object.entries(run.tags)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
      TAGS_WIDTH,
    ) || '-',
    run.source.key,
  ];
}
