/**
 * FreeBSD `iostat -x` headers, current and older.
 *
 *                         extended device statistics
 *   device       r/s     w/s     kr/s     kw/s  ms/r  ms/w  ms/o  ms/t qlen  %b
 *   ada0           1       9     20.9    203.2     0     0     0     0    0   1
 *
 *   device     r/s   w/s    kr/s    kw/s wait svc_t  %b      (FreeBSD 4.x - 9.x)
 *   ad0        0.1   1.2     1.4    12.4    0   1.2   0
 *
 * Rows yield read/write IOPS and kB/s, read/write/transaction latency (ms), the
 * queue length and %b as util_pct; the older layout yields wait queue and svc_t.
 */
import { columnsFrom, splitDevice, stripTtyCpu, type ColumnSpec, type IostatDialect } from './iostat-layout.ts';

const COLUMNS: Record<string, ColumnSpec> = {
  'r/s': { unit: 'ops/s', metric: 'read_iops' },
  'w/s': { unit: 'ops/s', metric: 'write_iops' },
  'kr/s': { unit: 'kB/s', metric: 'read_kBps' },
  'kw/s': { unit: 'kB/s', metric: 'write_kBps' },
  'ms/r': { unit: 'ms', metric: 'read_ms' },
  'ms/w': { unit: 'ms', metric: 'write_ms' },
  'ms/o': { unit: 'ms' },
  'ms/t': { unit: 'ms', metric: 'wait_ms' },
  qlen: { unit: 'requests', metric: 'active_queue' },
  wait: { unit: 'requests', metric: 'wait_queue' },
  svc_t: { unit: 'ms', metric: 'service_ms' },
  '%b': { unit: '%', metric: 'util_pct' },
};

export const freebsdIostat: IostatDialect = {
  platform: 'freebsd',
  matchHeader(tokens) {
    const split = splitDevice(tokens, ['device']);
    if (!split || split.deviceAt !== 'first') return undefined;
    const { names, tail } = stripTtyCpu(split.names);
    // Solaris -x also puts the device first; its `actv` column tells it apart.
    if (names.includes('actv') || !names.includes('kr/s')) return undefined;
    if (!names.every((n) => Object.hasOwn(COLUMNS, n))) return undefined;
    const dialect = names.includes('ms/r') ? 'freebsd-x' : 'freebsd-x-old';
    return {
      platform: 'freebsd',
      dialect,
      deviceAt: 'first',
      columns: columnsFrom(names, COLUMNS),
      optionalTail: tail,
    };
  },
};
