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
 *      `node bin/benchdrop.js parse FILE` (the command as a user runs it, on the
 *      build `npm ci` made, rebuilt first by `npm run build`), and
 *      `node bench/out/parse-entry.mjs` (parseFile in-process, keepSamples: false);
 *      each is a fresh process timed by wall clock from spawn to exit; medians
 *      are reported; the command's peak RSS is read by /usr/bin/time;
 *   4. cross-check benchdrop's means against awk's (1e-6 relative for the
 *      in-process entry's JSON, the printed precision for the command's table)
 *      and exit 1 if they disagree or a side fails;
 *   5. the fio parser on a 200 MB json+ log (bench/parse-fio.ts: its rate and
 *      peak RSS), its targets joined to these.
 *
 * Targets (reported, not asserted), for the command and the in-process entry
 * alike: at most half of awk's time, peak RSS at most 150 MB, and the 1 GB file's
 * peak RSS at most 15 % above the 200 MB Solaris file's (memory flat). The time
 * to read the file and count its lines in plain Node is the read limit each side
 * is compared with.
 * 1 MB = 10^6 bytes throughout.
 *
 *   npm run bench:parse -- [--size-mb 200] [--runs 3] [--big-mb 1000] [--big-runs 2] [--fio-mb 200] [solaris] [linux]
 *
 * `--big-mb 0` leaves the big file out; it is a Solaris log, so `linux` alone
 * leaves it out too.
 */
import '../shared/node-support-notice.ts';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureLog, LOG_KINDS, MB, OUT_DIR, sizeFromArgs, type GeneratedLog, type LogKind } from './generate.ts';
import type { DeviceMeans, ParseTotals } from './parse-entry.ts';
import { numberArg } from './args.ts';
import { bundleForNode } from './node-bundles.ts';
import { fioJsonPlusBench } from './parse-fio.ts';
import { BIN, buildShipped } from './shipped.ts';
import { loadAverage, median, table } from './stats.ts';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, '..');
/** GNU time: the command's peak RSS from outside (its maxrss), with no code of ours in the measured process. */
const GNU_TIME = '/usr/bin/time';

const RATIO_TARGET = 0.5;
const RSS_TARGET_MB = 150;
/**
 * Memory is flat when the big file's peak RSS is at most this much above the
 * regular file's. Not zero: over a longer run the two threads' V8 heaps and malloc
 * arenas settle a little higher, while keeping even a few bytes per line would grow
 * with the file far past this margin (the figures are in BENCHMARKS.md).
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
const bigBytes = Math.round(
  numberArg('--big-mb', 1000, (n) => Number.isFinite(n) && n >= 0, 'a number of MB (0: no big file)') * MB,
);
const bigRounds = numberArg('--big-runs', 2, (n) => Number.isInteger(n) && n >= 1, 'a positive integer');
/** The fio json+ log's size (bench/parse-fio.ts), 0 for none. */
const fioMB = numberArg('--fio-mb', 200, (n) => Number.isFinite(n) && n >= 0, 'a number of MB (0: no fio log)');
const chosen = LOG_KINDS.filter((k) => args.includes(k));
const kinds = chosen.length > 0 ? chosen : LOG_KINDS;

/** The files measured, in order: each kind at the regular size, then the big Solaris log. */
const plan: { kind: LogKind; bytes: number; rounds: number; big: boolean }[] = [
  ...kinds.map((kind) => ({ kind, bytes: sizeBytes, rounds, big: false })),
  ...(bigBytes > sizeBytes && kinds.includes(BIG_KIND)
    ? [{ kind: BIG_KIND, bytes: bigBytes, rounds: bigRounds, big: true }]
    : []),
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
    throw new Error(
      `${what} exited with ${child.status ?? child.signal}:\n${(child.stderr || child.stdout).trim().slice(0, 4000)}`,
    );
  }
  return { ms, stdout: child.stdout };
}

interface TimedRss extends Timed {
  /** Peak RSS in MB, undefined when /usr/bin/time is not there. */
  rssMB: number | undefined;
}

