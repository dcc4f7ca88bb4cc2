/**
 * `npm run bench:parse`: how fast benchdrop parses big iostat logs, against awk
 * doing the same work (per-device means) on the same file in the same run.
 *
 *   1. generate (or reuse) a Solaris `iostat -xn` log and a Linux sysstat 12.5
 *      `iostat -x` log of 100 devices each in bench/out/ (bench/generate.ts), and
 *      a 1 GB Solaris log, to show that throughput holds and memory stays flat
 *      as the file grows;
 *   2. bundle bench/parse-entry.ts and bench/count-lines-entry.ts with esbuild, so
 *      the measured processes are plain `node` with no TypeScript loader;
 *   3. per file, after one untimed warm-up read, run N rounds (default 3; 2 for
 *      the 1 GB file) of:
 *      Node counting '\n' (the read-limit reference), `awk -f bench/means-*.awk`,
 *      `node bench/out/parse-entry.mjs` (parseStream, keepSamples: false); each is
 *      a fresh process timed by wall clock from spawn to exit; medians are reported;
 *   4. cross-check benchdrop's means against awk's (1e-6 relative) and exit 1 if
 *      they disagree or a side fails.
 *
 * Targets (reported, not asserted): benchdrop at most half of awk's time, peak
 * RSS at most 150 MB, and the 1 GB file's peak RSS at most 15 % above the
 * 200 MB Solaris file's (memory flat). The time to read the file and count its
 * lines in plain Node is the read limit each side is compared with.
 * 1 MB = 10^6 bytes throughout.
 *
 *   npm run bench:parse -- [--size-mb 200] [--runs 3] [--big-mb 1000] [--big-runs 2] [solaris] [linux]
 *
 * `--big-mb 0` leaves the big file out; it is a Solaris log, so `linux` alone
 * leaves it out too.
 */
import '../shared/node-support-notice.ts';
import { spawnSync } from 'node:child_process';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ensureLog, LOG_KINDS, MB, OUT_DIR, sizeFromArgs, type GeneratedLog, type LogKind } from './generate.ts';
import type { DeviceMeans, ParseTotals } from './parse-entry.ts';
import { numberArg } from './args.ts';
import { median, table } from './stats.ts';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, '..');

const RATIO_TARGET = 0.5;
const RSS_TARGET_MB = 150;
/**
 * Memory is flat when the big file's peak RSS is at most this much above the
 * regular file's. Not zero: over a run five times as long the two threads' V8
 * heaps and malloc arenas settled a few MB higher (measured 83-84 MB at 200 MB,
 * 91-93 MB at 1 GB while each read allocated a fresh buffer; 77 and 77-78 MB
 * since the parser reads into reused buffers), while as little as 8 bytes
 * kept per line would add 93 MB.
 */
const RSS_FLAT_MARGIN = 0.15;
const BIG_KIND: LogKind = 'solaris';
const TOLERANCE = 1e-6;

/** Canonical metric -> printed column(s) whose mean it must equal (a sum for derived iops). */
const CROSS_CHECK: Record<LogKind, Record<string, readonly string[]>> = {
  solaris: {
    read_iops: ['r/s'],
    write_iops: ['w/s'],
    iops: ['r/s', 'w/s'],
    read_kBps: ['kr/s'],
    write_kBps: ['kw/s'],
    wait_queue: ['wait'],
    active_queue: ['actv'],
    wait_ms: ['wsvc_t'],
    service_ms: ['asvc_t'],
    util_pct: ['%b'],
  },
  linux: {
    read_iops: ['r/s'],
    write_iops: ['w/s'],
    iops: ['r/s', 'w/s'],
    read_kBps: ['rkB/s'],
    write_kBps: ['wkB/s'],
    read_ms: ['r_await'],
    write_ms: ['w_await'],
    active_queue: ['aqu-sz'],
    util_pct: ['%util'],
  },
};

const AWK_SCRIPT: Record<LogKind, string> = {
  solaris: join(BENCH_DIR, 'means-solaris.awk'),
  linux: join(BENCH_DIR, 'means-linux.awk'),
};

const LABEL: Record<LogKind, string> = {
  solaris: 'Solaris iostat -xn',
  linux: 'Linux sysstat 12.5 -x',
};

