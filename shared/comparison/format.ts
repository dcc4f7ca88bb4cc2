/**
 * How comparisons print their numbers and counts, for every reader (the API's
 * sentences, the CLI, the report page): no imports but fio-point.ts (which has
 * none), so the page can bundle it.
 */
import { fioPointOf, fioPointText } from '../fio-point.ts';

/** Printing steps a value must exceed for its ratio to be more than rounding. */
export const RESOLUTION_STEPS = 5;

/** What the CLI and the page say of a comparison whose devices were paired by name. */
export const PAIRED_NOTE = 'devices paired disk with disk: each device of A with the device of the same name on B';

/** A count and its noun: `1 run`, `2 runs`, `3 series`. */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** A ratio as sentences print it: 1.90, 12.3, 140; tiny ones keep two significant digits. */
export function formatRatio(r: number | null | undefined): string {
  if (r === null || r === undefined || !Number.isFinite(r)) return '-';
  if (r >= 100) return r.toFixed(0);
  if (r >= 10) return r.toFixed(1);
  if (r >= 0.01) return r.toFixed(2);
  return r.toPrecision(2);
}

/** A ratio as a number of times: `1.90x`. */
export function formatTimes(r: number | null | undefined): string {
  return `${formatRatio(r)}x`;
}

/** A range of ratios: `1.26x-1.34x`. */
export function formatTimesRange(low: number | null | undefined, high: number | null | undefined): string {
  return `${formatTimes(low)}-${formatTimes(high)}`;
}

/** An interval of a ratio: `[1.26x-1.34x]`; empty without one. */
export function formatInterval(ci: { low: number; high: number } | null | undefined): string {
  return ci ? `[${formatTimesRange(ci.low, ci.high)}]` : '';
}

/** A p-value as the API rounds it (3 significant digits); tiny ones as a bound; empty without one. */
export function formatP(p: number | undefined): string {
  if (p === undefined) return '';
  return p < 0.001 ? '<0.001' : String(p);
}

/** benchstat's `~`: the difference is not significant (false, not merely unknown). */
export function insignificantMark(significant: boolean | null | undefined): string {
  return significant === false ? '~' : '';
}

/** A point by name: its metric, and its request size or fio point when it has one (`fwd_wt at 4096`). */
export function pointName(p: { metric: string; req_size?: number | undefined; point?: string | undefined }): string {
  if (p.point !== undefined) return `${p.metric} at ${fioPointText(fioPointOf(p.point))}`;
  return p.req_size === undefined ? p.metric : `${p.metric} at ${p.req_size}`;
}

/** A confidence level as a percentage: 0.95 -> `95%`. */
export function levelText(level: number): string {
  return `${Math.round(level * 100)}%`;
}
