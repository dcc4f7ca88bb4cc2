/**
 * Bundled by test/infra/bundling.test.ts as a function's index.mjs is, with the
 * encoder thread's bundle beside it: encodes one series of three samples on
 * those threads and prints the whole Parquet file, base64, on stdout.
 */
import { encoderPool } from '../../shared/store/samples-encoder.ts';
import { SAMPLE_METRICS } from '../../shared/store/samples-schema.ts';

const count = 3;
const metrics = new Float64Array(count * SAMPLE_METRICS.length).fill(Number.NaN);
metrics.set([1.5, 2.5, 3.5], 0);
const group = await encoderPool.write(
  {
    series: 'sda',
    count,
    capacity: count,
    reports: Int32Array.from([0, 1, 2]),
    lines: Int32Array.from([3, 5, 7]),
    times: [null, null, null],
    sinceBoot: Uint8Array.from([1, 0, 0]),
    metrics,
  },
  true,
  true,
);
const footer = await encoderPool.footer([{ rowGroup: group.rowGroup, at: 0 }]);
process.stdout.write(Buffer.concat([group.bytes, footer]).toString('base64'));
