/**
 * `benchdrop runs [--device GLOB] [--format F] [--limit N] [--json]`: the runs a
 * lab holds (GET /runs, as many pages as --limit asks for, 100 by default), in
 * the API's order (an exact label's newest first; a pattern's label by label),
 * a row per run (per disk when --device names disk labels only): its device,
 * host, the samples' time range (its zone said), context, tags and the object
 * it came from, and how many more there are past --limit.
 * Run ids are what `compare run=ID ...` takes.
 */
import type { RunListing } from '../../shared/api.ts';
import type { Query } from '../api-client.ts';
import { plural } from '../../shared/comparison/format.ts';
import {
  apiClientFor,
  guarded,
  limitOption,
  listingJson,
  moreText,
  NO_LOGS_YET,
  timeRange,
  type CliDeps,
  type Listing,
} from '../context.ts';
import type { Output } from '../io.ts';
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
    const limit = limitOption(options.limit, 'runs');
    const api = await apiClientFor(options, deps, io);
    const filters: Query = { device: options.device, format: options.format };
    const { items: runs, next } = await api.list<RunListing>('/runs', 'runs', filters, limit);
    if (options.json) {
      io.out(listingJson('runs', runs, next));
      return 0;
    }
    if (runs.length === 0 && next === undefined) {
      const filter = [options.device && `device ${options.device}`, options.format && `format ${options.format}`]
        .filter(Boolean)
        .join(', ');
      io.out(filter ? `no runs match ${filter}` : `no runs yet: ${NO_LOGS_YET}`);
      return 0;
    }
    if (runs.length > 0)
      io.out(
        renderTable(['run id', 'device', 'format', 'host', 'measured', 'context', 'tags', 'key'], runs.map(runRow), ''),
      );
    const distinct = new Set(runs.map((r) => r.runId)).size;
    if (distinct < runs.length) {
      // Disk labels listed: a run is a row per disk it has among them.
      io.out(
        next === undefined
          ? `${plural(runs.length, 'row')}: ${plural(distinct, 'run')}, a row per disk`
          : await moreText(api, { ...RUNS_LISTING, noun: 'row' }, filters, runs.length, next),
      );
    } else
      io.out(
        next === undefined ? plural(runs.length, 'run') : await moreText(api, RUNS_LISTING, filters, runs.length, next),
      );
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
