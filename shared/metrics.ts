/**
 * Metric names, units, directions and comparison groups: defined here once and
 * imported by the parsers, the comparison engine, the API and the CLI.
 */

/** Columns of an IRIX diskperf result table, in MB/s as diskperf prints them. */
export const DISKPERF_METRICS = ['fwd_wt', 'fwd_rd', 'bwd_wt', 'bwd_rd', 'rnd_wt', 'rnd_rd'] as const;
export type DiskperfMetric = (typeof DISKPERF_METRICS)[number];

/** iostat columns normalised across Solaris/illumos, Linux sysstat and FreeBSD. */
export const IOSTAT_METRICS = [
  'iops',
  'read_iops',
  'write_iops',
  'read_kBps',
  'write_kBps',
  'wait_queue',
  'active_queue',
  'wait_ms',
  'service_ms',
  'read_ms',
  'write_ms',
  'util_pct',
] as const;
export type IostatMetric = (typeof IOSTAT_METRICS)[number];

export type Metric = DiskperfMetric | IostatMetric;

export type Direction = 'higher-better' | 'lower-better';

export interface MetricInfo {
  unit: string;
  direction: Direction;
  /** The comparison groups (besides `all` and its own name) the metric belongs to. */
  groups: readonly MetricGroup[];
  description: string;
}

export const METRIC_GROUPS = ['write', 'read', 'seq', 'random', 'all'] as const;
export type MetricGroup = (typeof METRIC_GROUPS)[number];

export const METRICS: Record<Metric, MetricInfo> = {
  fwd_wt: { unit: 'MB/s', direction: 'higher-better', groups: ['write', 'seq'], description: 'sequential forward write' },
  fwd_rd: { unit: 'MB/s', direction: 'higher-better', groups: ['read', 'seq'], description: 'sequential forward read' },
  bwd_wt: { unit: 'MB/s', direction: 'higher-better', groups: ['write', 'seq'], description: 'sequential backward write' },
  bwd_rd: { unit: 'MB/s', direction: 'higher-better', groups: ['read', 'seq'], description: 'sequential backward read' },
  rnd_wt: { unit: 'MB/s', direction: 'higher-better', groups: ['write', 'random'], description: 'random write' },
  rnd_rd: { unit: 'MB/s', direction: 'higher-better', groups: ['read', 'random'], description: 'random read' },
  iops: { unit: 'ops/s', direction: 'higher-better', groups: [], description: 'reads plus writes per second' },
  read_iops: { unit: 'ops/s', direction: 'higher-better', groups: ['read'], description: 'reads per second' },
  write_iops: { unit: 'ops/s', direction: 'higher-better', groups: ['write'], description: 'writes per second' },
  read_kBps: { unit: 'kB/s', direction: 'higher-better', groups: ['read'], description: 'kilobytes read per second' },
  write_kBps: { unit: 'kB/s', direction: 'higher-better', groups: ['write'], description: 'kilobytes written per second' },
  wait_queue: { unit: 'requests', direction: 'lower-better', groups: [], description: 'requests waiting in the host queue' },
  active_queue: { unit: 'requests', direction: 'lower-better', groups: [], description: 'requests active at the device (or average queue size)' },
  wait_ms: { unit: 'ms', direction: 'lower-better', groups: [], description: 'time a request waits, or its whole await on Linux' },
  service_ms: { unit: 'ms', direction: 'lower-better', groups: [], description: 'time a request is serviced' },
  read_ms: { unit: 'ms', direction: 'lower-better', groups: ['read'], description: 'average read latency' },
  write_ms: { unit: 'ms', direction: 'lower-better', groups: ['write'], description: 'average write latency' },
  util_pct: { unit: '%', direction: 'lower-better', groups: [], description: 'percent of time the device was busy' },
};

export function isMetric(name: string): name is Metric {
  return Object.hasOwn(METRICS, name);
}