/** timed(), with the process's peak RSS read by GNU time into a file of its own (not the command's stderr). */
function timedWithRss(command: string, commandArgs: readonly string[], what: string): TimedRss {
  if (!existsSync(GNU_TIME)) return { ...timed(command, commandArgs, what), rssMB: undefined };
  const report = join(OUT_DIR, 'peak-rss.txt');
  const run = timed(GNU_TIME, ['-f', '%M', '-o', report, command, ...commandArgs], what);
  const kib = Number(readFileSync(report, 'utf8').trim().split('\n').pop());
  return { ...run, rssMB: Number.isFinite(kib) ? (kib * 1024) / MB : undefined };
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
  devices: (DeviceMeans & { printed?: Record<string, string> })[];
  totals: ParseTotals;
}

function readBenchdrop(stdout: string): BenchdropMeans {
  const lines = stdout.trim().split('\n');
  const totals = JSON.parse(lines[lines.length - 1]) as ParseTotals;
  if (totals.done !== true) throw new Error('parse-entry printed no totals line');
  return { devices: lines.slice(0, -1).map((l) => JSON.parse(l) as DeviceMeans), totals };
}

/**
 * The per-device means `benchdrop parse` printed: its table's header names the
 * canonical metrics, each row starts with the device and its sample count.
 */
function readCliTable(stdout: string): BenchdropMeans {
  const lines = stdout.split('\n');
  const at = lines.findIndex((l) => /^\s+device\s+samples\s/.test(l));
  if (at === -1) throw new Error(`benchdrop parse printed no device table:\n${stdout.slice(0, 2000)}`);
  const metrics = lines[at].trim().split(/\s+/).slice(2);
  const devices: BenchdropMeans['devices'] = [];
  for (const line of lines.slice(at + 1)) {
    const cells = line.trim().split(/\s+/);
    if (cells.length !== metrics.length + 2) break;
    const [device, samples, ...values] = cells;
    const mean: Record<string, number> = {};
    const count: Record<string, number> = {};
    const printed: Record<string, string> = {};
    metrics.forEach((m, i) => {
      if (values[i] === '-') return;
      mean[m] = Number(values[i]);
      printed[m] = values[i]!;
    });
    devices.push({ run: 0, device: device!, sampleCount: Number(samples), count, mean, printed });
  }
  const runs = Number(/: iostat, (\d+) runs?,/.exec(stdout)?.[1] ?? NaN);
  const reports = Number(/, (\d+) reports?,/.exec(stdout)?.[1] ?? NaN);
  return { devices, totals: { runs, reports: [reports] } as ParseTotals };
}

/** How far a value printed as `text` may be from the exact mean: half its last printed digit. */
function printedTolerance(text: string): number {
  if (/e/i.test(text)) return Math.abs(Number(text)) * 0.05;
  const decimals = text.split('.')[1]?.length ?? 0;
  return 0.5 * 10 ** -decimals * 1.001;
}

/** Problems found comparing benchdrop's means with awk's (empty: they agree). */
function crossCheck(kind: LogKind, awk: AwkMeans, bd: BenchdropMeans): { problems: string[]; compared: number } {
  const problems: string[] = [];
  let compared = 0;
  const { totals } = bd;
  if (totals.runs !== 1)
    problems.push(
      `benchdrop found ${totals.runs} runs in the file, awk treats it as 1 ` +
        `(reports per run: ${totals.reports.join(', ')})`,
    );
  if (totals.reports[0] !== awk.reports)
    problems.push(`benchdrop counted ${totals.reports[0]} reports, awk ${awk.reports}`);
  const byDevice = new Map(bd.devices.filter((d) => d.run === (bd.devices[0]?.run ?? 0)).map((d) => [d.device, d]));
  for (const device of byDevice.keys())
    if (!awk.devices.has(device)) problems.push(`device ${device}: in benchdrop's output only`);
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
      if (b.count[metric] !== undefined && b.count[metric] !== a.count)
        problems.push(`${device} ${metric}: benchdrop summarised ${b.count[metric]} samples, awk ${a.count}`);
      const diff = Math.abs(actual - expected);
      const printed = b.printed?.[metric];
      if (printed !== undefined) {
        if (diff > printedTolerance(printed))
          problems.push(`${device} ${metric}: benchdrop parse printed ${printed}, awk ${names.join('+')} ${expected}`);
        continue;
      }
      if (diff > TOLERANCE * Math.max(Math.abs(actual), Math.abs(expected)) && diff > 1e-12) {
        problems.push(
          `${device} ${metric}: benchdrop ${actual}, awk ${names.join('+')} ${expected} ` +
            `(relative difference ${(diff / Math.max(Math.abs(actual), Math.abs(expected))).toExponential(2)})`,
        );
      }
    }
  }
  return { problems, compared };
}

