/**
 * Bench entries bundled into bench/out/<name>.mjs with esbuild, so the processes a
 * bench times are plain `node` with no TypeScript loader on the way.
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { OUT_DIR } from './generate.ts';

/** Bundles each entry (its source, and the name of its .mjs in bench/out/); returns the bundles' paths. */
export async function bundleForNode(entries: readonly { in: string; out: string }[]): Promise<string[]> {
  await build({
    entryPoints: [...entries],
    outdir: OUT_DIR,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  return entries.map((e) => join(OUT_DIR, `${e.out}.mjs`));
}
