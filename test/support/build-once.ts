/**
 * Vitest global setup: `npm run build` once before any test file runs, so the
 * tests that start the shipped command and lab (bin/benchdrop.js, `npm start`,
 * both on dist/) run the code as it is now, not an earlier build.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export default async function buildOnce(): Promise<void> {
  await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: new URL('../..', import.meta.url).pathname });
}
