#!/usr/bin/env node
// The `benchdrop` command: the CLI's JavaScript build in dist/, which `npm ci`
// makes (the prepare script) and `npm run build` remakes after a change.
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    'benchdrop: the CLI is not built yet (no dist/cli/main.js): run `npm run build` in the benchdrop folder\n',
  );
  process.exit(1);
}
// First, before any AWS SDK client exists: no Node version notice on stderr.
await import('../dist/shared/node-support-notice.js');
await import(main.href);
