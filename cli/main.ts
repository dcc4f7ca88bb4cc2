/**
 * The `benchdrop` command line. Each command lives in cli/commands/; this file only
 * wires them into commander and turns their result into an exit code.
 */
import { Command } from 'commander';
import { parseCommand } from './commands/parse.ts';

const io = {
  out: (text: string) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text: string) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

export function buildProgram(): Command {
  const program = new Command('benchdrop')
    .description('Disk benchmark logs (IRIX diskperf, iostat from Solaris/illumos, Linux, FreeBSD) in, honest comparisons out.')
    .showHelpAfterError();

  program
    .command('parse')
    .description('parse log files offline and show what benchdrop reads from them')
    .argument('<file...>', 'log files (plain or .gz)')
    .option('--json', 'print the canonical records as JSON')
    .action(async (files: string[], options: { json?: boolean }) => {
      process.exitCode = await parseCommand(files, options, io);
    });

  return program;
}

await buildProgram().parseAsync(process.argv);
