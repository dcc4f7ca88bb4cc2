/**
 * The fixture logs of test/fixtures/<platform>/, each beside its .expected.json
 * (test/fixtures/README.md): what the fixture test checks one by one, and what
 * the load and fuzz runs take as real logs, good (a parse) and bad (a ParseError).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURES_DIR = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');

/** The bytes of one fixture, by its path under test/fixtures (e.g. `irix/x.diskperf.txt`). */
export const fixture = (path: string): Buffer => readFileSync(join(FIXTURES_DIR, path));
export const FIXTURE_PLATFORMS = ['irix', 'solaris', 'linux', 'freebsd', 'aix', 'macos', 'netbsd', 'openbsd'] as const;

export interface FixtureLog {
  platform: (typeof FIXTURE_PLATFORMS)[number];
  /** The log's file name. */
  name: string;
  /** Absolute paths of the log and its .expected.json. */
  log: string;
  expected: string;
  /** Whether the expected outcome is a parse (runs) rather than a ParseError. */
  parses: boolean;
}

export function fixtureLogs(): FixtureLog[] {
  const out: FixtureLog[] = [];
  for (const platform of FIXTURE_PLATFORMS) {
    const files = readdirSync(join(FIXTURES_DIR, platform)).sort();
    for (const file of files) {
      if (!file.endsWith('.expected.json')) continue;
      const base = file.slice(0, -'.expected.json'.length);
      const log = files.find(
        (f) => f !== file && !f.endsWith('.expected.json') && (f === base || f.startsWith(`${base}.`)),
      );
      if (!log) throw new Error(`${platform}/${file} has no log beside it`);
      const expected = join(FIXTURES_DIR, platform, file);
      const { error } = JSON.parse(readFileSync(expected, 'utf8')) as { error?: unknown };
      out.push({ platform, name: log, log: join(FIXTURES_DIR, platform, log), expected, parses: error === undefined });
    }
  }
  return out;
}
