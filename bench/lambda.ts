/**
 * `npm run bench:lambda`: how big each Lambda bundle is and how long its module
 * takes to load (issue 6, item 5).
 *
 *   1. bundle functions/ingest/handler.ts and functions/api/handler.ts with
 *      esbuild's JS API and the options the stack gives NodejsFunction (copied
 *      below from infra/stack.ts BUNDLING, since infra/ pulls in CDK), into
 *      bench/out/lambda/<name>/index.mjs (+ index.mjs.map);
 *   2. copy each bundle into a temporary directory next to a `node_modules` symlink
 *      to the repository's node_modules, so the external `@aws-sdk/*` imports
 *      resolve the way the Lambda runtime provides them;
 *   3. per round (default 10), for each function, spawn a fresh `node` that times
 *      `await import(bundle)` with performance.now() (the handler's environment
 *      variables set), and report the median and p90.
 *
 * Targets (reported, not asserted): bundle < 250 KB, init < 150 ms.
 * 1 KB = 1000 bytes (KiB is printed too). The exit code is 0 whatever the targets;
 * 1 only when a build or a child fails.
 *
 *   npm run bench:lambda -- [--runs 10]
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, version as esbuildVersion, type BuildOptions } from 'esbuild';
import { median, percentile, table } from './stats.ts';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, '..');
const OUT = join(BENCH_DIR, 'out', 'lambda');

const SIZE_TARGET_KB = 250;
const INIT_TARGET_MS = 150;
const KB = 1000;

const FUNCTIONS = [
  { name: 'ingest', entry: join(ROOT, 'functions/ingest/handler.ts') },
  { name: 'api', entry: join(ROOT, 'functions/api/handler.ts') },
] as const;

/**
 * What NodejsFunction runs esbuild with for infra/stack.ts BUNDLING (format ESM,
 * target node24, minify, sourceMap, sourcesContent false, mainFields module/main,
 * `@aws-sdk/*` external, the createRequire banner). Keep the two in step.
 */
const STACK_BUNDLING: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  external: ['@aws-sdk/*'],
  banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  logLevel: 'warning',
};

/** Environment the handlers read (ENV in shared/config.ts). */
const HANDLER_ENV = {
  BENCHDROP_TABLE: 'x',
  BENCHDROP_BUCKET: 'y',
  BENCHDROP_MAX_UPLOAD_BYTES: '1000000',
  AWS_REGION: 'us-east-1',
};

/** Runs in the child: the import alone is timed. */
const PROBE = `const { pathToFileURL } = await import('node:url');
const url = pathToFileURL(process.argv[2]).href;
const started = performance.now();
const module = await import(url);
const ms = performance.now() - started;
if (typeof module.handler !== 'function') throw new Error('the bundle exports no handler');
process.stdout.write(JSON.stringify({ ms }) + '\\n');
process.exit(0);
`;