// ---------------------------------------------------------------- the run

/** The two benchdrop figures printed side by side, each held to the same targets. */
const SIDES = [
  { name: 'benchdrop parse', ms: (r: Result) => r.cliMs, rssMB: (r: Result) => r.cliRssMB },
  { name: 'in-process entry', ms: (r: Result) => r.bdMs, rssMB: (r: Result): number | undefined => r.rssMB },
] as const;

interface Result {
  log: GeneratedLog;
  big: boolean;
  awkMs: number[];
  bdMs: number[];
  /** `node bin/benchdrop.js parse FILE`, the command a user runs. */
  cliMs: number[];
  cliRssMB: number | undefined;
  countMs: number[];
  bdInProcessMs: number[];
  rssMB: number;
  countLines: number;
  totals: ParseTotals;
  compared: number;
  problems: string[];
}

type PlannedFile = (typeof plan)[number];

interface Bundles {
  parse: string;
  count: string;
}

function printMachine(): void {
  const awkVersion = sh('awk', ['-W', 'version']).split('\n')[0] || sh('awk', ['--version']).split('\n')[0];
  console.log('benchdrop parsing benchmark (npm run bench:parse)');
  console.log(
    `machine: ${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}), ` +
      `${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM; node ${process.version}; awk: ${awkVersion}`,
  );
  console.log(`load average at start: ${loadAverage()} (other processes on this machine share its CPUs)`);
  const files = plan.map(
    (f) => `${f.kind} ${(f.bytes / MB).toFixed(0)} MB (${f.rounds} round${f.rounds === 1 ? '' : 's'})`,
  );
  console.log(`files: ${files.join(', ')}; each round times every side once; medians reported; 1 MB = 10^6 bytes`);
}

/** Builds the command, and bundles the in-process entry and the line counter for plain `node`. */
async function buildSides(): Promise<Bundles> {
  console.log(`built the command with npm run build (${buildShipped().toFixed(0)} ms)`);
  const started = performance.now();
  const [parse, count] = await bundleForNode([
    { in: join(BENCH_DIR, 'parse-entry.ts'), out: 'parse-entry' },
    { in: join(BENCH_DIR, 'count-lines-entry.ts'), out: 'count-lines-entry' },
    // parallel.ts starts its workers from parse-worker.mjs beside the bundle that imports it.
    { in: join(ROOT, 'shared/parsers/parse-worker.ts'), out: 'parse-worker' },
  ]);
  const bundles = { parse: parse!, count: count! };
  console.log(
    `bundled ${rel(bundles.parse)} and ${rel(bundles.count)} with esbuild ` +
      `(${(performance.now() - started).toFixed(0)} ms)`,
  );
  return bundles;
}

function generateLog({ kind, bytes }: PlannedFile): GeneratedLog {
  const genStarted = performance.now();
  const log = ensureLog(kind, bytes);
  console.log(
    `\n${LABEL[kind]}: ${log.reused ? 'reusing' : 'generated'} ${rel(log.path)} ` +
      `(${(log.bytes / MB).toFixed(1)} MB, ${log.lines} lines, ${log.reports} reports x ${log.devices} devices` +
      `${log.reused ? '' : `, ${((performance.now() - genStarted) / 1000).toFixed(1)} s`})`,
  );
  return log;
}

function emptyResult(log: GeneratedLog, big: boolean): Result {
  return {
    log,
    big,
    awkMs: [],
    bdMs: [],
    cliMs: [],
    cliRssMB: undefined,
    countMs: [],
    bdInProcessMs: [],
    rssMB: 0,
    countLines: 0,
    totals: undefined as unknown as ParseTotals,
    compared: 0,
    problems: [],
  };
}

