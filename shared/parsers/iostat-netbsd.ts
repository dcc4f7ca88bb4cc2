/**
 * NetBSD `iostat -x` (and `-x -I`, `-y`) headers: one row per device, the read and write
 * columns printed under group words that are no columns themselves.
 *
 *   device  read KB/t    r/s   time     MB/s write KB/t    w/s   time     MB/s
 *   wd0         16.22      3   0.04     0.05      21.87     12   0.04     0.26
 *
 * yields TableLayout { platform: 'netbsd', dialect: 'netbsd-x', deviceAt: 'first', columns:
 *   ['read KB/t', 'read r/s', 'read time', 'read MB/s', 'write KB/t', 'write w/s', 'write time', 'write MB/s'] }.
 *
 * Columns (the same header from NetBSD 5 to 10):
 *   read/write KB/t  kB per transfer (KiB)                    no metric
 *   r/s, w/s         transfers per second                     read_iops, write_iops
 *   read/write time  busy seconds per second of the interval  read time: util_pct (x100); write time: none
 *   read/write MB/s  MiB per second                           read_kBps, write_kBps (x1024)
 * `time` is the drive's one busy time (no read/write split): iostat prints it under both groups.
 * `-x -I` prints totals since boot (`xfr` transfers, `MB`, `time` busy seconds): kept raw, no metric.
 * `-y` (newer iostat.c) adds wait and actv (queue lengths), wsvc_t and asvc_t (ms), wtime and time
 * (seconds waiting / busy per second), after read and write groups of KB/t, r/s or w/s, MB/s.
 */
import { columnsFrom, type ColumnSpec, type IostatDialect, type TableLayout } from './iostat-layout.ts';

/** The columns a `read` or `write` group word stands over. */
const GROUP_COLUMNS: ReadonlySet<string> = new Set(['KB/t', 'r/s', 'w/s', 'xfr', 'time', 'MB/s', 'MB']);

const RATES: Record<string, ColumnSpec> = {
  'read KB/t': { unit: 'kB' },
  'read r/s': { unit: 'ops/s', metric: 'read_iops' },
  // The drive's busy fraction, printed twice: the read group's copy feeds util_pct.
  'read time': { unit: 's/s', metric: 'util_pct', factor: 100 },
  'read MB/s': { unit: 'MB/s', metric: 'read_kBps', factor: 1024 },
  'write KB/t': { unit: 'kB' },
  'write w/s': { unit: 'ops/s', metric: 'write_iops' },
  'write time': { unit: 's/s' },
  'write MB/s': { unit: 'MB/s', metric: 'write_kBps', factor: 1024 },
};

const TOTALS: Record<string, ColumnSpec> = {
  'read KB/t': { unit: 'kB' },
  'read xfr': { unit: 'count' },
  'read time': { unit: 's' },
  'read MB': { unit: 'MB' },
  'write KB/t': { unit: 'kB' },
  'write xfr': { unit: 'count' },
  'write time': { unit: 's' },
  'write MB': { unit: 'MB' },
};

const QUEUES: Record<string, ColumnSpec> = {
  'read KB/t': RATES['read KB/t']!,
  'read r/s': RATES['read r/s']!,
  'read MB/s': RATES['read MB/s']!,
  'write KB/t': RATES['write KB/t']!,
  'write w/s': RATES['write w/s']!,
  'write MB/s': RATES['write MB/s']!,
  wait: { unit: 'requests', metric: 'wait_queue' },
  actv: { unit: 'requests', metric: 'active_queue' },
  wsvc_t: { unit: 'ms', metric: 'wait_ms' },
  asvc_t: { unit: 'ms', metric: 'service_ms' },
  wtime: { unit: 's/s' },
  time: { unit: 's/s', metric: 'util_pct', factor: 100 },
};

/** Column names in printed order, each word under `read`/`write` named after its group (`read KB/t`). */
export function groupedNames(tokens: readonly string[]): string[] {
  const names: string[] = [];
  let group: string | undefined;
  for (const token of tokens) {
    if (token === 'read' || token === 'write') {
      group = token;
      continue;
    }
    // A group ends at the first word that is none of its columns (`wait` after the write group of -y).
    if (group !== undefined && !GROUP_COLUMNS.has(token)) group = undefined;
    names.push(group === undefined ? token : `${group} ${token}`);
  }
  return names;
}

/** The dictionary and dialect a header's names belong to, if they are one of NetBSD's. */
function dialectOf(names: readonly string[]): { dialect: string; columns: Record<string, ColumnSpec> } | undefined {
  if (names.includes('actv')) return { dialect: 'netbsd-y', columns: QUEUES };
  if (names.includes('read xfr')) return { dialect: 'netbsd-xI', columns: TOTALS };
  if (names.includes('read r/s')) return { dialect: 'netbsd-x', columns: RATES };
  return undefined;
}

export const netbsdIostat: IostatDialect = {
  platform: 'netbsd',
  matchHeader(tokens): TableLayout | undefined {
    if (tokens[0] !== 'device' || tokens[1] !== 'read' || !tokens.includes('write')) return undefined;
    const names = groupedNames(tokens.slice(1));
    const found = dialectOf(names);
    if (found === undefined || !names.every((n) => Object.hasOwn(found.columns, n))) return undefined;
    // Each name once: a header that repeats one is not NetBSD's.
    if (new Set(names).size !== names.length) return undefined;
    return {
      platform: 'netbsd',
      dialect: found.dialect,
      deviceAt: 'first',
      columns: columnsFrom(names, found.columns),
      optionalTail: 0,
    };
  },
};
