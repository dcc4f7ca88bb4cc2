/**
 * Solaris / illumos `iostat -x` headers.
 *
 *   iostat -xn (device last)
 *                       extended device statistics
 *       r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device
 *       0.0   84.9    0.0 19096.7  0.0 35.9    0.2  423.3   2  96 c0t0d0
 *
 *   iostat -x (device first)
 *                       extended device statistics
 *       device    r/s  w/s   kr/s   kw/s wait actv  svc_t  %w  %b
 *       sd0       0.0  0.1    0.0    0.5  0.0  0.0    5.1   0   0
 *
 * -M prints Mr/s Mw/s, -e adds s/w h/w trn tot, -m adds the mount point after the device, -t and -c add
 * tty and cpu columns to the right of the first rows. Solaris 11.4 -u keeps the
 * labels and prints the times with three decimals: still milliseconds (an Oracle
 * post shows asvc_t 0.2 without -u and 0.232 with it for the same report), so no
 * conversion. Rows yield read/write IOPS
 * and kB/s, wait/active queue lengths, wait and service times in ms, %b as util_pct.
 */
import {
  columnsFrom,
  splitDevice,
  stripTtyCpu,
  type ColumnSpec,
  type IostatDialect,
  type TableLayout,
} from './iostat-layout.ts';

export const COLUMNS: Record<string, ColumnSpec> = {
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

export const solarisIostat: IostatDialect = {
  platform: 'solaris',
  matchHeader(tokens): TableLayout | undefined {
    const split = splitDevice(tokens, ['device']);
    if (!split) return undefined;
    const { names, tail } = stripTtyCpu(split.names);
    if (!names.includes('actv') || !(names.includes('kr/s') || names.includes('Mr/s'))) return undefined;
    if (!names.every((n) => Object.hasOwn(COLUMNS, n))) return undefined;
    const flags = [
      split.deviceAt === 'last' ? 'xn' : 'x',
      names.includes('Mr/s') ? 'M' : '',
      names.includes('s/w') ? 'e' : '',
    ].join('');
    return {
      platform: 'solaris',
      dialect: `solaris-${flags}`,
      deviceAt: split.deviceAt,
      columns: columnsFrom(names, COLUMNS),
      optionalTail: tail,
    };
  },
};
