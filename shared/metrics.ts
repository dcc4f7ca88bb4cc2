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

/** The directions fio reports a job's figures for (`mixed`: unified_rw_reporting's one figure). */
export const FIO_METRIC_DIRECTIONS = ['read', 'write', 'trim', 'mixed'] as const;
export type FioMetricDirection = (typeof FIO_METRIC_DIRECTIONS)[number];
/** fio's completion-latency percentiles kept, as measures (`p99_9`: metric names hold no dot). */
export const FIO_PERCENTILE_MEASURES = ['p50', 'p90', 'p99', 'p99_9', 'p99_99'] as const;
export type FioPercentileMeasure = (typeof FIO_PERCENTILE_MEASURES)[number];
/** A percentile measure as fio and the parsers name it: `p99_9` -> `p99.9`. */
export const fioPercentileName = (measure: FioPercentileMeasure) => measure.replace('_', '.');
/** What fio measures per direction: bandwidth, IOPS, mean latency, completion-latency percentiles. */
export const FIO_MEASURES = ['bw', 'iops', 'lat', ...FIO_PERCENTILE_MEASURES] as const;
export type FioMeasure = (typeof FIO_MEASURES)[number];
export type FioMetric = `fio_${FioMetricDirection}_${FioMeasure}`;

export const fioMetric = (direction: FioMetricDirection, measure: FioMeasure): FioMetric =>
  `fio_${direction}_${measure}`;

/** fio's metrics, by direction then measure: `fio_read_bw` ... `fio_mixed_p99_99`. */
export const FIO_METRICS: readonly FioMetric[] = FIO_METRIC_DIRECTIONS.flatMap((d) =>
  FIO_MEASURES.map((m) => fioMetric(d, m)),
);

export type Metric = DiskperfMetric | IostatMetric | FioMetric;

/** Every metric: diskperf's, iostat's, then fio's. */
export const ALL_METRICS: readonly Metric[] = [...DISKPERF_METRICS, ...IOSTAT_METRICS, ...FIO_METRICS];

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

export const METRIC_GROUPS = ['write', 'read', 'seq', 'random', 'latency', 'all'] as const;
export type MetricGroup = (typeof METRIC_GROUPS)[number];

export const METRICS: Record<Metric, MetricInfo> = {
  ...fioMetricInfos(),
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
    groups: ['latency', 'all'],
    fallbackFor: ['read_ms', 'write_ms'],
    resolution: 0.1,
    description: 'time a request is serviced (Solaris asvc_t, svc_t; Linux svctm)',
  },
  read_ms: {
    unit: 'ms',
    direction: 'lower-better',
    role: 'performance',
    groups: ['read', 'latency', 'all'],
    resolution: 0.1,
    description: 'average read latency',
  },
  write_ms: {
    unit: 'ms',
    direction: 'lower-better',
    role: 'performance',
    groups: ['write', 'latency', 'all'],
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

/**
 * fio's figures as metrics. Bandwidth and mean latency join their direction's group and `all`;
 * IOPS is the bandwidth over the block size at every point, so it is asked for by name (it
 * would count the same quantity twice); the percentiles are the `latency` group's, with the mean.
 * fio prints KiB/s and nanoseconds: resolutions far below any difference a comparison shows.
 */
function fioMetricInfos(): Record<FioMetric, MetricInfo> {
  const infos = {} as Record<FioMetric, MetricInfo>;
  for (const direction of FIO_METRIC_DIRECTIONS) {
    const own: MetricGroup[] = direction === 'read' || direction === 'write' ? [direction] : [];
    const what = direction === 'mixed' ? 'reads and writes together (unified_rw_reporting)' : `${direction}s`;
    infos[fioMetric(direction, 'bw')] = {
      unit: 'MiB/s',
      direction: 'higher-better',
      role: 'performance',
      groups: [...own, 'all'],
      resolution: 0.001,
      description: `fio bandwidth of ${what}`,
    };
    infos[fioMetric(direction, 'iops')] = {
      unit: 'IOPS',
      direction: 'higher-better',
      role: 'combined',
      groups: [],
      resolution: 0.001,
      description: `fio I/Os per second of ${what} (the bandwidth over the block size)`,
    };
    infos[fioMetric(direction, 'lat')] = {
      unit: 'us',
      direction: 'lower-better',
      role: 'performance',
      groups: [...own, 'latency', 'all'],
      resolution: 0.001,
      description: `fio mean total latency of ${what} (submission and completion)`,
    };
    for (const p of FIO_PERCENTILE_MEASURES)
      infos[fioMetric(direction, p)] = {
        unit: 'us',
        direction: 'lower-better',
        role: 'performance',
        groups: ['latency'],
        resolution: 0.001,
        description: `fio completion latency of ${what}, ${fioPercentileName(p).slice(1)}th percentile`,
      };
  }
  return infos;
}

export function isMetric(name: string): name is Metric {
  return Object.hasOwn(METRICS, name);
}

/** What `metric=` takes: a group or one metric by name. */
export type MetricSpec = MetricGroup | Metric;

export const METRIC_SPEC_HELP =
  `a group (${METRIC_GROUPS.join(', ')}: throughput, IOPS and latency; latency: the latencies, with fio's ` +
  `percentiles; queue lengths and %util only by name) or a metric (${ALL_METRICS.join(', ')})`;

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
