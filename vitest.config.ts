import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Before every test file: no AWS SDK Node version notice (shared/node-support-notice.ts).
    setupFiles: ['./shared/node-support-notice.ts'],
    // Once, before them all: the build that bin/benchdrop.js and `npm start` run.
    globalSetup: ['./test/support/build-once.ts'],
    reporters: ['default', './test/closing-line-reporter.ts'],
  },
});
