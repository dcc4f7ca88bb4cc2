/**
 * The read-limit reference of the parsing benchmark: read FILE as the parser
 * does (fileChunks: its chunk size, two reused buffers) and count '\n' bytes,
 * nothing else (no readline, no strings). Bundled by bench/parse.ts into
 * bench/out/count-lines-entry.mjs and run with plain node.
 * Prints one JSON line: { lines, bytes, ms, rss }.
 */
import { fileChunks } from '../shared/parsers/index.ts';
import { fileArgument } from './file-argument.ts';
import { peakRss } from './peak-rss.ts';

const file = fileArgument('count-lines-entry');

const started = performance.now();
let lines = 0;
let bytes = 0;
for await (const buffer of fileChunks(file)) {
  bytes += buffer.length;
  for (let i = buffer.indexOf(10); i !== -1; i = buffer.indexOf(10, i + 1)) lines++;
}
const ms = performance.now() - started;
process.stdout.write(`${JSON.stringify({ lines, bytes, ms, rss: peakRss() })}\n`);
