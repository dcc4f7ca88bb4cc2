/**
 * The fio parser alone on a file, as ingest will stream it: the file's chunks
 * (fileChunks, the parser's reader) through parseFioChunks, each job counted as it
 * comes and let go. Bundled by bench/parse-fio.ts into bench/out/fio-entry.mjs and
 * run with plain node. Prints one JSON line: { style, jobs, lines, iopsSum, ms, rss }.
 */
import { fileChunks } from '../shared/parsers/index.ts';
import { parseFioChunks } from '../shared/parsers/fio.ts';
import { fileArgument } from './file-argument.ts';
import { peakRss } from './peak-rss.ts';

const file = fileArgument('fio-entry');

const started = performance.now();
let jobs = 0;
let iopsSum = 0;
const out = await parseFioChunks(fileChunks(file), {
  source: file,
  onJob: (job) => {
    jobs++;
    for (const d of job.directions) iopsSum += d.iops;
  },
});
const ms = performance.now() - started;
process.stdout.write(`${JSON.stringify({ style: out.style, jobs, lines: out.lines, iopsSum, ms, rss: peakRss() })}\n`);
