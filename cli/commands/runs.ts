/**
 * `benchdrop runs [--device GLOB] [--format F] [--limit N] [--json]`: the runs a
 * lab holds (GET /runs), newest as the API orders them, with the object each came
 * from. Run ids are what `compare run=ID ...` takes.
 */
import { MAX_PAGE, type RunListing } from '../../shared/api.ts';
import { apiClientFor, guarded, plural, shortTime, type CliDeps } from '../context.ts';
import { CliError, type Output } from '../io.ts';
import { renderTable } from '../table.ts';
import type { TargetFlags } from '../target.ts';

export interface RunsOptions extends TargetFlags {
  device?: string;
  format?: string;
  limit?: string | number;
  json?: boolean;
}

export function runsCommand(options: RunsOptions, io: Output, deps: CliDeps = {}): Promise<number> {
  return guarded(io, async () => {
    const limit = options.limit === undefined ? undefined : Number(options.limit);
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= MAX_PAGE)) throw new CliError(`--limit ${options.limit}: expected a whole number from 1 to ${MAX_PAGE}`);
    const api = await apiClientFor(options, deps);
    const body = await api.get<{ runs: RunListing[] }>('/runs', { device: options.device, format: options.format, limit });
    if (options.json) {
      io.out(JSON.stringify(body, null, 2));
      return 0;
    }
    const runs = body.runs ?? [];
    if (runs.length === 0) {
      const filter = [options.device && `device ${options.device}`, options.format && `format ${options.format}`].filter(Boolean).join(', ');
      io.out(filter ? `no runs match ${filter}` : 'no runs yet: upload logs with `benchdrop upload FILE... --device LABEL`');
      return 0;
    }
    const rows = runs.map((r) => [r.runId, r.device, r.format, nameHost(r), shortTime(r.time), r.source?.key]);
    io.out(renderTable(['run id', 'device', 'format', 'name/host', 'time', 'key'], rows, ''));
    const shown = plural(runs.length, 'run');
    io.out(limit !== undefined ? (runs.length >= limit ? `${shown} (the first ${limit}; raise --limit, up to ${MAX_PAGE})` : shown) : runs.length >= 100 ? `${shown} (the API's first page; use --limit up to ${MAX_PAGE})` : shown);
    return 0;
  });
}

function nameHost(run: RunListing): string {
  const parts = [run.name, run.host].filter((p): p is string => Boolean(p));
  return [...new Set(parts)].join(' @ ') || '-';
}
