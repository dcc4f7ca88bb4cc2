#!/usr/bin/env node
// The `benchdrop` command: runs the TypeScript CLI through tsx's loader, so the
// repository works as checked out, without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
