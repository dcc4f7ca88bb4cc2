import { defineConfig } from 'vitest/config';

/**
 * `npm run test:stress`: the long reliability runs (issue 7) that `npm test` leaves
 * out: fault injection, bursts, 100,000-case fuzzing. Files end in `.stress.ts` so
 * the default config, which takes `*.test.ts`, never picks them up. Each section
 * records what it tried with `recordStressSummary`; the summary reporter prints one
 * line per section at the end.
 */
export default defineConfig({
  test: {
    include: ['test/stress/**/*.stress.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    // One file at a time: the sections load the machine on purpose and must not
    // starve each other's timers.
    fileParallelism: false,
    // Before every test file: no AWS SDK Node version notice (shared/node-support-notice.ts).
    setupFiles: ['./shared/node-support-notice.ts'],
    // Once, before them all: the build that bin/benchdrop.js and `npm start` run.
    globalSetup: ['./test/support/build-once.ts'],
    reporters: ['default', './test/closing-line-reporter.ts', './test/stress-summary-reporter.ts'],
  },
});