/** What each side printed in the first round: the later rounds must print the same. */
interface FirstOutputs {
  awk?: string;
  bd?: string;
  cli?: string;
}

const withoutTotals = (stdout: string) => stdout.split('\n').slice(0, -2).join('\n');

/** One round: every side timed once, back to back, its output checked against the first round's. */
function runRound(r: Result, round: number, bundles: Bundles, first: FirstOutputs): void {
  const { path, kind } = r.log;
  const count = timed(process.execPath, [bundles.count, path], 'node line count');
  r.countMs.push(count.ms);
  r.countLines = (JSON.parse(count.stdout) as { lines: number }).lines;
  const awk = timed('awk', ['-f', AWK_SCRIPT[kind], path], `awk -f ${rel(AWK_SCRIPT[kind])}`);
  r.awkMs.push(awk.ms);
  const cli = timedWithRss(process.execPath, [BIN, 'parse', path], `node ${rel(BIN)} parse`);
  r.cliMs.push(cli.ms);
  if (cli.rssMB !== undefined) r.cliRssMB = Math.max(r.cliRssMB ?? 0, cli.rssMB);
  if (first.cli !== undefined && cli.stdout !== first.cli)
    r.problems.push(`benchdrop parse printed different means in round ${round}`);
  first.cli ??= cli.stdout;
  const bd = timed(process.execPath, [bundles.parse, path], `node ${rel(bundles.parse)}`);
  r.bdMs.push(bd.ms);
  const parsed = readBenchdrop(bd.stdout);
  r.totals = parsed.totals;
  if (parsed.totals.execArgv.length > 0)
    throw new Error(
      `the benchdrop process ran with node flags ${parsed.totals.execArgv.join(' ')}: RSS would include them`,
    );
  r.bdInProcessMs.push(parsed.totals.parseMs);
  const rssMB = (parsed.totals.rss.peakKiB * 1024) / MB;
  r.rssMB = Math.max(r.rssMB, rssMB);
  if (first.awk !== undefined && awk.stdout !== first.awk)
    r.problems.push(`awk printed different means in round ${round}`);
  if (first.bd !== undefined && withoutTotals(bd.stdout) !== withoutTotals(first.bd))
    r.problems.push(`benchdrop printed different means in round ${round}`);
  first.awk ??= awk.stdout;
  first.bd ??= bd.stdout;
  console.log(
    `  round ${round}: line count ${(count.ms / 1000).toFixed(2)} s, awk ${(awk.ms / 1000).toFixed(2)} s, ` +
      `benchdrop parse ${(cli.ms / 1000).toFixed(2)} s (peak RSS ${cli.rssMB?.toFixed(1) ?? 'not measured'} MB), ` +
      `in-process entry ${(bd.ms / 1000).toFixed(2)} s (parse ${(parsed.totals.parseMs / 1000).toFixed(2)} s ` +
      `in-process, peak RSS ${rssMB.toFixed(1)} MB ${parsed.totals.rss.source}, ` +
      `maxRSS ${((parsed.totals.rss.maxRSSKiB * 1024) / MB).toFixed(1)} MB)`,
  );
}

/** A file's rounds, then both benchdrop sides' means checked against awk's. */
function measureFile(log: GeneratedLog, { rounds, big }: PlannedFile, bundles: Bundles): Result {
  timed(process.execPath, [bundles.count, log.path], 'warm-up read');
  const r = emptyResult(log, big);
  const first: FirstOutputs = {};
  for (let round = 1; round <= rounds; round++) runRound(r, round, bundles, first);
  const awkMeans = readAwk(first.awk!);
  const check = crossCheck(log.kind, awkMeans, readBenchdrop(first.bd!));
  const cliCheck = crossCheck(log.kind, awkMeans, readCliTable(first.cli!));
  r.compared = check.compared;
  r.problems.push(...check.problems, ...cliCheck.problems.map((p) => `benchdrop parse: ${p}`));
  return r;
}

