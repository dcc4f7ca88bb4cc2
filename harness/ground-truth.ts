/**
 * Logs with a known answer, for testing the comparison model: Linux sysstat 12
 * `iostat -x` sessions of a few disks, where side A is exactly k times better
 * than side B on every disk (throughput and IOPS x k, latencies / k), each run
 * off by its own seeded noise (run-to-run noise, the replicate's spread) and
 * each report by a little more. One disk can be read-idle (r/s 0 throughout).
 *
 * A session prints a since-boot report first, then interval reports, as
 * iostat does; the parser leaves the first out of the summaries.
 */
import { iostatObservation, type Observation } from '../shared/comparison/observations.ts';
import type { IostatRun } from '../shared/model.ts';
import { parseText } from '../shared/parsers/index.ts';
import { prng } from '../shared/comparison/statistics.ts';

export interface Disk {
  name: string;
  /** How busy the disk is, relative to the others (its values scale with it). */
  level: number;
  /** A disk that does no reads: r/s, rkB/s, r_await print 0. */
  readIdle?: boolean;
}

export const THREE_DISKS: readonly Disk[] = [
  { name: 'sda', level: 1 },
  { name: 'sdb', level: 0.35 },
  { name: 'sdc', level: 2.2, readIdle: true },
];

export interface SessionOptions {
  disks: readonly Disk[];
  /** How many times better than the baseline (1): A's k. */
  k: number;
  /** Standard deviation of a run's log noise (0.03: about 3%). */
  noise: number;
  /** Interval reports after the since-boot one. */
  reports?: number;
  host?: string;
  /** The command typed before iostat (the workload). */
  workload?: string;
  random: () => number;
}

/** A standard normal draw (Box-Muller). */
export function gaussian(random: () => number): number {
  let u = 0;
  while (u === 0) u = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

const BASE = { r: 120, rkB: 3840, rAwait: 4.2, w: 640, wkB: 20480, wAwait: 6.5 };
const HEADER =
  'Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await ' +
  'wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util';

const f2 = (v: number) => v.toFixed(2);

/** One `iostat -x 10 N` session as sysstat 12.5 prints it, with the command line before it. */
export function iostatSession(options: SessionOptions): string {
  const reports = options.reports ?? 3;
  const host = options.host ?? 'bench1';
  const lines = [
    `$ ${options.workload ?? 'fio --name=seq --rw=write'} &`,
    `$ iostat -x 10 ${reports + 1}`,
    `Linux 5.15.0-91-generic (${host}) \t01/15/2024 \t_x86_64_\t(4 CPU)`,
    '',
  ];
  // This run's offset from the truth, per disk and quantity: what replicates disagree on.
  const runNoise = options.disks.map(() =>
    Array.from({ length: 6 }, () => Math.exp(options.noise * gaussian(options.random))),
  );
  for (let report = 0; report <= reports; report++) {
    const sinceBoot = report === 0;
    lines.push(`01/15/2024 10:00:${String(report * 10).padStart(2, '0')} AM`, HEADER);
    options.disks.forEach((disk, d) => {
      const n = runNoise[d]!;
      // Reports wobble a little around the run's value; the since-boot one is an idler average.
      const wobble = () => (sinceBoot ? 0.2 : Math.exp(0.005 * gaussian(options.random)));
      const reads = disk.readIdle ? 0 : 1;
      const r = BASE.r * disk.level * options.k * n[0]! * wobble() * reads;
      const rkB = BASE.rkB * disk.level * options.k * n[1]! * wobble() * reads;
      const rAwait = reads === 0 ? 0 : (BASE.rAwait / options.k) * n[2]! * wobble();
      const w = BASE.w * disk.level * options.k * n[3]! * wobble();
      const wkB = BASE.wkB * disk.level * options.k * n[4]! * wobble();
      const wAwait = (BASE.wAwait / options.k) * n[5]! * wobble();
      const util = Math.min(100, 20 + 30 * disk.level);
      const cells = [
        f2(r),
        f2(rkB),
        '0.00',
        '0.00',
        f2(rAwait),
        f2(r > 0 ? rkB / r : 0),
        f2(w),
        f2(wkB),
        '0.00',
        '0.00',
        f2(wAwait),
        f2(wkB / w),
        '0.00',
        '0.00',
        '0.00',
        '0.00',
        '0.00',
        '0.00',
        '0.00',
        '0.00',
        f2(((r * rAwait + w * wAwait) / 1000) * (sinceBoot ? 0.2 : 1)),
        f2(util),
      ];
      lines.push(`${disk.name.padEnd(12)}${cells.map((c) => c.padStart(9)).join('')}`);
    });
    lines.push('', '');
  }
  return lines.join('\n');
}

export interface SideOptions extends Omit<SessionOptions, 'random'> {
  label: string;
  runs: number;
  seed: number;
}

/** A label's runs, each one session parsed by the real parser, as the store would hand them to the model. */
export async function sideObservations(options: SideOptions): Promise<Observation[]> {
  const random = prng(options.seed);
  const out: Observation[] = [];
  for (let i = 0; i < options.runs; i++) {
    const text = iostatSession({ ...options, random });
    const parsed = await parseText(text, `${options.label}/run${i}.txt`);
    for (const run of parsed.runs as IostatRun[])
      out.push(...observationsOf(run, options.label, `${options.label}-r${i}`));
  }
  return out;
}

/** Every series of a parsed iostat run as observations of `label`. */
export function observationsOf(run: IostatRun, label: string, runId: string): Observation[] {
  return run.series.map((s) =>
    iostatObservation(runId, `${label}/${s.device}`, s.summary, run.reports, {
      label,
      native: s.device,
      platform: run.platform,
      ...(run.meta.host !== undefined ? { host: run.meta.host } : {}),
      context: run.context,
    }),
  );
}
