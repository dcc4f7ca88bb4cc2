/** Chunks: what the parser emits comes back from a stored chunk unchanged. */
import { describe, expect, it } from 'vitest';
import type { IostatRun, IostatSample } from '../../../shared/model.ts';
import { parseText } from '../../../shared/parsers/index.ts';
import { ChunkBuilder, chunkSamples, type ChunkItem } from '../../../shared/store/records.ts';

const LINUX = `Linux 5.15.0 (h) \t01/15/2024 \t_x86_64_\t(4 CPU)

01/15/2024 10:00:01 AM
Device            r/s     rkB/s   r_await     w/s     wkB/s   w_await  aqu-sz  %util
sda              1.50     24.00      0.40    3.00     48.00      1.10    0.01   0.60
sdb              0.00      0.00      0.00    0.00      0.00      0.00    0.00   0.00

01/15/2024 10:00:02 AM
Device            r/s     rkB/s   r_await     w/s     wkB/s   w_await  aqu-sz  %util
sda            120.00   1920.00      0.35   10.00    160.00      0.90    0.05  12.40

01/15/2024 10:00:03 AM
Device            r/s     rkB/s   r_await     w/s     wkB/s   w_await  aqu-sz  %util
sda             99.50   1592.00      0.37    8.00    128.00      0.95    0.04  10.10
sdb              2.00     16.00      1.50    1.00      4.00      2.00    0.00   0.30
`;

describe('sample chunks', () => {
  it('a series packed into chunks of 2 reads back sample for sample, values derived by the parser rule', async () => {
    const run = (await parseText(LINUX)).runs[0] as IostatRun;
    for (const series of run.series) {
      const builder = new ChunkBuilder('r0', series.device, 2);
      const chunks: ChunkItem[] = [];
      for (const sample of series.samples!) {
        const full = builder.add(sample);
        if (full) chunks.push(full);
      }
      const last = builder.finish();
      if (last) chunks.push(last);
      expect(chunks.map((c) => c.sk)).toEqual(chunks.map((_, i) => `CHUNK#${series.device}#${String(i).padStart(5, '0')}`));
      const back = chunks.flatMap((c) => chunkSamples(c, run.columns));
      expect(back).toEqual(series.samples);
    }
  });

  it('values nobody can measure are stored as missing, and times with spaces survive', () => {
    const builder = new ChunkBuilder('r0', 'sda', 10);
    builder.add({ report: 0, line: 5, sinceBoot: true, values: {}, raw: { 'r/s': Number.POSITIVE_INFINITY, 'w/s': 2 }, time: '01/15/2024 10:00:01 AM' });
    builder.add({ report: 1, line: 9, sinceBoot: false, values: {}, raw: { 'w/s': 3 } });
    const chunk = builder.finish()!;
    expect(chunk.raw).toEqual({ 'r/s': '- -', 'w/s': '2 3' });
    const back = chunkSamples(chunk, [
      { name: 'r/s', unit: 'ops/s', metric: 'read_iops', factor: 1 },
      { name: 'w/s', unit: 'ops/s', metric: 'write_iops', factor: 1 },
    ]);
    expect(back).toEqual([
      { report: 0, line: 5, sinceBoot: true, values: { write_iops: 2 }, raw: { 'w/s': 2 }, time: '01/15/2024 10:00:01 AM' },
      { report: 1, line: 9, sinceBoot: false, values: { write_iops: 3 }, raw: { 'w/s': 3 } },
    ]);
  });
});
