/**
 * `npm run bench:parse` (its second part): the fio parser on a big json+ log, the
 * heaviest fio output (every job carries its completion-latency histogram).
 *
 *   1. generate (or reuse) in bench/out/ a fio 3.x `--output-format=json+` log of
 *      about 200 MB, jobs of about 1,500 histogram bins each, and one of 20 MB
 *      (the same jobs, fewer), written a job at a time;
 *   2. bundle bench/fio-entry.ts and bench/count-lines-entry.ts with esbuild, so the
 *      measured processes are plain `node` with no TypeScript loader;
 *   3. per file, after one untimed warm-up read, N rounds (default 3) of: Node
 *      counting '\n' (the read limit) and the fio entry (parseStream over the
 *      file's chunks), each a fresh process; medians reported, and the entry's
 *      peak RSS (its VmHWM), then once more with --max-semi-space-size=1;
 *   4. check the entry found every job and the IOPS the generator wrote; exit 1 if not.
 *
 * Targets (reported): peak RSS at most 150 MB at 200 MB; with V8's young generation
 * held at 1 MB, at most 15 % above the 20 MB file's (memory flat: jobs are let go as
 * they are read). 1 MB = 10^6 bytes.
 *
 *   npm run bench:parse -- [--fio-mb 200]   # after the iostat files; --fio-mb 0 leaves it out
 *   npx tsx bench/parse-fio.ts [--size-mb 200] [--runs 3]
 */
import '../shared/node-support-notice.ts';
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { numberArg } from './args.ts';
import { bundleForNode } from './node-bundles.ts';
import { MB, OUT_DIR, Prng } from './generate.ts';
import { loadAverage, median, table } from './stats.ts';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const RSS_TARGET_MB = 150;
const FLAT_MARGIN = 0.15;
const SMALL_MB = 20;
const BINS = 1500;
/**
 * Under allocation pressure V8 grows its young generation (semi-spaces) with the run's length,
 * not with what the parse keeps: the flat-memory check runs once more with it held small.
 */
const FIXED_YOUNG_GENERATION = '--max-semi-space-size=1';

interface Generated {
  path: string;
  bytes: number;
  jobs: number;
  iopsSum: number;
}

interface EntryResult {
  style: string;
  jobs: number;
  lines: number;
  iopsSum: number;
  ms: number;
  rss: { peakKiB: number };
}

/** One fio 3.x json+ job: a 4k random read at its queue depth, its clat histogram in `bins`. */
function jsonPlusJob(n: number, random: Prng): { text: string; iops: number } {
  const iops = random.int(1_000, 900_000);
  const bins: Record<string, number> = {};
  let ns = random.int(2_000, 20_000);
  for (let i = 0; i < BINS; i++) {
    ns += random.int(16, 512);
    bins[String(ns)] = random.int(1, 5_000);
  }
  const latency = (min: number) => ({ min, max: ns, mean: (min + ns) / 2, stddev: (ns - min) / 6, N: 60 * iops });
  const idle = { io_bytes: 0, io_kbytes: 0, bw_bytes: 0, bw: 0, iops: 0, runtime: 0 };
  const job = {
    jobname: `rr-4k-qd${1 + (n % 64)}-${n}`,
    groupid: 0,
    error: 0,
    'job options': { rw: 'randread', bs: '4k', iodepth: String(1 + (n % 64)), numjobs: '1' },
    read: {
      io_bytes: iops * 60 * 4096,
      io_kbytes: iops * 60 * 4,
      bw_bytes: iops * 4096,
      bw: iops * 4,
      iops,
      runtime: 60_000,
      slat_ns: latency(500),
      clat_ns: {
        ...latency(2_000),
        percentile: { '50.000000': ns / 2, '90.000000': ns * 0.9, '99.000000': ns * 0.99 },
        bins,
      },
      lat_ns: latency(2_500),
    },
    write: idle,
    trim: idle,
  };
  return { text: JSON.stringify(job, null, 2).replace(/^/gm, '    '), iops };
}

/** The log at bench/out/, generated once per size; its job count and IOPS sum kept beside it. */
function ensureJsonPlus(sizeMB: number): Generated {
  const path = join(OUT_DIR, `fio-jsonplus-${sizeMB}mb.json`);
  const facts = `${path}.facts.json`;
  if (existsSync(path) && existsSync(facts)) return JSON.parse(readFileSync(facts, 'utf8')) as Generated;
  const partial = `${path}.partial`;
  // Run alone (npx tsx bench/parse-fio.ts), nothing has made bench/out/ yet.
  mkdirSync(OUT_DIR, { recursive: true });
  const fd = openSync(partial, 'w');
  const random = new Prng(18);
  let bytes = writeSync(fd, '{\n  "fio version" : "fio-3.36",\n  "timestamp" : 1733220000,\n  "jobs" : [\n');
  let jobs = 0;
  let iopsSum = 0;
  while (bytes < sizeMB * MB) {
    const { text, iops } = jsonPlusJob(jobs, random);
    bytes += writeSync(fd, `${jobs > 0 ? ',\n' : ''}${text}`);
    jobs++;
    iopsSum += iops;
  }
  writeSync(fd, '\n  ]\n}\n');
  closeSync(fd);
  renameSync(partial, path);
  const generated = { path, bytes: statSync(path).size, jobs, iopsSum };
  writeFileSync(facts, JSON.stringify(generated));
  return generated;
}

