/**
 * Prints one line per stress section at the end of `npm run test:stress`:
 * `stress: <section>: N cases tried, F failures found, L lost`, from the metadata each
 * section records with `recordStressSummary`.
 */
import type { Reporter, TestModule } from 'vitest/node';
import type { StressSummary } from './support/stress-summary.ts';

export default class StressSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const summary = (test.meta() as { stressSummary?: StressSummary }).stressSummary;
        if (!summary) continue;
        const state = test.result().state;
        const detail = summary.detail ? `; ${summary.detail}` : '';
        lines.push(
          `stress: ${summary.section}: ${summary.cases} cases tried, ${summary.failures} failures found, ` +
            `${summary.lost} lost${detail} [${state}]`,
        );
      }
    }
    if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`);
  }
}
