/**
 * The `benchdrop` command line entry point (bin/benchdrop.js runs its build in
 * dist/): the program itself is in program.ts.
 */
import { processOutput } from './io.ts';
import { runCli } from './program.ts';

// `benchdrop runs | head`: a reader that stops early ends the command quietly, as other tools do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

process.exitCode = await runCli(process.argv.slice(2), processOutput);