// ---------------------------------------------------------------- arguments

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const rounds = runsAt === -1 ? 10 : Number(args[runsAt + 1]);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--runs must be a positive integer, not ${args[runsAt + 1]}`);

// ---------------------------------------------------------------- helpers

interface Probe {
  importMs: number;
  wallMs: number;
}

function probe(probePath: string, bundlePath: string, cwd: string): Promise<Probe> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...HANDLER_ENV };
  // The measured process must not inherit tsx's loader.
  delete env.NODE_OPTIONS;
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [probePath, bundlePath], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const wallMs = performance.now() - started;
      if (code !== 0) return reject(new Error(`node ${relative(ROOT, bundlePath)} exited with ${code ?? signal}:\n${(stderr || stdout).trim().slice(0, 4000)}`));
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        resolvePromise({ importMs: (JSON.parse(line) as { ms: number }).ms, wallMs });
      } catch {
        reject(new Error(`unexpected probe output: ${stdout.slice(0, 500)}`));
      }
    });
  });
}

// ---------------------------------------------------------------- main

interface Result {
  name: string;
  bundle: string;
  bytes: number;
  mapBytes: number;
  importMs: number[];
  wallMs: number[];
}

async function main(): Promise<number> {
  console.log(`bench:lambda: ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? '?'}), node ${process.version}, esbuild ${esbuildVersion}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const results: Result[] = [];
  for (const fn of FUNCTIONS) {
    const outfile = join(OUT, fn.name, 'index.mjs');
    mkdirSync(dirname(outfile), { recursive: true });
    const started = performance.now();
    await build({ ...STACK_BUNDLING, entryPoints: [fn.entry], outfile, absWorkingDir: ROOT });
    const bytes = statSync(outfile).size;
    const mapBytes = statSync(`${outfile}.map`).size;
    console.log(`built ${relative(ROOT, outfile)}: ${bytes} bytes (${(bytes / KB).toFixed(1)} KB, ${(bytes / 1024).toFixed(1)} KiB), source map ${(mapBytes / KB).toFixed(1)} KB, in ${(performance.now() - started).toFixed(0)} ms`);
    results.push({ name: fn.name, bundle: outfile, bytes, mapBytes, importMs: [], wallMs: [] });
  }

  const work = mkdtempSync(join(tmpdir(), 'benchdrop-lambda-'));
  try {
    const probePath = join(work, 'probe.mjs');
    writeFileSync(probePath, PROBE);
    const copies = new Map<string, string>();
    for (const r of results) {
      const dir = join(work, r.name);
      mkdirSync(dir);
      copyFileSync(r.bundle, join(dir, 'index.mjs'));
      copyFileSync(`${r.bundle}.map`, join(dir, 'index.mjs.map'));
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
      copies.set(r.name, join(dir, 'index.mjs'));
    }
    // One untimed import each, so the first timed round does not pay for a cold page cache.
    for (const r of results) await probe(probePath, copies.get(r.name)!, dirname(copies.get(r.name)!));
    for (let round = 1; round <= rounds; round++) {
      const parts: string[] = [];
      for (const r of results) {
        const p = await probe(probePath, copies.get(r.name)!, dirname(copies.get(r.name)!));
        r.importMs.push(p.importMs);
        r.wallMs.push(p.wallMs);
        parts.push(`${r.name} import ${p.importMs.toFixed(1)} ms (process ${p.wallMs.toFixed(0)} ms)`);
      }
      console.log(`  round ${round}: ${parts.join(', ')}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  const unmet: string[] = [];
  const rows: string[][] = [['function', 'bundle bytes', `bundle KB (< ${SIZE_TARGET_KB})`, 'map KB', `init median ms (< ${INIT_TARGET_MS})`, 'init p90 ms', 'process median ms', 'targets']];
  for (const r of results) {
    const kb = r.bytes / KB;
    const init = median(r.importMs);
    const misses: string[] = [];
    if (kb >= SIZE_TARGET_KB) misses.push(`${r.name} bundle ${kb.toFixed(1)} KB >= ${SIZE_TARGET_KB}`);
    if (init >= INIT_TARGET_MS) misses.push(`${r.name} init ${init.toFixed(1)} ms >= ${INIT_TARGET_MS}`);
    unmet.push(...misses);
    rows.push([r.name, String(r.bytes), kb.toFixed(1), (r.mapBytes / KB).toFixed(1), init.toFixed(1), percentile(r.importMs, 90).toFixed(1), median(r.wallMs).toFixed(0), misses.length === 0 ? 'met' : 'NOT MET']);
  }
  console.log(`\nbundles (minified, @aws-sdk/* external) and module init (await import(bundle) in a fresh node, ${rounds} rounds):\n`);
  console.log(table(rows, (c) => c > 0 && c < 7));
  console.log(`\ntargets: ${unmet.length === 0 ? 'all met' : `NOT met: ${unmet.join('; ')}`}`);
  console.log(`load average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  return 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(`bench:lambda FAILED: ${(error as Error).message}`);
  process.exitCode = 1;
}
