/**
 * How comparisons print their numbers, for every reader (the API's sentences,
 * the CLI, the report page): no Node imports, so the page can bundle it.
 */

/** Printing steps a value must exceed for its ratio to be more than rounding. */
export const RESOLUTION_STEPS = 5;

/** A ratio as sentences print it: 1.90, 12.3, 140; tiny ones keep two significant digits. */
export function formatRatio(r: number | null | undefined): string {
  if (r === null || r === undefined || !Number.isFinite(r)) return '-';
  if (r >= 100) return r.toFixed(0);
  if (r >= 10) return r.toFixed(1);
  if (r >= 0.01) return r.toFixed(2);
  return r.toPrecision(2);
}