/** Prints what the cross-check found; true when it found no problem. */
function reportCrossCheck(r: Result): boolean {
  if (r.totals.warnings > 0)
    console.log(`  benchdrop warnings: ${r.totals.warnings}; first: ${r.totals.firstWarnings.join(' | ')}`);
  if (r.totals.lines !== r.countLines)
    console.log(`  note: benchdrop counted ${r.totals.lines} lines, the '\\n' count is ${r.countLines}`);
  if (r.problems.length > 0) {
    console.log(`  CROSS-CHECK FAILED (${r.problems.length} problem(s)):`);
    for (const p of r.problems.slice(0, 12)) console.log(`    ${p}`);
    return false;
  }
  console.log(
    `  cross-check: ${r.compared} per-device means (${Object.keys(CROSS_CHECK[r.log.kind]).join(', ')}) ` +
      `agree with awk's to ${TOLERANCE} relative (the in-process entry) ` +
      "and to their printed digits (benchdrop parse's table); " +
      `benchdrop read ${r.totals.runs} run (${r.totals.dialects.join(', ')}, ${r.totals.reports.join('+')} reports)`,
  );
  return true;
}

type Side = (typeof SIDES)[number];

/** The tables and verdicts of the summary, filled side by side. */
interface Summary {
  rows: string[][];
  refRows: string[][];
  flatLines: string[];
  unmet: string[];
}

function emptySummary(): Summary {
  const rows = [
    [
      'file',
      'side',
      'size MB',
      'rounds',
      'awk s',
      'benchdrop s',
      'benchdrop MB/s',
      `benchdrop / awk (<= ${RATIO_TARGET})`,
      'benchdrop / line count',
      `peak RSS MB (<= ${RSS_TARGET_MB})`,
      'targets',
    ],
  ];
  const refRows = [
    ['file', 'lines', 'line count s', 'line count MB/s', 'benchdrop parse / line count', 'awk / line count'],
  ];
  return { rows, refRows, flatLines: [], unmet: [] };
}

/** Memory flat: the big file's peak RSS against the same platform's regular file. */
function checkMemoryFlat(side: Side, results: Result[], misses: Map<Result, string[]>, flatLines: string[]): void {
  for (const big of results.filter((r) => r.big)) {
    const regular = results.find((r) => !r.big && r.log.kind === big.log.kind);
    const bigRss = side.rssMB(big);
    const regularRss = regular && side.rssMB(regular);
    if (regularRss === undefined || bigRss === undefined) {
      flatLines.push(
        `memory flat, ${side.name}: not measured (no ${(sizeBytes / MB).toFixed(0)} MB ${big.log.kind} file or no ` +
          `peak RSS to compare ${basename(big.log.path)} with)`,
      );
      continue;
    }
    const limit = regularRss * (1 + RSS_FLAT_MARGIN);
    const met = bigRss <= limit;
    if (!met)
      misses
        .get(big)!
        .push(
          `${side.name}: peak RSS ${bigRss.toFixed(1)} MB more than ${RSS_FLAT_MARGIN * 100} % ` +
            `above ${regularRss.toFixed(1)} MB at ${(regular!.log.bytes / MB).toFixed(0)} MB`,
        );
    flatLines.push(
      `memory flat, ${side.name}: ` +
        `peak RSS ${regularRss.toFixed(1)} MB at ${(regular!.log.bytes / MB).toFixed(0)} MB, ` +
        `${bigRss.toFixed(1)} MB at ${(big.log.bytes / MB).toFixed(0)} MB (x${(bigRss / regularRss).toFixed(2)}; ` +
        `target: at most ${RSS_FLAT_MARGIN * 100} % more, <= ${limit.toFixed(1)} MB, and <= ${RSS_TARGET_MB} MB): ` +
        `${met ? 'met' : 'NOT MET'}`,
    );
  }
}

