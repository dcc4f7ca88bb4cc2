/**
 * Ends a vitest run with one plain line, `Tests: N passed, N failed, N skipped`, that
 * any CI log reader understands, whichever reporter prints the details above it.
 *
 * A run can fail with no test failing: a test file that cannot be loaded (an import
 * that does not resolve, a throw while its tests are collected) has no tests at all,
 * and a hook that throws (beforeAll, afterAll) leaves its tests skipped or passed.
 * Each of those counts as one failure, as does an unhandled error, and the line says
 * which they were: `Tests: 0 passed, 1 failed (1 file failed to load), 0 skipped`.
 */
import type { Reporter, SerializedError, TestModule } from 'vitest/node';

export interface Tally {
  passed: number;
  /** Tests that failed. */
  failed: number;
  skipped: number;
  /** Test files with an error and not one test collected. */
  unloaded: number;
  /** Files and suites whose tests were collected but that failed outside them (a hook). */
  erroredOutside: number;
  unhandled: number;
}

export function tally(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown> = []): Tally {
  const counts: Tally = {
    passed: 0,
    failed: 0,
    skipped: 0,
    unloaded: 0,
    erroredOutside: 0,
    unhandled: unhandledErrors.length,
  };
  for (const module of testModules) {
    let tests = 0;
    for (const test of module.children.allTests()) {
      tests++;
      const state = test.result().state;
      if (state === 'passed') counts.passed++;
      else if (state === 'failed') counts.failed++;
      else counts.skipped++;
    }
    if (module.errors().length > 0) {
      if (tests === 0) counts.unloaded++;
      else counts.erroredOutside++;
    }
    for (const suite of module.children.allSuites()) if (suite.errors().length > 0) counts.erroredOutside++;
  }
  return counts;
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function closingLine(t: Tally): string {
  const outside = [
    t.unloaded > 0 ? count(t.unloaded, 'file failed to load', 'files failed to load') : '',
    t.erroredOutside > 0
      ? count(t.erroredOutside, 'suite failed outside its tests', 'suites failed outside their tests')
      : '',
    t.unhandled > 0 ? count(t.unhandled, 'unhandled error', 'unhandled errors') : '',
  ].filter((part) => part !== '');
  const failed = t.failed + t.unloaded + t.erroredOutside + t.unhandled;
  return `Tests: ${t.passed} passed, ${failed} failed${outside.length > 0 ? ` (${outside.join(', ')})` : ''}, ${t.skipped} skipped`;
}

export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    process.stdout.write(`\n${closingLine(tally(testModules, unhandledErrors))}\n`);
  }
}
