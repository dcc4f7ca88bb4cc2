/**
 * onIostatRow, the parser's sample rows for the samples writer: for every
 * iostat fixture of every platform, the rows (copied as they come) are the
 * kept samples in row form (sampleRow), in the same order, so the fast path
 * and the sample objects apply one metric rule.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sampleRow, type IostatRun, type IostatSampleRow } from '../../../shared/model.ts';
import { parseStream } from '../../../shared/parsers/index.ts';

const FIXTURES = join(import.meta.dirname, '../../fixtures');
const PLATFORMS = ['aix', 'freebsd', 'linux', 'macos', 'netbsd', 'openbsd', 'solaris'];
const iostatFixtures = PLATFORMS.flatMap((dir) =>
  readdirSync(join(FIXTURES, dir))
    .filter((name) => name.endsWith('.txt') || (name.endsWith('.json') && !name.endsWith('.expected.json')))
    .map((name) => join(dir, name)),
);

const failure = (parsing: Promise<unknown>) =>
  parsing.then(
    () => undefined,
    (error: unknown) => String(error),
  );

/** Rows as onIostatRow hands them (copied), the samples kept, and how each parse failed (a bad fixture's error). */
async function bothWays(file: string) {
  const bytes = readFileSync(join(FIXTURES, file));
  const rows: { run: number; device: string; row: IostatSampleRow }[] = [];
  const rowsFailed = await failure(
    parseStream([bytes], {
      source: file,
      keepSamples: false,
      onRun: () => undefined,
      onIostatRow: (run, device, row) => rows.push({ run, device, row: { ...row, metrics: row.metrics.slice() } }),
    }),
  );
  const runs: IostatRun[] = [];
  const keptFailed = await failure(
    parseStream([bytes], { source: file, keepSamples: true, onRun: (run) => runs.push(run as IostatRun) }),
  );
  return { rows, runs, rowsFailed, keptFailed };
}

describe('onIostatRow', () => {
  it('finds the iostat fixtures of every platform', () => {
    expect(new Set(iostatFixtures.map((f) => f.split('/')[0]))).toEqual(new Set(PLATFORMS));
    expect(iostatFixtures.length).toBeGreaterThan(20);
  });

  it.each(iostatFixtures)('%s: the rows are the kept samples as rows', async (file) => {
    const { rows, runs, rowsFailed, keptFailed } = await bothWays(file);
    expect(rowsFailed).toBe(keptFailed);
    let compared = 0;
    for (const run of runs) {
      if (run.format !== 'iostat') continue;
      for (const series of run.series) {
        const streamed = rows.filter((r) => r.run === run.index && r.device === series.device).map((r) => r.row);
        const kept = series.samples!.map(sampleRow);
        expect(streamed).toEqual(kept);
        compared += kept.length;
      }
    }
    expect(rows).toHaveLength(compared);
    // A bad fixture may fail before any run is delivered; every good one has samples.
    if (keptFailed === undefined) expect(compared).toBeGreaterThan(0);
  });

  it('leaves NaN where a platform prints no column for a metric, and derives iops from reads and writes', async () => {
    const { rows } = await bothWays(
      'solaris/' + readdirSync(join(FIXTURES, 'solaris')).find((f) => f.endsWith('.txt'))!,
    );
    const first = rows[0]!.row;
    expect(first.metrics.some((v) => Number.isNaN(v))).toBe(true);
    const sample = rows.find((r) => r.row.metrics.some((v) => v > 0))!.row;
    expect(sample.metrics.some((v) => v > 0)).toBe(true);
  });
});
