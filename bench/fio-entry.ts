/**
 * A fio output on a file, as ingest streams it: the file's chunks (fileChunks, the
 * parser's reader) through parseStream, the driver that tells the format and turns
 * the jobs into runs (a row per point), each run counted as it comes and let go.
 * Bundled by bench/parse-fio.ts into bench/out/fio-entry.mjs and run with plain node.
 * Prints one JSON line: { style, jobs, lines, iopsSum, ms, rss }.
 */
import { fileChunks, parseStream } from '../shared/parsers/index.ts';
import { fileArgument } from './file-argument.ts';
import { peakRss } from './peak-rss.ts';

const file = fileArgument('fio-entry');

const started = performance.now();
let jobs = 0;
let iopsSum = 0;
let style = '';
const out = await parseStream(fileChunks(file), {
  source: file,
  onRun: (run) => {
    if (run.format !== 'fio') return;
    style = run.dialect.replace(/^fio-/, '');
    jobs += run.meta.jobs;
    for (const row of run.rows) iopsSum += row.values.fio_read_iops ?? 0;
  },
});
const ms = performance.now() - started;
process.stdout.write(`${JSON.stringify({ style, jobs, lines: out.lines, iopsSum, ms, rss: peakRss() })}\n`);
