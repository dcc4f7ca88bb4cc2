/**
 * `npm run bench`: every benchmark of issues 6, 13 and 17, one after the other, each in
 * its own process (`npm run bench:<name>`), its output passed through as it comes. Each
 * bench ends with a `targets: all met` or `targets: NOT met: ...` line; this
 * collects those lines and ends with one summary: per bench its time and targets,
 * then the whole run's time against its own target (under 15 minutes on a fresh
 * clone). Exit 1 when a bench fails (a check, not a target), or when a bench printed
 * no targets line.
 *
 *   npm run bench                 # all of them
 *   npm run bench -- parse api    # some of them, in this order
 */
import '../shared/node-support-notice.ts';
import { spawn } from 'node:child_process';
import { table } from './stats.ts';

/** The benches, in the order they run: the cheap, self-contained ones first. */
export const BENCHES = ['cli', 'parse', 'lambda', 'cost', 'ingest', 'limits', 'api', 'listings', 'samples'] as const;
const WHOLE_RUN_TARGET_MIN = 15;

interface Outcome {
  name: string;
  code: number | null;
  seconds: number;
  targets: string | undefined;
}

function runBench(name: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', `bench:${name}`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let targets: string | undefined;
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('targets:')) targets = line.slice('targets:'.length).trim();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (pending.startsWith('targets:')) targets = pending.slice('targets:'.length).trim();
      resolve({ name, code, seconds: (performance.now() - started) / 1000, targets });
    });
  });
}

async function main(): Promise<number> {
  const asked = process.argv.slice(2);
  const unknown = asked.filter((name) => !(BENCHES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    console.error(`unknown bench ${unknown.join(', ')}; there are: ${BENCHES.join(', ')}`);
    return 2;
  }
  const names = asked.length > 0 ? asked : [...BENCHES];
  const started = performance.now();
  const outcomes: Outcome[] = [];
  for (const name of names) {
    console.log(`\n===== npm run bench:${name} =====\n`);
    outcomes.push(await runBench(name));
  }
  const minutes = (performance.now() - started) / 60_000;

  const rows = [['bench', 'exit', 'time', 'targets']];
  for (const o of outcomes)
    rows.push([`bench:${o.name}`, String(o.code), `${o.seconds.toFixed(0)} s`, o.targets ?? '(no targets line)']);
  console.log('\n===== summary =====\n');
  console.log(table(rows, () => false));
  const wholeMet = minutes < WHOLE_RUN_TARGET_MIN;
  if (names.length === BENCHES.length) {
    console.log(
      `\nwhole run: ${minutes.toFixed(1)} min (target < ${WHOLE_RUN_TARGET_MIN} min): ${wholeMet ? 'met' : 'NOT met'}`,
    );
  }
  const unmet = outcomes.filter((o) => o.targets !== 'all met').map((o) => `bench:${o.name}`);
  if (names.length === BENCHES.length && !wholeMet) unmet.push('whole run time');
  console.log(`targets: ${unmet.length === 0 ? 'all met' : `NOT met: ${unmet.join(', ')}`}`);
  return outcomes.some((o) => o.code !== 0 || o.targets === undefined) ? 1 : 0;
}

process.exitCode = await main();
