/**
 * What the lab commands share: their dependencies (injectable, so tests run them
 * in-process against real local peers) and turning failures into `error: ...`.
 */
import { plural } from '../shared/comparison/format.ts';
import { LabelError } from '../shared/labels.ts';
import { DEFAULT_PAGE, MAX_PAGE } from '../shared/api.ts';
import { ApiClient, type ApiClientDeps, type Query } from './api-client.ts';
import { CliError, type Output } from './io.ts';
import { Target, type TargetDeps, type TargetFlags } from './target.ts';

export interface CliDeps extends TargetDeps, ApiClientDeps {
  /** upload --wait: time between polls of GET /uploads (1 s). */
  pollIntervalMs?: number;
}

/** The API client of the lab the flags name (or that is found without them, announced on stderr). */
export async function apiClientFor(flags: TargetFlags, deps: CliDeps, io: Output): Promise<ApiClient> {
  const target = new Target(flags, deps);
  const api = new ApiClient(await target.api(), deps);
  announceTarget(target, io);
  return api;
}

/** Says which lab a command uses when no flag named it: one line on stderr, results stay alone on stdout. */
export function announceTarget(target: Target, io: Output): void {
  const line = target.announcement();
  if (line !== undefined) io.err(line);
}

/** Runs a command; a failure it can explain is printed as `error: <message>` with exit code 1. */
export async function guarded(io: Output, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`error: ${error.message}`);
      return error.exitCode;
    }
    if (error instanceof LabelError) {
      io.err(`error: ${error.message}`);
      return 1;
    }
    io.err(`error: ${(error as Error).message ?? String(error)}`);
    return 1;
  }
}

/** What an empty lab's listings say: how logs get in. */
export const NO_LOGS_YET = 'upload logs with `benchdrop upload FILE... --device LABEL`';

/** --limit as given: a whole number of `nouns`, 1 or more; the API's default page size without it. */
export function limitOption(value: string | number | undefined, nouns: string): number {
  const limit = value === undefined ? DEFAULT_PAGE : Number(value);
  if (!(Number.isSafeInteger(limit) && limit >= 1))
    throw new CliError(`--limit ${value}: expected a whole number of ${nouns}, 1 or more`);
  return limit;
}

/** A listing's --json: its items under their field, and `next`, which goes on after them with the same filters. */
export function listingJson(field: string, items: readonly unknown[], next: string | undefined): string {
  return JSON.stringify({ [field]: items, ...(next !== undefined ? { next } : {}) }, null, 2);
}

/** ISO times without milliseconds; anything else as given. */
export function shortTime(time: string | undefined): string {
  if (!time) return '-';
  return time.replace(/\.\d+Z$/, 'Z');
}

/** A log time (shared/store/run-items.ts samplesTime): `Z` is UTC, no zone is the measuring host's clock. */
const LOG_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})(Z?)$/;

/**
 * The samples' time range as a person reads it, its zone said:
 * `2024-01-15 10:00:01–10:00:11 UTC`, `2019-12-14 13:53:04 local` (the log gave
 * no zone), the second date only when it differs; `-` for none.
 */
export function timeRange(from: string | undefined, to: string | undefined): string {
  if (from === undefined) return '-';
  const start = LOG_TIME.exec(from);
  const end = to === undefined ? start : LOG_TIME.exec(to);
  // Not a shape the store writes, or the two in different zones: as given.
  if (!start || !end || start[4] !== end[4]) return to === undefined ? from : `${from} – ${to}`;
  const seconds = start[3] !== ':00' || end[3] !== ':00';
  const clock = (m: RegExpExecArray) => m[2]! + (seconds ? m[3]! : '');
  const zone = start[4] === 'Z' ? 'UTC' : 'local';
  if (to === undefined || to === from) return `${start[1]} ${clock(start)} ${zone}`;
  if (end[1] === start[1]) return `${start[1]} ${clock(start)}–${clock(end)} ${zone}`;
  return `${start[1]} ${clock(start)} – ${end[1]} ${clock(end)} ${zone}`;
}

/** A listing route as `moreText` pages it: GET `path` answers `{ [field]: [...], next? }`. */
export interface Listing {
  path: string;
  field: string;
  /** What one item is called: `run`, `row`, `upload`. */
  noun: string;
  /** The flags that narrow it, for the hint: `--device or --format`. */
  narrowedBy: string;
}

/**
 * What lies past --limit, counted on one more page (one request, at most
 * MAX_PAGE items): "37 more" and the --limit that shows them all, or "at least
 * 1000 more" when the listing goes on past that page too.
 */
export async function moreText(
  api: ApiClient,
  listing: Listing,
  filters: Query,
  shown: number,
  next: string,
): Promise<string> {
  const rest = await api.get<Record<string, unknown[] | string | undefined>>(listing.path, {
    ...filters,
    limit: MAX_PAGE,
    next,
  });
  const more = (rest[listing.field] as unknown[] | undefined)?.length ?? 0;
  const head = `${plural(shown, listing.noun)} shown`;
  const narrow = `${listing.narrowedBy} narrows the list`;
  if (rest['next'] === undefined)
    return more === 0 ? plural(shown, listing.noun) : `${head}, ${more} more: --limit ${shown + more} shows them all`;
  if (more === 0) return `${head}, and the listing goes on: raise --limit, or ${narrow}`;
  return `${head}, at least ${more} more: --limit ${shown + more} shows ${more} of them, ${narrow}`;
}
