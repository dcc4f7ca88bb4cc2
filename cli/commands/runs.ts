/**
 * `benchdrop runs [--device GLOB] [--format F] [--limit N] [--json]`: the runs a
 * lab holds (GET /runs, as many pages as --limit asks for, 100 by default), in
 * the API's order (an exact label's newest first; a pattern's label by label),
 * with the object each came from, and how many more there are past --limit.
 * Run ids are what `compare run=ID ...` takes.
 */
import { DEFAULT_PAGE, MAX_PAGE, type RunListing, type RunsPage } from '../../shared/api.ts';
import type { ApiClient, Query } from '../api-client.ts';
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
    const rows = runs.map((r) => [r.runId, r.device, r.format, nameHost(r), shortTime(r.time), r.source?.key]);
    if (runs.length > 0) io.out(renderTable(['run id', 'device', 'format', 'name/host', 'time', 'key'], rows, ''));
    io.out(next === undefined ? plural(runs.length, 'run') : await moreText(api, filters, runs.length, next));
    return 0;
  });
}

/**
 * What lies past --limit, counted on one more page (one request, at most
 * MAX_PAGE runs): "37 more" and the --limit that shows them all, or "at least
 * 256 more" when the listing goes on past that page too.
 */
async function moreText(api: ApiClient, filters: Query, shown: number, next: string): Promise<string> {
  const rest = await api.get<RunsPage>('/runs', { ...filters, limit: MAX_PAGE, next });
  const more = rest.runs.length;
  const head = `${plural(shown, 'run')} shown`;
  const narrow = '--device or --format narrows the list';
  if (rest.next === undefined) return more === 0 ? plural(shown, 'run') : `${head}, ${more} more: --limit ${shown + more} shows them all`;
  if (more === 0) return `${head}, and the listing goes on: raise --limit, or ${narrow}`;
  return `${head}, at least ${more} more: --limit ${shown + more} shows ${more} of them, ${narrow}`;
}

function nameHost(run: RunListing): string {
  const parts = [run.name, run.host].filter((p): p is string => Boolean(p));
  return [...new Set(parts)].join(' @ ') || '-';
}
