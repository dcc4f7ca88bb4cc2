/**
 * Where a fio figure was measured: its point, the job options a sweep varies.
 * Points of two sides pair when their keys are equal, as diskperf's request
 * sizes do. No imports: the report page bundles it.
 *
 *   { rw: 'randread', bs: 4096, iodepth: 32, numjobs: 1 }  <->  'randread bs=4096 iodepth=32 numjobs=1'
 *
 * An output that prints no job options (terse) names its points by job: `job=seq-read`.
 */
export interface FioPoint {
  /** fio's rw (`read`, `randwrite`, `randrw`, ...). */
  rw?: string;
  /** The block size in bytes, or the text fio was given when it names no one size (`4k-32k`). */
  bs?: number | string;
  iodepth?: number;
  numjobs?: number;
  /** The job's name, for outputs without job options. */
  job?: string;
}

/** The key of a point: rw, then each option as name=value. */
export function fioPointKey(point: FioPoint): string {
  if (point.rw === undefined) return `job=${point.job ?? ''}`;
  return `${point.rw} bs=${point.bs ?? ''} iodepth=${point.iodepth ?? ''} numjobs=${point.numjobs ?? ''}`;
}

const KEY = /^(\S+) bs=(\S*) iodepth=(\d*) numjobs=(\d*)$/;

/** The point a key names (fioPointKey's inverse). */
export function fioPointOf(key: string): FioPoint {
  if (key.startsWith('job=')) return { job: key.slice(4) };
  const m = KEY.exec(key);
  if (m === null) return { job: key };
  const number = (text: string) => (text === '' ? undefined : Number(text));
  const bs = m[2] === '' ? undefined : /^\d+$/.test(m[2]!) ? Number(m[2]) : m[2]!;
  return {
    rw: m[1]!,
    ...(bs !== undefined ? { bs } : {}),
    ...(number(m[3]!) !== undefined ? { iodepth: number(m[3]!)! } : {}),
    ...(number(m[4]!) !== undefined ? { numjobs: number(m[4]!)! } : {}),
  };
}

/** Points in sweep order: by rw, numjobs, iodepth, then block size. */
export function compareFioPoints(x: FioPoint, y: FioPoint): number {
  const text = (a: string | undefined, b: string | undefined) => (a ?? '').localeCompare(b ?? '');
  const num = (a: number | undefined, b: number | undefined) => (a ?? 0) - (b ?? 0);
  const bsNumber = (p: FioPoint) => (typeof p.bs === 'number' ? p.bs : Number.MAX_SAFE_INTEGER);
  return (
    text(x.job, y.job) ||
    text(x.rw, y.rw) ||
    num(x.numjobs, y.numjobs) ||
    num(x.iodepth, y.iodepth) ||
    bsNumber(x) - bsNumber(y) ||
    text(String(x.bs ?? ''), String(y.bs ?? ''))
  );
}

/** A block size as people write it: 4k, 128k, 1m, 512 (fio's 1024 bases). */
export function blockSizeText(bs: number | string | undefined): string {
  if (typeof bs !== 'number') return bs ?? '?';
  for (const [unit, size] of [
    ['m', 1024 * 1024],
    ['k', 1024],
  ] as const)
    if (bs >= size && bs % size === 0) return `${bs / size}${unit}`;
  return String(bs);
}

/** A point as tables and sentences print it: `randread 4k qd32 nj1`, or the job's name. */
export function fioPointText(point: FioPoint): string {
  if (point.rw === undefined) return `job ${point.job ?? '?'}`;
  return `${point.rw} ${blockSizeText(point.bs)} qd${point.iodepth ?? '?'} nj${point.numjobs ?? '?'}`;
}
