/**
 * What the iostat platform modules tell the table engine: how to recognise a
 * header line, and what each printed column means (unit, canonical metric, factor).
 *
 *   r/s w/s kr/s kw/s wait actv wsvc_t asvc_t %w %b device
 *
 * yields TableLayout { platform: 'solaris', dialect: 'solaris-xn', deviceAt: 'last',
 *   columns: [{ name: 'r/s', unit: 'ops/s', metric: 'read_iops', factor: 1 }, ...], optionalTail: 0 }.
 */
import type { IostatColumn, Platform } from '../model.ts';
import type { IostatMetric } from '../metrics.ts';

export type IostatPlatform = Exclude<Platform, 'irix'>;

export interface ColumnSpec {
  unit: string;
  metric?: IostatMetric;
  factor?: number;
}

/** A recognised header line. */
export interface TableLayout {
  platform: IostatPlatform;
  dialect: string;
  /** Where the device name stands in a row. */
  deviceAt: 'first' | 'last';
  /** Value columns in printed order (the device column left out). */
  columns: IostatColumn[];
  /**
   * Trailing columns that only some rows carry (Solaris `-xtc` prints tty and cpu
   * values on the first device row only). They are not device statistics: not kept.
   */
  optionalTail: number;
  /** How the header line was mended to be read (a token split in two, joined again), for a warning. */
  repair?: string;
}

export interface IostatDialect {
  platform: IostatPlatform;
  /** The layout this header line announces, or undefined if it is not this platform's. */
  matchHeader(tokens: readonly string[]): TableLayout | undefined;
}

/**
 * tty and cpu columns that Solaris `-xtc` and FreeBSD `-x` (with tty/cpu shown)
 * print to the right of the device columns, with values on the first row only.
 */
export const TTY_CPU_COLUMNS: ReadonlySet<string> = new Set([
  'tin',
  'tout',
  'us',
  'ni',
  'sy',
  'in',
  'wt',
  'dt',
  'id',
  'st',
]);

/** Drop trailing tty/cpu column names; returns the rest and how many were dropped. */
export function stripTtyCpu(names: readonly string[]): { names: string[]; tail: number } {
  let end = names.length;
  while (end > 0 && TTY_CPU_COLUMNS.has(names[end - 1]!)) end--;
  return { names: names.slice(0, end), tail: names.length - end };
}

/** Build the IostatColumn list for printed names from a platform's dictionary. */
export function columnsFrom(
  names: readonly string[],
  dictionary: Readonly<Record<string, ColumnSpec>>,
): IostatColumn[] {
  return names.map((name) => {
    // Own entries only: a header word such as `constructor` is not a column spec.
    const spec = Object.hasOwn(dictionary, name) ? dictionary[name] : undefined;
    if (spec === undefined) return { name, unit: 'unknown', factor: 1 };
    const column: IostatColumn = { name, unit: spec.unit, factor: spec.factor ?? 1 };
    if (spec.metric !== undefined) column.metric = spec.metric;
    return column;
  });
}

/** Split a header's tokens into the device position and the value column names. */
export function splitDevice(
  tokens: readonly string[],
  deviceNames: readonly string[],
): { deviceAt: 'first' | 'last'; names: string[] } | undefined {
  if (tokens.length < 3) return undefined;
  if (deviceNames.includes(tokens[0]!)) return { deviceAt: 'first', names: tokens.slice(1) };
  if (deviceNames.includes(tokens[tokens.length - 1]!)) return { deviceAt: 'last', names: tokens.slice(0, -1) };
  return undefined;
}
