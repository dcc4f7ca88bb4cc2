/**
 * The README as a new user meets it: every shell command in its ```sh blocks,
 * as printed, in a fresh checkout of this tree (the files git knows, with this
 * install's node_modules), against the lab its Quick start starts with
 * `npm start` (README defaults: data in .benchdrop, S3 on 4569, the API on 4580).
 * A command fails the test with a non-zero exit, an `error:` line or an error
 * answer. The few commands that cannot run here are named below, each with why.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientEnv, explain, LabProcess, REPO_ROOT, run, type Ran } from '../../harness/processes.ts';

/** One command of a ```sh block: continuation lines joined, with its README line. */
export interface ReadmeCommand {
  line: number;
  command: string;
}

/** The commands of every ```sh block, in order; comment lines (a command's printed output) are not commands. */
export function readmeCommands(markdown: string): ReadmeCommand[] {
  const commands: ReadmeCommand[] = [];
  let inShell = false;
  let pending: ReadmeCommand | undefined;
  markdown.split('\n').forEach((text, index) => {
    if (/^```/.test(text)) {
      inShell = !inShell && /^```(sh|bash|shell)\s*$/.test(text);
      return;
    }
    if (!inShell) return;
    if (pending === undefined && (/^\s*#/.test(text) || text.trim() === '')) return;
    const continued = /\\$/.test(text);
    const part = (continued ? text.slice(0, -1) : text).trim();
    pending =
      pending === undefined
        ? { line: index + 1, command: part }
        : { line: pending.line, command: `${pending.command} ${part}` };
    if (!continued) {
      commands.push(pending);
      pending = undefined;
    }
  });
  return commands;
}

/** What the test does instead of running a command as printed, and why. */
type Instead = { start: 'lab' } | { skip: string } | { run: string; why: string };

/** The commands not run as printed, by how they start. Everything else runs as printed. */
function insteadOf(command: string): Instead | undefined {
  if (/^npm ci && npm start\b/.test(command)) return { start: 'lab' };
  if (/^(npm ci && )?npm test\b/.test(command))
    return { skip: 'the test suite this test is part of (CI runs npm ci, then it)' };
  if (/^npm run test:stress\b/.test(command))
    return { skip: 'the long reliability runs, which CI runs after npm test' };
  if (/^npm run bench\b/.test(command))
    return { skip: 'about 10 minutes of benchmarks, run by hand; their figures are in BENCHMARKS.md' };
  if (/^npx cdk deploy\b/.test(command))
    return {
      run: command.replace(/^npx cdk deploy\b/, 'npx cdk synth --quiet'),
      why: 'no AWS account: synth builds the same stack offline',
    };
  if (/--stack\b/.test(command)) return { skip: 'names a deployed stack: no AWS account here' };
  return undefined;
}

const README = join(REPO_ROOT, 'README.md');

/** A checkout of what git has here (tracked files, and new ones not ignored), sharing this install's node_modules. */
async function freshCheckout(into: string): Promise<void> {
  const { stdout } = await promisify(execFile)(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 },
  );
  const files = stdout.split('\0').filter((f) => f !== '');
  for (const file of files) {
    await mkdir(dirname(join(into, file)), { recursive: true });
    // A file deleted but not yet staged is listed too: what a checkout would not have.
    await copyFile(join(REPO_ROOT, file), join(into, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  await symlink(join(REPO_ROOT, 'node_modules'), join(into, 'node_modules'), 'dir');
}

/** Why a command's run counts as failed, or undefined when it worked. */
function failureOf(ran: Ran): string | undefined {
  if (ran.code !== 0) return `exit ${ran.code ?? `signal ${ran.signal}`}`;
  if (/^error:/m.test(ran.stderr) || /^error:/m.test(ran.stdout)) return 'an error: line';
  if (/^\s*\{\s*"error"\s*:/.test(ran.stdout)) return 'an error answer';
  return undefined;
}

describe('readmeCommands', () => {
  it('takes ```sh blocks only, joins continued lines, and leaves out printed output', () => {
    const markdown = [
      '```',
      'not a command',
      '```',
      '```sh',
      'aws s3 cp a \\',
      '  s3://b/a   # a comment',
      '# printed: ok',
      '',
      'npx benchdrop runs',
      '```',
      '```json',
      '{}',
      '```',
    ].join('\n');
    expect(readmeCommands(markdown)).toEqual([
      { line: 5, command: 'aws s3 cp a s3://b/a   # a comment' },
      { line: 9, command: 'npx benchdrop runs' },
    ]);
  });
});

describe('README commands', () => {
  const commands = readmeCommands(readFileSync(README, 'utf8'));
  let scratch: string;
  let checkout: string;
  let env: NodeJS.ProcessEnv;
  let lab: LabProcess | undefined;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'benchdrop-readme-'));
    checkout = join(scratch, 'benchdrop');
    await freshCheckout(checkout);
    env = clientEnv(scratch);
    lab = await LabProcess.startWithNpm({ cwd: checkout, env, timeoutMs: 120_000 });
  }, 180_000);

  afterAll(async () => {
    await lab?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  it('the README has the commands this test knows how to run', () => {
    expect(commands.map((c) => c.command)).toContain(
      'npm ci && npm start      # local S3 + DynamoDB + ingest + API + report page, demo logs ingested',
    );
    expect(commands.length).toBeGreaterThan(8);
  });

  it('npm start, as printed, serves the README ports with the demo logs ingested', async () => {
    expect(lab!.endpoints.apiUrl).toBe('http://127.0.0.1:4580');
    expect(lab!.endpoints.s3Endpoint).toBe('http://127.0.0.1:4569');
    const { uploads } = (await (await fetch(`${lab!.endpoints.apiUrl}/uploads`)).json()) as {
      uploads: { status: string }[];
    };
    expect(uploads.length, lab!.output()).toBeGreaterThan(0);
    expect(
      uploads.filter((u) => u.status !== 'ready'),
      lab!.output(),
    ).toEqual([]);
  });

  it('every other command works as printed, in README order', { timeout: 600_000 }, async () => {
    const ran: string[] = [];
    for (const { line, command } of commands) {
      const instead = insteadOf(command);
      if (instead && 'start' in instead) continue;
      if (instead && 'skip' in instead) {
        ran.push(`README:${line} skipped (${instead.skip}): ${command}`);
        continue;
      }
      const actual = instead && 'run' in instead ? instead.run : command;
      const result = await run('sh', ['-c', actual], { cwd: checkout, env, timeoutMs: 240_000 });
      const failure = failureOf(result);
      expect(
        failure,
        `README.md line ${line}${instead && 'run' in instead ? ` (run as \`${actual}\`: ${instead.why})` : ''}: ${failure}\n${explain(result)}\n${lab!.output(3000)}`,
      ).toBeUndefined();
      ran.push(`README:${line} ok in ${result.ms} ms: ${actual}`);
    }
    // Every command was either run or skipped by name: nothing is left out silently.
    expect(ran.length).toBe(commands.filter((c) => !(insteadOf(c.command) && 'start' in insteadOf(c.command)!)).length);
    console.log(ran.join('\n'));
  });
});
