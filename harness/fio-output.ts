/**
 * fio 3.x `--output-format=json` written from figures, for the tests and the demo
 * sweeps that need a fio output whose every number is known: a job per point, its
 * bandwidth from its IOPS and block size, latencies from Little's law (queue depth
 * over IOPS), percentiles a fixed spread around the mean.
 *
 *   fioJson({ host: 'lab1', jobs: [{ rw: 'randread', bs: 4096, iodepth: 32, iops: 50_000 }] })
 *
 * writes { "fio version": "fio-3.36", "jobs": [{ "jobname": "randread-4k-qd32", "read": { "iops": 50000, ... } }] }.
 */
import { blockSizeText } from '../shared/fio-point.ts';

export interface WrittenJob {
  rw: 'read' | 'write' | 'randread' | 'randwrite';
  /** Bytes. */
  bs: number;
  iodepth: number;
  numjobs?: number;
  iops: number;
  name?: string;
}

export interface WrittenOutput {
  jobs: readonly WrittenJob[];
  version?: string;
  /** Seconds since 1970: `timestamp`, and the `time` fio prints beside it. */
  timestamp?: number;
  runtimeMs?: number;
  ioengine?: string;
  /** How heavy the latency tail is: the p99 and higher multiples raised to this power (default 1). */
  tail?: number;
}

/** The percentiles written, as multiples of the mean completion latency. */
const PERCENTILES: Record<string, number> = {
  '1.000000': 0.5,
  '50.000000': 0.9,
  '90.000000': 1.4,
  '99.000000': 2.5,
  '99.900000': 4,
  '99.990000': 8,
};

const idle = { io_bytes: 0, io_kbytes: 0, bw_bytes: 0, bw: 0, iops: 0, runtime: 0, total_ios: 0 };

/** The name a written job gets: `randread-4k-qd32` (and `-nj4` for numjobs). */
export function writtenJobName(job: WrittenJob): string {
  return job.name ?? `${job.rw}-${blockSizeText(job.bs)}-qd${job.iodepth}${job.numjobs ? `-nj${job.numjobs}` : ''}`;
}

/** Mean total latency in ns of a job: every one of its iodepth x numjobs requests in flight takes this long. */
export const writtenLatencyNs = (job: WrittenJob) => ((job.iodepth * (job.numjobs ?? 1)) / job.iops) * 1e9;

function direction(job: WrittenJob, runtimeMs: number, tail: number) {
  const bytesPerSec = Math.round(job.iops * job.bs);
  const lat = writtenLatencyNs(job);
  const ios = Math.round((job.iops * runtimeMs) / 1000);
  const dist = (mean: number) => ({ min: mean * 0.4, max: mean * 12, mean, stddev: mean * 0.3, N: ios });
  const clat = lat * 0.95;
  const multiple = (p: string, f: number) => (Number(p) >= 99 ? f ** tail : f);
  const percentile = Object.fromEntries(
    Object.entries(PERCENTILES).map(([p, f]) => [p, Math.round(clat * multiple(p, f))]),
  );
  return {
    io_bytes: ios * job.bs,
    io_kbytes: Math.round((ios * job.bs) / 1024),
    bw_bytes: bytesPerSec,
    bw: Math.round(bytesPerSec / 1024),
    iops: job.iops,
    runtime: runtimeMs,
    total_ios: ios,
    slat_ns: dist(lat * 0.05),
    clat_ns: { ...dist(clat), percentile },
    lat_ns: dist(lat),
  };
}

/** The JSON text of one fio run of these jobs. */
export function fioJson(output: WrittenOutput): string {
  const runtimeMs = output.runtimeMs ?? 30_000;
  const timestamp = output.timestamp ?? 1_733_220_000;
  const jobs = output.jobs.map((job) => {
    const measured = direction(job, runtimeMs, output.tail ?? 1);
    const reads = job.rw === 'read' || job.rw === 'randread';
    return {
      jobname: writtenJobName(job),
      groupid: 0,
      error: 0,
      eta: 0,
      elapsed: Math.round(runtimeMs / 1000) + 1,
      'job options': {
        name: writtenJobName(job),
        rw: job.rw,
        bs: blockSizeText(job.bs),
        iodepth: String(job.iodepth),
        ...(job.numjobs !== undefined ? { numjobs: String(job.numjobs) } : {}),
      },
      read: reads ? measured : idle,
      write: reads ? idle : measured,
      trim: idle,
    };
  });
  const document = {
    'fio version': output.version ?? 'fio-3.36',
    timestamp,
    timestamp_ms: timestamp * 1000,
    time: new Date(timestamp * 1000).toUTCString(),
    'global options': {
      ioengine: output.ioengine ?? 'libaio',
      direct: '1',
      size: '4G',
      runtime: String(Math.round(runtimeMs / 1000)),
      time_based: '1',
    },
    jobs,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
