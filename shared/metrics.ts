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

/** Every metric: diskperf's, then iostat's. */
export const ALL_METRICS: readonly Metric[] = [...DISKPERF_METRICS, ...IOSTAT_METRICS];

export type Direction = 'higher-better' | 'lower-better';

/**
 * What a metric describes: the device's `performance` (throughput, IOPS,
 * latency; what the groups summarise) or the `load` put on it (queue lengths,
 * %busy: asked for by name only), or a `combined` figure whose parts are also
 * metrics (iops beside read_iops and write_iops; Linux await beside r_await and
 * w_await), asked for by name only so that no quantity counts twice.
 */
export type MetricRole = 'performance' | 'load' | 'combined';

export interface MetricInfo {
  unit: string;
  direction: Direction;
  role: MetricRole;
  /**
   * The comparison groups the metric belongs to; `all` is every performance
   * metric. A `fallback` metric joins them only when neither side carries the
   * metrics it stands in for (Solaris asvc_t where no log prints r_await/w_await).
   */
  groups: readonly MetricGroup[];
  fallbackFor?: readonly Metric[];
  /** The smallest step the tools print it in (diskperf 0.01 MB/s; iostat's coarsest, Solaris, 0.1). */
  resolution: number;
  description: string;
}

export const METRIC_GROUPS = ['write', 'read', 'seq', 'random', 'all'] as const;
export type MetricGroup = (typeof METRIC_GROUPS)[number];

export const METRICS: Record<Metric, MetricInfo> = {
  fwd_wt: {
    unit: 'MB/s',
    direction: 'higher-better',
    role: 'performance',
    groups: ['write', 'seq', 'all'],
    resolution: 0.01,
    description: 'sequential forward write',
  },
  fwd_rd: {
    unit: 'MB/s',
    direction: 'higher-better',
    role: 'performance',
    groups: ['read', 'seq', 'all'],
    resolution: 0.01,
    description: 'sequential forward read',
  },
  bwd_wt: {
    unit: 'MB/s',
    direction: 'higher-better',
    role: 'performance',
    groups: ['write', 'seq', 'all'],
    resolution: 0.01,
    description: 'sequential backward write',
  },
  bwd_rd: {
    unit: 'MB/s',
    direction: 'higher-better',
    role: 'performance',
    groups: ['read', 'seq', 'all'],
    resolution: 0.01,
    description: 'sequential backward read',
  },
  rnd_wt: {
    unit: 'MB/s',
    direction: 'higher-better',
    role: 'performance',
    groups: ['write', 'random', 'all'],
    resolution: 0.01,
    description: 'random write',
  },
  rnd_rd: {
    unit: 'MB/s',
    direction: 'higher-better',
    role: 'performance',
    groups: ['read', 'random', 'all'],
    resolution: 0.01,
    description: 'random read',
  },
  iops: {
    unit: 'ops/s',
    direction: 'higher-better',
    role: 'combined',
    groups: [],
    resolution: 0.1,
    description: 'reads plus writes per second (read_iops and write_iops count them apart)',
  },
  read_iops: {
    unit: 'ops/s',
    direction: 'higher-better',
    role: 'performance',
    groups: ['read', 'all'],
    resolution: 0.1,
    description: 'reads per second',
  },
  write_iops: {
    unit: 'ops/s',
    direction: 'higher-better',
    role: 'performance',
    groups: ['write', 'all'],
    resolution: 0.1,
    description: 'writes per second',
  },
  read_kBps: {
    unit: 'kB/s',
    direction: 'higher-better',
    role: 'performance',
    groups: ['read', 'all'],
    resolution: 0.1,
    description: 'kilobytes read per second',
  },
  write_kBps: {
    unit: 'kB/s',
    direction: 'higher-better',
    role: 'performance',
    groups: ['write', 'all'],
    resolution: 0.1,
    description: 'kilobytes written per second',
  },
  wait_queue: {
    unit: 'requests',
    direction: 'lower-better',
    role: 'load',
    groups: [],
    resolution: 0.1,
    description: 'requests waiting in the host queue (the load, not the device)',
  },
  active_queue: {
    unit: 'requests',
    direction: 'lower-better',
    role: 'load',
    groups: [],
    resolution: 0.1,
    description: 'requests active at the device, or the average queue size (the load, not the device)',
  },
  wait_ms: {
    unit: 'ms',
    direction: 'lower-better',
    role: 'combined',
    groups: [],
    resolution: 0.1,
    description:
      'time a request waits in the queue (Solaris wsvc_t), or its whole await, reads and writes together ' +
      '(Linux await, FreeBSD ms/t)',
  },
  service_ms: {
    unit: 'ms',
    direction: 'lower-better',
    role: 'performance',
    groups: ['all'],
    fallbackFor: ['read_ms', 'write_ms'],
    resolution: 0.1,
    description: 'time a request is serviced (Solaris asvc_t, svc_t; Linux svctm)',
  },
  read_ms: {
    unit: 'ms',
    direction: 'lower-better',
    role: 'performance',
    groups: ['read', 'all'],
    resolution: 0.1,
    description: 'average read latency',
  },
  write_ms: {
    unit: 'ms',
    direction: 'lower-better',
    role: 'performance',
    groups: ['write', 'all'],
    resolution: 0.1,
    description: 'average write latency',
  },
  util_pct: {
    unit: '%',
    direction: 'lower-better',
    role: 'load',
    groups: [],
    resolution: 1,
    description: 'percent of time the device was busy (the load, not the device)',
  },
};

export function isMetric(name: string): name is Metric {
  return Object.hasOwn(METRICS, name);
}

/** What `metric=` takes: a group or one metric by name. */
export type MetricSpec = MetricGroup | Metric;

export const METRIC_SPEC_HELP =
  `a group (${METRIC_GROUPS.join(', ')}: throughput, IOPS and latency; ` +
  `queue lengths and %util only by name) or a metric (${ALL_METRICS.join(', ')})`;

export function isMetricSpec(value: string): value is MetricSpec {
  return (METRIC_GROUPS as readonly string[]).includes(value) || isMetric(value);
}

/** The metrics only asked for by name: the load on a device (queue lengths, %util). */
export const LOAD_METRICS: readonly Metric[] = ALL_METRICS.filter((m) => METRICS[m].role === 'load');

/** Every `metric=` value in the order a menu offers them: all, the other groups, the metrics, the load last. */
export const METRIC_SPECS: readonly MetricSpec[] = [
  'all',
  ...METRIC_GROUPS.filter((g) => g !== 'all'),
  ...ALL_METRICS.filter((m) => METRICS[m].role !== 'load'),
  ...LOAD_METRICS,
];
