#!/usr/bin/env node
// The `benchdrop` command: runs the TypeScript CLI through tsx's loader, so the
// repository works as checked out, without a build step.
import { register } from 'tsx/esm/api';

register();
// First, before any AWS SDK client exists: no Node version notice on stderr.
await import('../shared/node-support-notice.ts');
await import('../cli/main.ts');