// ---------------------------------------------------------------- arguments

const args = process.argv.slice(2);
const sizeBytes = sizeFromArgs(args);

const rounds = numberArg('--runs', 3, (n) => Number.isInteger(n) && n >= 1, 'a positive integer');
const bigBytes = Math.round(numberArg('--big-mb', 1000, (n) => Number.isFinite(n) && n >= 0, 'a number of MB (0: no big file)') * MB);
const bigRounds = numberArg('--big-runs', 2, (n) => Number.isInteger(n) && n >= 1, 'a positive integer');
const chosen = LOG_KINDS.filter((k) => args.includes(k));
const kinds = chosen.length > 0 ? chosen : LOG_KINDS;

/** The files measured, in order: each kind at the regular size, then the big Solaris log. */
const plan: { kind: LogKind; bytes: number; rounds: number; big: boolean }[] = [
  ...kinds.map((kind) => ({ kind, bytes: sizeBytes, rounds, big: false })),
  ...(bigBytes > sizeBytes && kinds.includes(BIG_KIND) ? [{ kind: BIG_KIND, bytes: bigBytes, rounds: bigRounds, big: true }] : []),
];

// ---------------------------------------------------------------- helpers

interface Timed {
  ms: number;
  stdout: string;
}

/** Spawn a fresh process and time it, spawn to exit. Throws with its stderr if it fails. */
function timed(command: string, commandArgs: readonly string[], what: string): Timed {
  const env = { ...process.env };
  // The measured node processes must not inherit a loader from tsx.
  delete env.NODE_OPTIONS;
  const started = performance.now();
  const child = spawnSync(command, commandArgs, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env, cwd: ROOT });
  const ms = performance.now() - started;
  if (child.error) throw new Error(`${what}: ${child.error.message}`);
  if (child.status !== 0) {
    throw new Error(`${what} exited with ${child.status ?? child.signal}:\n${(child.stderr || child.stdout).trim().slice(0, 4000)}`);
  }
  return { ms, stdout: child.stdout };
}

function sh(command: string, commandArgs: readonly string[]): string {
  const child = spawnSync(command, commandArgs, { encoding: 'utf8' });
  return `${child.stdout ?? ''}${child.stderr ?? ''}`.trim();
}

const rel = (path: string): string => relative(ROOT, path) || '.';

// ---------------------------------------------------------------- the two sides' outputs

interface AwkMeans {
  columns: string[];
  reports: number;
  devices: Map<string, { count: number; means: number[] }>;
}

function readAwk(stdout: string): AwkMeans {
  const lines = stdout.trim().split('\n');
  const columns = lines[0].split(' ').slice(1);
  const reports = Number(lines[1].split(' ')[1]);
  const devices = new Map<string, { count: number; means: number[] }>();
  for (const line of lines.slice(2)) {
    const [device, count, ...means] = line.split(' ');
    devices.set(device, { count: Number(count), means: means.map(Number) });
  }
  return { columns, reports, devices };
}

interface BenchdropMeans {
  devices: DeviceMeans[];
  totals: ParseTotals;
}

function readBenchdrop(stdout: string): BenchdropMeans {
  const lines = stdout.trim().split('\n');
  const totals = JSON.parse(lines[lines.length - 1]) as ParseTotals;
  if (totals.done !== true) throw new Error('parse-entry printed no totals line');
  return { devices: lines.slice(0, -1).map((l) => JSON.parse(l) as DeviceMeans), totals };
}

