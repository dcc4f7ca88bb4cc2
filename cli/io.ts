/**
 * Where commands write: `out` for results (stdout), `err` for errors and notes
 * (stderr). Commands never touch process.stdout themselves, so tests run them
 * in-process with a captured Output. `progress` is the stream progress bars draw
 * on (stderr in a terminal); without it, or when it is not a TTY, commands print
 * one line per step instead.
 */
export interface Output {
  out(text: string): void;
  err(text: string): void;
  progress?: NodeJS.WritableStream & { isTTY?: boolean };
}

export const processOutput: Output = {
  out: (text: string) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text: string) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  progress: process.stderr,
};

/** A failure the user can act on: printed as `error: <message>`, exit code 1. */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
