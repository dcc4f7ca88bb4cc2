/**
 * `npm run bench:cli`: how long the shipped command takes to start, against
 * Node starting and doing nothing, in the same run.
 *
 *   1. rebuild the command with `npm run build` (bench/shipped.ts);
 *   2. N rounds (default 20) of `node -e 0`, then each command line below,
 *      each a fresh process timed by wall clock from spawn to exit;
 *   3. per command line, the median over rounds of its time / `node -e 0`'s.
 *
 * Target: `benchdrop --help` within 3x of `node -e 0`. The other lines are
 * reported beside it, to show that a command loads only what it uses.
 *
 *   npm run bench:cli -- [--runs 20]
 */
import '../shared/node-support-notice.ts';
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { numberArg } from './args.ts';
import { BIN, buildShipped, plainNodeEnv, ROOT } from './shipped.ts';
import { loadAverage, median, table } from './stats.ts';

const HELP_TARGET = 3;
const rounds = numberArg('--runs', 20, (n) => Number.isInteger(n) && n >= 3, 'a whole number, 3 or more');

const DEMO_LOG = join(ROOT, 'demo', 'solaris-x4100-sas-maxcontig.iostat.txt');

/** The command lines timed, as a user types them (`benchdrop ...` is `node bin/benchdrop.js ...`). */
const LINES: { name: string; args: string[]; target?: number }[] = [
  { name: 'benchdrop --help', args: [BIN, '--help'], target: HELP_TARGET },
  { name: 'benchdrop compare --help', args: [BIN, 'compare', '--help'] },
  { name: 'benchdrop parse <a demo log>', args: [BIN, 'parse', DEMO_LOG] },
];

function timeMs(args: readonly string[]): number {
  const started = performance.now();
  const run = spawnSync(process.execPath, args, { cwd: ROOT, env: plainNodeEnv(), encoding: 'utf8' });
  const ms = performance.now() - started;
  if (run.status !== 0)
    throw new Error(
      `node ${args.join(' ')} exited with ${run.status ?? run.signal}:\n` +
        `${(run.stderr || run.stdout).trim().slice(0, 2000)}`,
    );
  return ms;
}

function main(): number {
  console.log('benchdrop start-up benchmark (npm run bench:cli)');
  console.log(
    `machine: ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? '?'}), node ${process.version}, ` +
      `load average ${loadAverage()}`,
  );
  console.log(
    `built the command with npm run build (${buildShipped().toFixed(0)} ms); ${rounds} rounds, each: ` +
      'node -e 0, then every command line once',
  );
  const baseline: number[] = [];
  const times = LINES.map(() => [] as number[]);
  timeMs(['-e', '0']);
  for (const line of LINES) timeMs(line.args);
  for (let round = 0; round < rounds; round++) {
    baseline.push(timeMs(['-e', '0']));
    LINES.forEach((line, i) => times[i]!.push(timeMs(line.args)));
  }
  const rows = [['command line', 'median ms', 'x node -e 0', 'target', '']];
  rows.push(['node -e 0', median(baseline).toFixed(0), '1.00', '', '']);
  const unmet: string[] = [];
  LINES.forEach((line, i) => {
    // Each round's ratio against that round's baseline: steadier than a ratio of medians when the machine drifts.
    const ratio = median(times[i]!.map((ms, r) => ms / baseline[r]!));
    const met = line.target === undefined || ratio <= line.target;
    if (!met) unmet.push(`${line.name} ${ratio.toFixed(2)}x > ${line.target}x`);
    rows.push([
      line.name,
      median(times[i]!).toFixed(0),
      ratio.toFixed(2),
      line.target === undefined ? '-' : `<= ${line.target}`,
      line.target === undefined ? '' : met ? 'met' : 'NOT MET',
    ]);
  });
  console.log(
    `\nwall time per fresh process, spawn to exit (medians over ${rounds} rounds; ` +
      `ratios are medians of each round's ratio):\n`,
  );
  console.log(table(rows, (c) => c > 0 && c < 4));
  console.log(`\ntargets: ${unmet.length === 0 ? 'all met' : `NOT met: ${unmet.join('; ')}`}`);
  return 0;
}

process.exitCode = main();