/** Problems found comparing benchdrop's means with awk's (empty: they agree). */
function crossCheck(kind: LogKind, awk: AwkMeans, bd: BenchdropMeans): { problems: string[]; compared: number } {
  const problems: string[] = [];
  let compared = 0;
  const { totals } = bd;
  if (totals.runs !== 1) problems.push(`benchdrop found ${totals.runs} runs in the file, awk treats it as 1 (reports per run: ${totals.reports.join(', ')})`);
  if (totals.reports[0] !== awk.reports) problems.push(`benchdrop counted ${totals.reports[0]} reports, awk ${awk.reports}`);
  const byDevice = new Map(bd.devices.filter((d) => d.run === (bd.devices[0]?.run ?? 0)).map((d) => [d.device, d]));
  for (const device of byDevice.keys()) if (!awk.devices.has(device)) problems.push(`device ${device}: in benchdrop's output only`);
  for (const [device, a] of awk.devices) {
    const b = byDevice.get(device);
    if (b === undefined) {
      problems.push(`device ${device}: in awk's output only`);
      continue;
    }
    for (const [metric, names] of Object.entries(CROSS_CHECK[kind])) {
      let expected = 0;
      for (const name of names) {
        const at = awk.columns.indexOf(name);
        if (at === -1) throw new Error(`awk printed no column ${name}: ${awk.columns.join(' ')}`);
        expected += a.means[at];
      }
      const actual = b.mean[metric];
      compared++;
      if (actual === undefined) {
        problems.push(`${device} ${metric}: no benchdrop summary (awk mean of ${names.join('+')} = ${expected})`);
        continue;
      }
      if (b.count[metric] !== a.count) problems.push(`${device} ${metric}: benchdrop summarised ${b.count[metric]} samples, awk ${a.count}`);
      const diff = Math.abs(actual - expected);
      if (diff > TOLERANCE * Math.max(Math.abs(actual), Math.abs(expected)) && diff > 1e-12) {
        problems.push(`${device} ${metric}: benchdrop ${actual}, awk ${names.join('+')} ${expected} (relative difference ${(diff / Math.max(Math.abs(actual), Math.abs(expected))).toExponential(2)})`);
      }
    }
  }
  return { problems, compared };
}

// ---------------------------------------------------------------- the run

interface Result {
  log: GeneratedLog;
  big: boolean;
  awkMs: number[];
  bdMs: number[];
  countMs: number[];
  bdInProcessMs: number[];
  rssMB: number;
  countLines: number;
  totals: ParseTotals;
  compared: number;
  problems: string[];
}