/** One file's row for one side, with its targets; the read-limit row once, with the first side. */
function addFileRows(side: Side, r: Result, own: string[], summary: Summary): void {
  const sizeMB = r.log.bytes / MB;
  const ms = side.ms(r);
  const sideS = median(ms) / 1000;
  // Each round runs the sides back to back: the median of a round's ratios is
  // steadier than a ratio of medians when the machine's speed drifts between rounds.
  const ratio = median(ms.map((m, i) => m / r.awkMs[i]!));
  const toCount = median(ms.map((m, i) => m / r.countMs[i]!));
  const rss = side.rssMB(r);
  if (ratio > RATIO_TARGET) own.unshift(`${side.name}: ratio to awk ${ratio.toFixed(2)} > ${RATIO_TARGET}`);
  if (rss === undefined) own.unshift(`${side.name}: peak RSS not measured (no ${GNU_TIME})`);
  else if (rss > RSS_TARGET_MB) own.unshift(`${side.name}: peak RSS ${rss.toFixed(0)} MB > ${RSS_TARGET_MB}`);
  const name = basename(r.log.path);
  for (const m of own) summary.unmet.push(`${name} ${m}`);
  summary.rows.push([
    name,
    side.name,
    sizeMB.toFixed(1),
    String(ms.length),
    (median(r.awkMs) / 1000).toFixed(2),
    sideS.toFixed(2),
    (sizeMB / sideS).toFixed(1),
    ratio.toFixed(2),
    toCount.toFixed(2),
    rss?.toFixed(1) ?? '-',
    own.length === 0 ? 'met' : 'NOT MET',
  ]);
  if (side !== SIDES[0]) return;
  const countS = median(r.countMs) / 1000;
  summary.refRows.push([
    name,
    String(r.countLines),
    countS.toFixed(2),
    (sizeMB / countS).toFixed(1),
    toCount.toFixed(2),
    median(r.awkMs.map((m, i) => m / r.countMs[i]!)).toFixed(2),
  ]);
}

function summarise(results: Result[]): Summary {
  const summary = emptySummary();
  for (const side of SIDES) {
    const misses = new Map<Result, string[]>(results.map((r) => [r, []]));
    checkMemoryFlat(side, results, misses, summary.flatLines);
    for (const r of results) addFileRows(side, r, misses.get(r)!, summary);
  }
  return summary;
}

function printSummary(results: Result[], failed: boolean, benchStarted: number, fioUnmet: string[]): void {
  const { rows, refRows, flatLines, unmet: iostatUnmet } = summarise(results);
  const unmet = [...iostatUnmet, ...fioUnmet];
  console.log(
    "\nwall time per fresh process, spawn to exit (medians; ratios are medians of each round's ratio). " +
      '`benchdrop parse` is the command as a user runs it (node bin/benchdrop.js parse FILE, peak RSS by GNU time); ' +
      '`in-process entry` is parseFile alone in a bundle (peak RSS by VmHWM):\n',
  );
  console.log(table(rows, (c) => c > 1 && c < 10));
  console.log(
    '\nread-limit reference (plain node reading the file as the parser does (fileChunks: 256 KiB reads into two ' +
      "reused buffers) and counting '\\n'; the ratios say how far each side is from merely reading the file):\n",
  );
  console.log(table(refRows, (c) => c > 0));
  if (flatLines.length > 0) console.log(`\n${flatLines.join('\n')}`);
  const complete = results.length === plan.length;
  console.log(
    `\nload average at end: ${loadAverage()}; ` +
      `bench:parse took ${((performance.now() - benchStarted) / 1000).toFixed(0)} s`,
  );
  if (failed) console.log('bench FAILED: see above');
  const notMet = [...unmet, ...(complete ? [] : ['a file failed to run'])];
  console.log(`targets: ${unmet.length === 0 && complete ? 'all met' : `NOT met: ${notMet.join('; ')}`}`);
}

async function main(): Promise<number> {
  const benchStarted = performance.now();
  printMachine();
  const bundles = await buildSides();
  const results: Result[] = [];
  let failed = false;
  for (const file of plan) {
    const log = generateLog(file);
    try {
      const r = measureFile(log, file, bundles);
      if (!reportCrossCheck(r)) failed = true;
      results.push(r);
    } catch (error) {
      failed = true;
      console.log(`  FAILED: ${(error as Error).message}`);
    }
  }
  const fio = fioMB > 0 ? await fioJsonPlusBench(fioMB, rounds) : { unmet: [], failed: false };
  if (fio.failed) failed = true;
  if (results.length > 0) printSummary(results, failed, benchStarted, fio.unmet);
  else {
    console.log('\nbench FAILED: no file was measured');
    console.log('targets: NOT met: no file was measured');
  }
  return failed ? 1 : 0;
}

process.exitCode = await main();
