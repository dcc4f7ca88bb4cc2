/**
 * benchdrop runs in two forms: as TypeScript source (the tests, through Vite or
 * tsx) and as the JavaScript build in dist/ that `npm ci` makes (bin/benchdrop.js,
 * `npm start`). A module that starts another one (a worker thread, a process, a
 * fresh copy of a handler) names it in its own form, and files that are not
 * code (demo logs, the report page's source) are found from the package root.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Whether the module at `moduleUrl` (its import.meta.url) is TypeScript source. */
export const isSource = (moduleUrl: string): boolean => new URL(moduleUrl).pathname.endsWith('.ts');

/**
 * The module at `relative` (no extension) from `moduleUrl`, with the same
 * extension: `.ts` beside source, `.js` in dist/, `.mjs` beside a bundle.
 */
export function siblingModule(moduleUrl: string, relative: string): URL {
  const path = new URL(moduleUrl).pathname;
  return new URL(`${relative}${path.slice(path.lastIndexOf('.'))}`, moduleUrl);
}

/** A file of the package, e.g. packageFile(import.meta.url, 'demo'): the nearest folder above with a package.json. */
export function packageFile(moduleUrl: string, relative: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(moduleUrl)}`);
    dir = parent;
  }
  return join(dir, relative);
}
