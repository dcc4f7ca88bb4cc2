/**
 * `tsx infra/trim-source-map.ts BUNDLE.mjs.map`: the step NodejsFunction runs after
 * esbuild for each function (infra/bundling.ts): the map keeps the project's own
 * sources only (infra/source-map.ts).
 */
import { trimSourceMapFile } from './source-map.ts';

const path = process.argv[2];
if (path === undefined) {
  process.stderr.write('usage: tsx infra/trim-source-map.ts BUNDLE.mjs.map\n');
  process.exit(2);
}
const { before, after, sources } = trimSourceMapFile(path);
process.stderr.write(`${path}: source map ${before} -> ${after} bytes, ${sources} sources kept\n`);
