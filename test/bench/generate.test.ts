/**
 * The benchmark's log generator: every flavour parses into one run holding
 * exactly the samples written (bench:ingest checks stored counts against these),
 * and bench:parse's default logs keep their bytes (its cached files are reused
 * by generator version, so a change there must bump GENERATOR_VERSION).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IOSTAT_FLAVOURS, writeIostatLog } from '../../bench/generate.ts';
import { parseFile } from '../../shared/parsers/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'benchdrop-generate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PLATFORM = { solaris: 'solaris', linux: 'linux', freebsd: 'freebsd', 'linux-json': 'linux' } as const;

describe('bench/generate.ts', () => {
  for (const flavour of IOSTAT_FLAVOURS) {
    it(`${flavour}: one run, reports x devices samples, no warnings, same seed same bytes`, async () => {
      for (const [bytes, devices] of [
        [1000, 1],
        [1000, 3],
        [40_000, 7],
        [300_000, 100],
      ] as const) {
        const path = join(dir, `${flavour}-${bytes}-${devices}.log`);
        const written = writeIostatLog(flavour, path, bytes, { devices, seed: 7 + devices });
        expect(readFileSync(path).length).toBeGreaterThanOrEqual(bytes);
        const parsed = await parseFile(path, { keepSamples: false, parallel: false });
        expect(parsed.runs).toHaveLength(1);
        const run = parsed.runs[0]!;
        if (run.format !== 'iostat') throw new Error(`${path}: parsed as ${run.format}`);
        expect(run.platform).toBe(PLATFORM[flavour]);
        expect(run.warnings).toEqual([]);
        expect(run.reports).toBe(written.reports);
        expect(run.series).toHaveLength(devices);
        for (const series of run.series) expect(series.sampleCount).toBe(written.reports);
        const again = join(dir, `${flavour}-${bytes}-${devices}.again.log`);
        writeIostatLog(flavour, again, bytes, { devices, seed: 7 + devices });
        expect(readFileSync(again).equals(readFileSync(path))).toBe(true);
      }
    });
  }

  it("bench:parse's default Solaris and Linux logs keep their bytes", () => {
    const sha = (flavour: 'solaris' | 'linux') => {
      const path = join(dir, `${flavour}-default.log`);
      writeIostatLog(flavour, path, 50_000);
      return createHash('sha256').update(readFileSync(path)).digest('hex');
    };
    expect({ solaris: sha('solaris'), linux: sha('linux') }).toEqual({
      solaris: '66c3ac97035f0b62ec762fac9da0c66243bbea669f75b65f5ac11730c0d70bab',
      linux: 'e0e211173e6105edc272e4f81dbddd27cea1b0455f8eda0ad98e9a8c669f2d34',
    });
  });
});