function runEntry(entry: string, file: string, nodeArgs: string[] = []): EntryResult & { wallMs: number } {
  const started = performance.now();
  const run = spawnSync(process.execPath, [...nodeArgs, entry, file], { encoding: 'utf8', maxBuffer: 1 << 20 });
  const wallMs = performance.now() - started;
  if (run.status !== 0) throw new Error(`${entry} ${file} exited ${String(run.status)}: ${run.stderr.slice(0, 800)}`);
  return { ...(JSON.parse(run.stdout) as EntryResult), wallMs };
}

async function bundle(): Promise<{ fio: string; count: string }> {
  const [fio, count] = await bundleForNode([
    { in: join(BENCH_DIR, 'fio-entry.ts'), out: 'fio-entry' },
    { in: join(BENCH_DIR, 'count-lines-entry.ts'), out: 'count-lines-entry' },
  ]);
  return { fio: fio!, count: count! };
}

interface Measured {
  log: Generated;
  readMs: number;
  parseMs: number;
  peakMB: number;
  /** Peak RSS with V8's young generation held at 1 MB: what the parse keeps, without the heap's growth. */
  keptMB: number;
  found: EntryResult;
}

function measure(log: Generated, entries: { fio: string; count: string }, rounds: number): Measured {
  runEntry(entries.count, log.path);
  runEntry(entries.fio, log.path);
  const reads: number[] = [];
  const parses: (EntryResult & { wallMs: number })[] = [];
  for (let i = 0; i < rounds; i++) {
    reads.push(runEntry(entries.count, log.path).wallMs);
    parses.push(runEntry(entries.fio, log.path));
  }
  return {
    log,
    readMs: median(reads),
    parseMs: median(parses.map((p) => p.wallMs)),
    peakMB: Math.max(...parses.map((p) => p.rss.peakKiB)) / 1024,
    keptMB: runEntry(entries.fio, log.path, [FIXED_YOUNG_GENERATION]).rss.peakKiB / 1024,
    found: parses[0]!,
  };
}

/** The fio part: prints its table and checks; what it did not meet, and whether a check failed. */
export async function fioJsonPlusBench(sizeMB: number, rounds: number): Promise<{ unmet: string[]; failed: boolean }> {
  const logs = [ensureJsonPlus(SMALL_MB), ensureJsonPlus(sizeMB)];
  const entries = await bundle();
  console.log(`\nfio json+ parse (load ${loadAverage()}), ${rounds} rounds, medians of fresh processes:`);
  const results = logs.map((log) => measure(log, entries, rounds));
  const rows = results.map((r) => [
    `${(r.log.bytes / MB).toFixed(1)} MB, ${r.log.jobs.toLocaleString('en-US')} jobs`,
    `${(r.readMs / 1000).toFixed(2)} s`,
    `${(r.parseMs / 1000).toFixed(2)} s`,
    `${(r.log.bytes / MB / (r.parseMs / 1000)).toFixed(1)} MB/s`,
    `${(r.parseMs / r.readMs).toFixed(2)}x`,
    `${r.peakMB.toFixed(1)} MB`,
    `${r.keptMB.toFixed(1)} MB`,
  ]);
  console.log(
    table(
      [
        ['file', 'read limit', 'fio parser', 'rate', 'vs read limit', 'peak RSS', `peak, ${FIXED_YOUNG_GENERATION}`],
        ...rows,
      ],
      (c) => c > 0,
    ),
  );
  let failed = false;
  for (const r of results) {
    const ok = r.found.style === 'json+' && r.found.jobs === r.log.jobs && r.found.iopsSum === r.log.iopsSum;
    if (!ok) failed = true;
    console.log(
      `check ${(r.log.bytes / MB).toFixed(0)} MB: ${r.found.style}, ${r.found.jobs} of ${r.log.jobs} jobs, ` +
        `IOPS sum ${r.found.iopsSum} (written ${r.log.iopsSum}): ${ok ? 'ok' : 'MISMATCH'}`,
    );
  }
  const [small, big] = results as [Measured, Measured];
  const flat = big.keptMB <= small.keptMB * (1 + FLAT_MARGIN);
  const growth = ((big.keptMB - small.keptMB) / small.keptMB) * 100;
  const lines = [
    [
      `fio json+ peak RSS at ${(big.log.bytes / MB).toFixed(0)} MB <= ${RSS_TARGET_MB} MB`,
      `${big.peakMB.toFixed(1)} MB`,
      big.peakMB <= RSS_TARGET_MB,
    ],
    [
      `fio json+ memory flat, ${FIXED_YOUNG_GENERATION}, <= ${FLAT_MARGIN * 100} % above the ${SMALL_MB} MB file's`,
      `${small.keptMB.toFixed(1)} -> ${big.keptMB.toFixed(1)} MB (${growth.toFixed(1)} %)`,
      flat,
    ],
  ] as const;
  for (const [what, figure, met] of lines) console.log(`  ${what}: ${figure}, ${met ? 'met' : 'NOT met'}`);
  return { unmet: lines.filter(([, , met]) => !met).map(([what]) => what), failed };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { unmet, failed } = await fioJsonPlusBench(numberArg('--size-mb', 200), numberArg('--runs', 3));
  console.log(`targets: ${unmet.length === 0 ? 'all met' : `NOT met: ${unmet.join('; ')}`}`);
  if (failed) process.exitCode = 1;
}
