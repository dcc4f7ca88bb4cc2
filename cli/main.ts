/**
 * The `benchdrop` command line entry point (bin/benchdrop.js, `npm run benchdrop`):
 * the program itself is in program.ts.
 */
import { processOutput } from './io.ts';
import { runCli } from './program.ts';

process.exitCode = await runCli(process.argv.slice(2), processOutput);
