/**
 * The mixed upload set of bench:ingest, in bench/out/ingest-mix/: N files (500 by
 * default) chosen by a seeded PRNG (bench/generate.ts's), the same every run:
 *
 *   15 %  a diskperf fixture (test/fixtures/irix/, those that parse and have at
 *         least 1 KB: 1-4 KB);
 *   10 %  an iostat fixture of any platform and layout (test/fixtures/{solaris,
 *         linux,freebsd}/: Solaris 9-11 and illumos, sysstat 9-12 text and JSON,
 *         FreeBSD 6-14; those of at least 1 KB: 1-4 KB);
 *   75 %  a generated log (writeIostatLog), the flavour uniform over Solaris
 *         `-xn`, Linux sysstat `-x`, FreeBSD `-x` and sysstat JSON; its size
 *         log-uniform between 1 KB and 5 MB, its device count one of 1-100 that
 *         still leaves room for three reports.
 *
 * Every file carries what its ingestion must yield: the number of runs and of
 * samples (a generated log: reports x devices, as written; a fixture: what the
 * parser finds in it, diskperf counting one sample per result row).
 *
 * The set is reused when its manifest (manifest.json) records the same version and
 * seed, at least as many files (the first N of a larger set are the set of N), and
 * every file still has its recorded size.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFile } from '../shared/parsers/index.ts';
import { IOSTAT_FLAVOURS, OUT_DIR, Prng, writeIostatLog, type IostatFlavour } from './generate.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = join(ROOT, 'test/fixtures');
export const MIX_DIR = join(OUT_DIR, 'ingest-mix');
const MANIFEST = join(MIX_DIR, 'manifest.json');

/** Bump when the files of a given seed and count change. */
const MIX_VERSION = 1;
const MIX_SEED = 0x1_9e57;
export const MIN_BYTES = 1000;
export const MAX_BYTES = 5_000_000;
/** A generated log ends at the first report boundary past its target: leave room for one report. */
const TARGET_MAX = MAX_BYTES - 60_000;
const DEVICE_COUNTS = [1, 2, 4, 8, 16, 32, 64, 100];
/** Rough bytes per device row, to keep at least three reports in a small file. */
const ROW_BYTES: Record<IostatFlavour, number> = { solaris: 70, linux: 215, freebsd: 80, 'linux-json': 480 };

export type MixKind = IostatFlavour | 'diskperf-fixture' | 'iostat-fixture';

export interface MixFile {
  /** File name in MIX_DIR; also the object key's last part. */
  name: string;
  kind: MixKind;
  bytes: number;
  /** Generated logs: devices per report and reports written. */
  devices?: number;
  reports?: number;
  /** The fixture it copies. */
  fixture?: string;
  expectedRuns: number;
  expectedSamples: number;
}

interface Manifest {
  version: number;
  seed: number;
  count: number;
  files: MixFile[];
}

export interface Mix {
  files: MixFile[];
  reused: boolean;
  dir: string;
}

/** Fixtures of at least MIN_BYTES whose expected outcome is runs (not a parse error), by platform folder. */
function fixtures(folders: readonly string[]): string[] {
  const out: string[] = [];
  for (const folder of folders) {
    for (const name of readdirSync(join(FIXTURES, folder)).sort()) {
      if (name.endsWith('.expected.json')) continue;
      const path = join(FIXTURES, folder, name);
      const expected = path.replace(/\.(txt|json)$/, '.expected.json');
      if (!existsSync(expected) || statSync(path).size < MIN_BYTES) continue;
      if ((JSON.parse(readFileSync(expected, 'utf8')) as { error?: unknown }).error !== undefined) continue;
      out.push(path);
    }
  }
  return out;
}

/** Runs and samples the parser finds in a file (diskperf: a sample per result row). */
async function counted(path: string): Promise<{ runs: number; samples: number }> {
  const parsed = await parseFile(path, { keepSamples: false, parallel: false });
  let samples = 0;
  for (const run of parsed.runs)
    samples += run.format === 'iostat' ? run.series.reduce((n, s) => n + s.sampleCount, 0) : run.rows.length;
  return { runs: parsed.runs.length, samples };
}

function reuse(count: number): MixFile[] | undefined {
  if (!existsSync(MANIFEST)) return undefined;
  try {
    const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Manifest;
    // The files come one after another from one seed: a smaller set is the start of a larger one.
    if (manifest.version !== MIX_VERSION || manifest.seed !== MIX_SEED || manifest.count < count) return undefined;
    const files = manifest.files.slice(0, count);
    for (const file of files) {
      const path = join(MIX_DIR, file.name);
      if (!existsSync(path) || statSync(path).size !== file.bytes) return undefined;
    }
    return files;
  } catch {
    return undefined;
  }
}

/** The set of `count` files, generated unless an identical one is already there. */
export async function ensureMix(count: number): Promise<Mix> {
  const reused = reuse(count);
  if (reused) return { files: reused, reused: true, dir: MIX_DIR };
  rmSync(MIX_DIR, { recursive: true, force: true });
  mkdirSync(MIX_DIR, { recursive: true });
  const diskperf = fixtures(['irix']);
  const iostat = fixtures(['solaris', 'linux', 'freebsd']);
  const rng = new Prng(MIX_SEED);
  const files: MixFile[] = [];
  for (let i = 0; i < count; i++) {
    const number = String(i).padStart(3, '0');
    const roll = rng.next();
    if (roll < 0.25) {
      const fixture = rng.pick(roll < 0.15 ? diskperf : iostat);
      const name = `${number}-${basename(fixture)}`;
      copyFileSync(fixture, join(MIX_DIR, name));
      const { runs, samples } = await counted(fixture);
      files.push({
        name,
        kind: roll < 0.15 ? 'diskperf-fixture' : 'iostat-fixture',
        bytes: statSync(fixture).size,
        fixture: fixture.slice(ROOT.length + 1),
        expectedRuns: runs,
        expectedSamples: samples,
      });
      continue;
    }
    const flavour = rng.pick(IOSTAT_FLAVOURS);
    const target = Math.round(Math.exp(rng.range(Math.log(MIN_BYTES), Math.log(TARGET_MAX))));
    const fits = Math.max(1, Math.floor(target / (3 * ROW_BYTES[flavour])));
    const devices = Math.min(rng.pick(DEVICE_COUNTS), fits);
    const seed = rng.uint32();
    const name = `${number}-${flavour}-${devices}dev-${target}B.${flavour === 'linux-json' ? 'json' : 'log'}`;
    const path = join(MIX_DIR, name);
    const written = writeIostatLog(flavour, path, target, { devices, seed });
    files.push({
      name,
      kind: flavour,
      bytes: statSync(path).size,
      devices,
      reports: written.reports,
      expectedRuns: 1,
      expectedSamples: written.reports * devices,
    });
  }
  const manifest: Manifest = { version: MIX_VERSION, seed: MIX_SEED, count, files };
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 1)}\n`);
  return { files, reused: false, dir: MIX_DIR };
}
