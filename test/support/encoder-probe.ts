/**
 * Bundled by test/infra/bundling.test.ts as a function's index.mjs is, with the
 * encoder thread's bundle beside it: encodes one series of three samples on
 * that thread and prints the whole Parquet file, base64, on stdout.
 */
import { encoderThread } from '../../shared/store/samples-encoder.ts';
import { SAMPLE_METRICS } from '../../shared/store/samples-schema.ts';

const count = 3;
const metrics = new Float64Array(count * SAMPLE_METRICS.length).fill(Number.NaN);
metrics.set([1.5, 2.5, 3.5], 0);
const file = encoderThread.newFile();
const group = await encoderThread.request(file, 'write', {
  series: 'sda',
  count,
  capacity: count,
  reports: Int32Array.from([0, 1, 2]),
  lines: Int32Array.from([3, 5, 7]),
  times: [null, null, null],
  sinceBoot: Uint8Array.from([1, 0, 0]),
  metrics,
});
const footer = await encoderThread.request(file, 'finish');
process.stdout.write(Buffer.concat([group, footer]).toString('base64'));