async function main(): Promise<number> {
  const benchStarted = performance.now();
  const awkVersion = sh('awk', ['-W', 'version']).split('\n')[0] || sh('awk', ['--version']).split('\n')[0];
  console.log('benchdrop parsing benchmark (npm run bench:parse)');
  console.log(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM; node ${process.version}; awk: ${awkVersion}`);
  console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (other processes on this machine share its CPUs)`);
  console.log(
    `files: ${plan.map((f) => `${f.kind} ${(f.bytes / MB).toFixed(0)} MB (${f.rounds} round${f.rounds === 1 ? '' : 's'})`).join(', ')}; each round times every side once; medians reported; 1 MB = 10^6 bytes`,
  );

  const started = performance.now();
  await build({
    entryPoints: [
      { in: join(BENCH_DIR, 'parse-entry.ts'), out: 'parse-entry' },
      { in: join(BENCH_DIR, 'count-lines-entry.ts'), out: 'count-lines-entry' },
      // parallel.ts starts its workers from parse-worker.mjs beside the bundle that imports it.
      { in: join(ROOT, 'shared/parsers/parse-worker.ts'), out: 'parse-worker' },
    ],
    outdir: OUT_DIR,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  const parseBundle = join(OUT_DIR, 'parse-entry.mjs');
  const countBundle = join(OUT_DIR, 'count-lines-entry.mjs');
  console.log(`bundled ${rel(parseBundle)} and ${rel(countBundle)} with esbuild (${(performance.now() - started).toFixed(0)} ms)`);

  const results: Result[] = [];
  let failed = false;
  for (const { kind, bytes, rounds, big } of plan) {
    const genStarted = performance.now();
    const log = ensureLog(kind, bytes);
    console.log(
      `\n${LABEL[kind]}: ${log.reused ? 'reusing' : 'generated'} ${rel(log.path)} (${(log.bytes / MB).toFixed(1)} MB, ${log.lines} lines, ${log.reports} reports x ${log.devices} devices${log.reused ? '' : `, ${((performance.now() - genStarted) / 1000).toFixed(1)} s`})`,
    );
    const awkArgs = ['-f', AWK_SCRIPT[kind], log.path];
    try {
      timed(process.execPath, [countBundle, log.path], 'warm-up read');
      const r: Result = { log, big, awkMs: [], bdMs: [], countMs: [], bdInProcessMs: [], rssMB: 0, countLines: 0, totals: undefined as unknown as ParseTotals, compared: 0, problems: [] };
      let awkOut: string | undefined;
      let bdOut: string | undefined;
      for (let round = 1; round <= rounds; round++) {
        const count = timed(process.execPath, [countBundle, log.path], 'node line count');
        r.countMs.push(count.ms);
        r.countLines = (JSON.parse(count.stdout) as { lines: number }).lines;
        const awk = timed('awk', awkArgs, `awk -f ${rel(AWK_SCRIPT[kind])}`);
        r.awkMs.push(awk.ms);
        const bd = timed(process.execPath, [parseBundle, log.path], `node ${rel(parseBundle)}`);
        r.bdMs.push(bd.ms);
        const parsed = readBenchdrop(bd.stdout);
        r.totals = parsed.totals;
        if (parsed.totals.execArgv.length > 0) throw new Error(`the benchdrop process ran with node flags ${parsed.totals.execArgv.join(' ')}: RSS would include them`);
        r.bdInProcessMs.push(parsed.totals.parseMs);
        const rssMB = (parsed.totals.rss.peakKiB * 1024) / MB;
        r.rssMB = Math.max(r.rssMB, rssMB);
        if (awkOut !== undefined && awk.stdout !== awkOut) r.problems.push(`awk printed different means in round ${round}`);
        if (bdOut !== undefined && bd.stdout.split('\n').slice(0, -2).join('\n') !== bdOut.split('\n').slice(0, -2).join('\n')) r.problems.push(`benchdrop printed different means in round ${round}`);
        awkOut ??= awk.stdout;
        bdOut ??= bd.stdout;
        console.log(
          `  round ${round}: line count ${(count.ms / 1000).toFixed(2)} s, awk ${(awk.ms / 1000).toFixed(2)} s, benchdrop ${(bd.ms / 1000).toFixed(2)} s (parse ${(parsed.totals.parseMs / 1000).toFixed(2)} s in-process, peak RSS ${rssMB.toFixed(1)} MB ${parsed.totals.rss.source}, maxRSS ${((parsed.totals.rss.maxRSSKiB * 1024) / MB).toFixed(1)} MB)`,
        );
      }
      const check = crossCheck(kind, readAwk(awkOut!), readBenchdrop(bdOut!));
      r.compared = check.compared;
      r.problems.push(...check.problems);
      if (r.totals.warnings > 0) console.log(`  benchdrop warnings: ${r.totals.warnings}; first: ${r.totals.firstWarnings.join(' | ')}`);
      if (r.totals.lines !== r.countLines) console.log(`  note: benchdrop counted ${r.totals.lines} lines, the '\\n' count is ${r.countLines}`);
      if (r.problems.length > 0) {
        failed = true;
        console.log(`  CROSS-CHECK FAILED (${r.problems.length} problem(s)):`);
        for (const p of r.problems.slice(0, 12)) console.log(`    ${p}`);
      } else {
        console.log(`  cross-check: ${check.compared} per-device means (${Object.keys(CROSS_CHECK[kind]).join(', ')}) agree with awk's to ${TOLERANCE} relative; benchdrop read ${r.totals.runs} run (${r.totals.dialects.join(', ')}, ${r.totals.reports.join('+')} reports)`);
      }
      results.push(r);
    } catch (error) {
      failed = true;
      console.log(`  FAILED: ${(error as Error).message}`);
    }
  }

  if (results.length > 0) {
    const unmet: string[] = [];
    const rows: string[][] = [['file', 'size MB', 'rounds', 'awk s', 'benchdrop s', 'benchdrop MB/s', `benchdrop / awk (<= ${RATIO_TARGET})`, 'benchdrop / line count', `peak RSS MB (<= ${RSS_TARGET_MB})`, 'targets']];
    const refRows: string[][] = [['file', 'lines', 'line count s', 'line count MB/s', 'benchdrop / line count', 'awk / line count']];
    const misses = new Map<Result, string[]>(results.map((r) => [r, []]));
    // Memory flat: the big file's peak RSS against the same platform's regular file.
    const flatLines: string[] = [];
    for (const big of results.filter((r) => r.big)) {
      const regular = results.find((r) => !r.big && r.log.kind === big.log.kind);
      if (regular === undefined) {
        flatLines.push(`memory flat: not measured (no ${(sizeBytes / MB).toFixed(0)} MB ${big.log.kind} file to compare ${basename(big.log.path)} with)`);
        continue;
      }
      const limit = regular.rssMB * (1 + RSS_FLAT_MARGIN);
      const met = big.rssMB <= limit;
      if (!met) misses.get(big)!.push(`peak RSS ${big.rssMB.toFixed(1)} MB more than ${RSS_FLAT_MARGIN * 100} % above ${regular.rssMB.toFixed(1)} MB at ${(regular.log.bytes / MB).toFixed(0)} MB`);
      flatLines.push(
        `memory flat: peak RSS ${regular.rssMB.toFixed(1)} MB at ${(regular.log.bytes / MB).toFixed(0)} MB, ${big.rssMB.toFixed(1)} MB at ${(big.log.bytes / MB).toFixed(0)} MB (x${(big.rssMB / regular.rssMB).toFixed(2)}; target: at most ${RSS_FLAT_MARGIN * 100} % more, <= ${limit.toFixed(1)} MB, and <= ${RSS_TARGET_MB} MB): ${met ? 'met' : 'NOT MET'}`,
      );
    }
    for (const r of results) {
      const sizeMB = r.log.bytes / MB;
      const awkS = median(r.awkMs) / 1000;
      const bdS = median(r.bdMs) / 1000;
      const countS = median(r.countMs) / 1000;
      // Each round runs the three back to back: the median of a round's ratios is
      // steadier than a ratio of medians when the machine's speed drifts between rounds.
      const ratio = median(r.bdMs.map((ms, i) => ms / r.awkMs[i]!));
      const toCount = median(r.bdMs.map((ms, i) => ms / r.countMs[i]!));
      const own = misses.get(r)!;
      if (ratio > RATIO_TARGET) own.unshift(`ratio to awk ${ratio.toFixed(2)} > ${RATIO_TARGET}`);
      if (r.rssMB > RSS_TARGET_MB) own.unshift(`peak RSS ${r.rssMB.toFixed(0)} MB > ${RSS_TARGET_MB}`);
      const name = basename(r.log.path);
      for (const m of own) unmet.push(`${name} ${m}`);
      rows.push([name, sizeMB.toFixed(1), String(r.bdMs.length), awkS.toFixed(2), bdS.toFixed(2), (sizeMB / bdS).toFixed(1), ratio.toFixed(2), toCount.toFixed(2), r.rssMB.toFixed(1), own.length === 0 ? 'met' : 'NOT MET']);
      refRows.push([name, String(r.countLines), countS.toFixed(2), (sizeMB / countS).toFixed(1), toCount.toFixed(2), median(r.awkMs.map((ms, i) => ms / r.countMs[i]!)).toFixed(2)]);
    }
    console.log("\nwall time per fresh process, spawn to exit (medians; ratios are medians of each round's ratio):\n");
    console.log(table(rows, (c) => c > 0 && c < 9));
    console.log("\nread-limit reference (plain node reading the file as the parser does (fileChunks: 256 KiB reads into two reused buffers) and counting '\\n'; the ratios say how far each side is from merely reading the file):\n");
    console.log(table(refRows, (c) => c > 0));
    if (flatLines.length > 0) console.log(`\n${flatLines.join('\n')}`);
    const complete = results.length === plan.length;
    console.log(`\nload average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}; bench:parse took ${((performance.now() - benchStarted) / 1000).toFixed(0)} s`);
    if (failed) console.log('bench FAILED: see above');
    console.log(`targets: ${unmet.length === 0 && complete ? 'all met' : `NOT met: ${[...unmet, ...(complete ? [] : ['a file failed to run'])].join('; ')}`}`);
  } else {
    console.log('\nbench FAILED: no file was measured');
    console.log('targets: NOT met: no file was measured');
  }
  return failed ? 1 : 0;
}

process.exitCode = await main();
