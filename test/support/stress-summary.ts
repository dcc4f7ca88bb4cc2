/**
 * A stress section's result, carried on the test's metadata so that the summary
 * reporter (test/stress-summary-reporter.ts) can print one line per section after
 * the run, whatever the worker it ran in.
 */
import type { TestContext } from 'vitest';

export interface StressSummary {
  /** The section of issue 7 this covers, e.g. "faults" or "fuzz: parsers". */
  section: string;
  /** How many cases (files, uploads, generated inputs) were tried. */
  cases: number;
  /** Cases whose outcome differed from the expectation. */
  failures: number;
  /** Uploads or items that ended nowhere (neither ready nor failed, or missing). */
  lost: number;
  /** Anything else worth a figure, printed after the counts. */
  detail?: string;
}

declare module 'vitest' {
  interface TaskMeta {
    stressSummary?: StressSummary;
  }
}

export function recordStressSummary(context: Pick<TestContext, 'task'>, summary: StressSummary): void {
  context.task.meta.stressSummary = summary;
}
