/**
 * The command as it ships: bin/benchdrop.js runs the JavaScript build in dist/
 * (made by `npm ci`'s prepare script, remade by the tests' global setup), with no
 * TypeScript loader, and each command loads only what it uses. The processes
 * here record every module they load (test/support/module-log/).
 */
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeIostatLog } from '../../bench/generate.ts';
import { PARALLEL_MIN_BYTES } from '../../shared/parsers/parallel.ts';
import { REPO_ROOT, run } from '../../harness/processes.ts';

const BIN = join(REPO_ROOT, 'bin/benchdrop.js');
const RECORDER = join(REPO_ROOT, 'test/support/module-log/register.mjs');
const SOLARIS_LOG = join(REPO_ROOT, 'test/fixtures/solaris/solaris-10-x.iostat.txt');

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'benchdrop-shipped-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Runs `benchdrop ARGS` and returns its result with the package modules it loaded, relative to the repository. */
async function modulesLoadedBy(name: string, args: readonly string[]) {
  const log = join(scratch, `${name}.modules`);
  const ran = await run(process.execPath, ['--import', RECORDER, BIN, ...args], {
    env: { ...process.env, NODE_OPTIONS: '', BENCHDROP_MODULE_LOG: log },
    timeoutMs: 60_000,
  });
  const urls = (await readFile(log, 'utf8')).trim().split('\n');
  const root = new URL(`${REPO_ROOT}/`, 'file://').href;
  const ours = [...new Set(urls.filter((u) => u.startsWith(root)).map((u) => u.slice(root.length)))];
  return { ran, ours, urls };
}

describe('bin/benchdrop.js', () => {
  it('runs dist/ as plain JavaScript: --help loads no command, no AWS SDK, no TypeScript and no loader', async () => {
    const { ran, ours, urls } = await modulesLoadedBy('help', ['--help']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/^Usage: benchdrop /);
    expect(ran.stderr).toBe('');
    expect(ours).toContain('dist/cli/program.js');
    expect(ours.filter((m) => m.endsWith('.ts'))).toEqual([]);
    expect(ours.filter((m) => m.startsWith('dist/cli/commands/'))).toEqual([]);
    expect(urls.filter((u) => /node_modules\/(@aws-sdk|tsx|esbuild)\//.test(u))).toEqual([]);
  });

  it('parse loads its own command and the parsers, and nothing of the AWS SDK', async () => {
    const { ran, ours, urls } = await modulesLoadedBy('parse', ['parse', SOLARIS_LOG]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('iostat, 1 run');
    expect(ours).toContain('dist/cli/commands/parse.js');
    expect(ours.filter((m) => m.startsWith('dist/cli/commands/') && m !== 'dist/cli/commands/parse.js')).toEqual([]);
    expect(ours.filter((m) => m.endsWith('.ts'))).toEqual([]);
    expect(urls.filter((u) => /node_modules\/(@aws-sdk|tsx)\//.test(u))).toEqual([]);
  });

  it('parses a log past the parallel threshold on worker threads started from dist/', async () => {
    const big = join(scratch, 'big-solaris.log');
    const written = writeIostatLog('solaris', big, PARALLEL_MIN_BYTES + 2_000_000, { devices: 20 });
    const { ran, ours } = await modulesLoadedBy('parallel', ['parse', big]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`${written.reports} reports, 20 series`);
    expect(ours).toContain('dist/shared/parsers/parse-worker.js');
    expect(ours.filter((m) => m.endsWith('.ts'))).toEqual([]);
  });

  it('says how to build when dist/ is missing, instead of a stack trace', async () => {
    const bare = join(scratch, 'unbuilt');
    await mkdir(join(bare, 'bin'), { recursive: true });
    await copyFile(BIN, join(bare, 'bin/benchdrop.js'));
    const ran = await run(process.execPath, [join(bare, 'bin/benchdrop.js'), '--help'], { timeoutMs: 30_000 });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe(
      'benchdrop: the CLI is not built yet (no dist/cli/main.js): run `npm run build` in the benchdrop folder\n',
    );
  });

  it('ends quietly when its reader stops early (benchdrop --help | head -1)', async () => {
    const ran = await run('sh', ['-c', `"${process.execPath}" "${BIN}" --help | head -1`], { timeoutMs: 30_000 });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe('Usage: benchdrop [options] [command]\n');
    expect(ran.stderr).toBe('');
  });
});

describe('package.json', () => {
  it('builds at install (prepare) and before npm start, and runs the build in both', async () => {
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      bin: Record<string, string>;
    };
    expect(pkg.scripts['prepare']).toBe('npm run build');
    expect(pkg.scripts['prestart']).toBe('npm run build --silent');
    expect(pkg.scripts['start']).toMatch(/^node --openssl-legacy-provider dist\//);
    expect(pkg.bin['benchdrop']).toBe('bin/benchdrop.js');
  });
});
