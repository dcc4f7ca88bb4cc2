/**
 * How many cases the fuzzers try, defined once: a few hundred per target in
 * `npm test` (seconds), 100,000 per parser target in `npm run test:stress` (the
 * parallel cuts, a file written and parsed twice per case, 20,000). The
 * BENCHDROP_FUZZ_CASES variable overrides both (e.g. to replay a long run in the
 * quick file); FC_SEED replays one fast-check run exactly (the seed a failure prints).
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';

export const FUZZ_CASES_ENV = 'BENCHDROP_FUZZ_CASES';

/** Cases per target: per parser format, for the selectors, for the API. */
export const FUZZ_CASES = {
  test: { parser: 400, parallel: 200, selectors: 2000, api: 150 },
  stress: { parser: 100_000, parallel: 20_000, selectors: 100_000, api: 4000 },
} as const;

export type FuzzRun = keyof typeof FUZZ_CASES;
export type FuzzTarget = keyof (typeof FUZZ_CASES)['test'];

export function fuzzCases(run: FuzzRun, target: FuzzTarget): number {
  const override = Number(process.env[FUZZ_CASES_ENV]);
  return Number.isInteger(override) && override > 0 ? override : FUZZ_CASES[run][target];
}

/** fast-check's parameters for one property: the case count, and the seed to replay if given. */
export function fuzzParameters<T>(numRuns: number): fc.Parameters<T> {
  const seed = process.env['FC_SEED'] ? Number(process.env['FC_SEED']) : Number.NaN;
  return { numRuns, ...(Number.isInteger(seed) ? { seed } : {}) };
}

/** What one fuzz target found: how many cases ran and the first counterexample, if any. */
export interface FuzzFinding {
  target: string;
  cases: number;
  failed: boolean;
  /** fast-check's report: seed, path, the shrunk counterexample and the error. */
  report?: string;
  ms: number;
}

/** JSON.stringify's replacer for counterexamples: bytes as `{ base64 }` (a Buffer arrives already as `{ type, data }`). */
function bytesAsBase64(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return { base64: Buffer.from(value).toString('base64') };
  const buffer = value as { type?: unknown; data?: unknown };
  if (buffer !== null && typeof buffer === 'object' && buffer.type === 'Buffer' && Array.isArray(buffer.data))
    return { base64: Buffer.from(buffer.data as number[]).toString('base64') };
  return value;
}

/** Runs a property to the end (or its first failure) and says what it found, without throwing. */
export async function fuzz<T>(target: string, property: fc.IRawProperty<T>, numRuns: number): Promise<FuzzFinding> {
  const started = Date.now();
  const details = await fc.check(property, fuzzParameters<T>(numRuns));
  const finding: FuzzFinding = {
    target,
    cases: details.numRuns + details.numSkips,
    failed: details.failed,
    ms: Date.now() - started,
  };
  if (details.failed) {
    // The error names the case in words; the bytes themselves go to a file, for a regression test.
    const file = join(tmpdir(), `benchdrop-fuzz-${target.replace(/[^\w-]+/g, '-')}-${details.seed}.json`);
    writeFileSync(file, `${JSON.stringify(details.counterexample, bytesAsBase64, 2)}\n`);
    const error = details.errorInstance as Error | undefined;
    finding.report = `${target}: failed after ${details.numRuns} cases (seed ${details.seed}, path "${details.counterexamplePath}", shrunk ${details.numShrinks} times); counterexample in ${file}\n${error?.message ?? String(details.errorInstance)}`;
  }
  return finding;
}
