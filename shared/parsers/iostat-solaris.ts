/**
 * Solaris / illumos `iostat -x` headers.
 *
 *   iostat -xn (device last)                      iostat -x (device first)
 *                       extended device statistics          extended device statistics
 *       r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device   device    r/s  w/s   kr/s   kw/s wait actv  svc_t  %w  %b
 *       0.0   84.9    0.0 19096.7  0.0 35.9    0.2  423.3   2  96 c0t0d0   sd0       0.0  0.1    0.0    0.5  0.0  0.0    5.1   0   0
 *
 * -M prints Mr/s Mw/s, -e adds s/w h/w trn tot, Solaris 11.4 -u prints the service
 * times in microseconds, -m adds the mount point after the device, -t and -c add
 * tty and cpu columns to the right of the first rows. Rows yield read/write IOPS
 * and kB/s, wait/active queue lengths, wait and service times in ms, %b as util_pct.
 */
import { columnsFrom, splitDevice, type ColumnSpec, type IostatDialect, type TableLayout } from './iostat-layout.ts';

const COLUMNS: Record<string, ColumnSpec> = {
  'r/s': { unit: 'ops/s', metric: 'read_iops' },
  'w/s': { unit: 'ops/s', metric: 'write_iops' },
  'kr/s': { unit: 'kB/s', metric: 'read_kBps' },
  'kw/s': { unit: 'kB/s', metric: 'write_kBps' },
  'Mr/s': { unit: 'MB/s', metric: 'read_kBps', factor: 1024 },
  'Mw/s': { unit: 'MB/s', metric: 'write_kBps', factor: 1024 },
  wait: { unit: 'requests', metric: 'wait_queue' },
  actv: { unit: 'requests', metric: 'active_queue' },
  wsvc_t: { unit: 'ms', metric: 'wait_ms' },
  asvc_t: { unit: 'ms', metric: 'service_ms' },
  svc_t: { unit: 'ms', metric: 'service_ms' },
  '%w': { unit: '%' },
  '%b': { unit: '%', metric: 'util_pct' },
  's/w': { unit: 'count' },
  'h/w': { unit: 'count' },
  trn: { unit: 'count' },
  tot: { unit: 'count' },
};

/** Solaris 11.4 `-u` prints these instead of the millisecond times. */
const MICROSECOND_COLUMNS: Record<string, ColumnSpec> = {
  wsvc_t: { unit: 'us', metric: 'wait_ms', factor: 0.001 },
  asvc_t: { unit: 'us', metric: 'service_ms', factor: 0.001 },
  svc_t: { unit: 'us', metric: 'service_ms', factor: 0.001 },
};

/** tty and cpu columns that -t / -c append to the right of the first rows. */
const TAIL = new Set(['tin', 'tout', 'us', 'sy', 'wt', 'id', 'st']);

export function createSolarisDialect(options: { microseconds?: boolean } = {}): IostatDialect {
  const dictionary = options.microseconds ? { ...COLUMNS, ...MICROSECOND_COLUMNS } : COLUMNS;
  return {
    platform: 'solaris',
    matchHeader(tokens): TableLayout | undefined {
      const split = splitDevice(tokens, ['device']);
      if (!split) return undefined;
      let names = split.names;
      let tail = 0;
      while (names.length > 0 && TAIL.has(names[names.length - 1]!)) {
        names = names.slice(0, -1);
        tail++;
      }
      if (!names.includes('actv') || !(names.includes('kr/s') || names.includes('Mr/s'))) return undefined;
      if (!names.every((n) => Object.hasOwn(dictionary, n))) return undefined;
      const flags = [split.deviceAt === 'last' ? 'xn' : 'x', names.includes('Mr/s') ? 'M' : '', names.includes('s/w') ? 'e' : '', options.microseconds ? 'u' : ''].join('');
      return { platform: 'solaris', dialect: `solaris-${flags}`, deviceAt: split.deviceAt, columns: columnsFrom(names, dictionary), optionalTail: tail };
    },
  };
}

export const solarisIostat = createSolarisDialect();
