/**
 * The command as it ships: bin/benchdrop.js running the JavaScript build in
 * dist/. The benches that time it rebuild it first with the project's own
 * `npm run build` (what `npm ci` runs), so they time the code as checked out.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The package's own bin, as `npx benchdrop` and an installed `benchdrop` run it. */
export const BIN = join(ROOT, 'bin/benchdrop.js');

/** `npm run build`, once; throws with its output if it fails. Returns the time it took. */
export function buildShipped(): number {
  const started = performance.now();
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0)
    throw new Error(`npm run build failed:\n${`${built.stdout}${built.stderr}`.trim().slice(0, 4000)}`);
  return performance.now() - started;
}

/** A child's environment without a loader inherited from the bench's own tsx. */
export function plainNodeEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return env;
}
