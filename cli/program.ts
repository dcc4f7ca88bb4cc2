/**
 * The `benchdrop` command line: each command lives in cli/commands/; this file
 * wires them into commander. runCli() runs one command line in-process and
 * returns its exit code, so main.ts and the tests drive the very same program.
 */
import { Command, CommanderError, Option } from 'commander';
import { FORMATS } from '../shared/model.ts';
import { METRIC_SPEC_HELP } from '../shared/metrics.ts';
import { SUPPORTED_FORMATS } from '../shared/parsers/errors.ts';
import { SELECTOR_HELP } from '../shared/selectors.ts';
import { DEFAULT_PAGE } from '../shared/store/pages.ts';
import { UPLOAD_STATUSES } from '../shared/upload-status.ts';
import type { UploadDeps } from './commands/upload.ts';
import { DEFAULT_TIMEOUT_S } from './defaults.ts';
import { isSource, siblingModule } from '../shared/module-paths.ts';
import { processOutput, type Output } from './io.ts';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { labOptions } from '../infra/local/options.ts';
import { DEFAULT_DATA_DIR, DEFAULT_LAB_FILE, LAB_FILE } from './lab-file.ts';
import { API_ENV, BUCKET_ENV, LAB_API_EXAMPLE, LAB_S3_EXAMPLE, S3_ENDPOINT_ENV } from './target.ts';

/** The options naming a lab, on every command that talks to one; cli/target.ts resolves them. */
function apiOptions(command: Command): Command {
  return command
    .option(
      '--api <url>',
      `the lab API, e.g. ${LAB_API_EXAMPLE} (default: the running lab's, from --data's lab.json, else $${API_ENV})`,
    )
    .option(
      '--stack <name>',
      'an AWS lab: read ApiUrl and BucketName from this CloudFormation stack, e.g. Benchdrop-mylab',
    )
    .option(
      '--data <dir>',
      "a local lab's data folder: " +
        `its ${LAB_FILE}, written by npm start, names the API and bucket (default: ${DEFAULT_DATA_DIR})`,
    )
    .option(
      '--region <region>',
      'AWS region of the stack and API (default: from the API URL, AWS_REGION or your profile)',
    );
}

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];
const limitHelp = (noun: string) =>
  `at most this many ${noun} (default ${DEFAULT_PAGE}; the CLI pages through the API for more)`;

/** Runs a command's action and keeps its exit code. */
type Run = (command: () => Promise<number>) => Promise<void>;

export function buildProgram(
  io: Output = processOutput,
  deps: UploadDeps = {},
  setExitCode: (code: number) => void = (code) => (process.exitCode = code),
): Command {
  const program = new Command('benchdrop')
    .description(
      'Disk benchmark logs (IRIX diskperf; iostat from Solaris/illumos, Linux, FreeBSD, NetBSD, OpenBSD, macOS, AIX) ' +
        'in, honest comparisons out.',
    )
    .addHelpText(
      'after',
      '\nCommands that talk to a lab use --api or --stack when given, else the lab `npm start` runs\n' +
        `in this folder (its ${DEFAULT_LAB_FILE}, or --data DIR's), else $${API_ENV}.`,
    )
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.out(text), writeErr: (text) => io.err(text) });
  const run: Run = async (command) => setExitCode(await command());
  addParse(program, io, run);
  addUpload(program, io, deps, run);
  addListings(program, io, deps, run);
  addCompare(program, io, deps, run);
  addLab(program, run);
  return program;
}

function addParse(program: Command, io: Output, run: Run): void {
  program
    .command('parse')
    .description('parse log files offline and show what benchdrop reads from them')
    .argument('<file...>', 'log files (plain or .gz)')
    .option('--json', 'print the canonical records as JSON')
    .addHelpText('after', `\nFormats it reads:\n${SUPPORTED_FORMATS.map((f) => `  - ${f}`).join('\n')}`)
    .action((files: string[], options: { json?: boolean }) =>
      run(async () => (await import('./commands/parse.ts')).parseCommand(files, options, io)),
    );
}

function addUpload(program: Command, io: Output, deps: UploadDeps, run: Run): void {
  apiOptions(
    program
      .command('upload')
      .description(
        "upload log files to the lab's bucket (key <device or folder>/<file name>), " +
          'optionally waiting until they are parsed',
      )
      .argument('<file...>', 'log files (plain or .gz)')
      .option(
        '--device <label>',
        "device label for every run in these files (S3 metadata `device`; also the key's folder)",
      )
      .option(
        '--tag <key=value>',
        'a tag for class comparisons, e.g. --tag interface=SAS --tag rpm=10000 (repeatable)',
        collect,
      )
      .option('--wait', 'wait until the pipeline has parsed each file, and print its runs or why it failed')
      .option('--timeout <seconds>', `how long --wait waits (default ${DEFAULT_TIMEOUT_S})`)
      .option(
        '--bucket <name>',
        `the drop bucket (default: the stack's, the running lab's from --data's ${LAB_FILE}, else $${BUCKET_ENV})`,
      )
      .option(
        '--endpoint <url>',
        `S3 endpoint of a local lab, e.g. ${LAB_S3_EXAMPLE} ` +
          `(default: from --data's ${LAB_FILE}, else $${S3_ENDPOINT_ENV})`,
      ),
  ).action((files: string[], options) =>
    run(async () => (await import('./commands/upload.ts')).uploadCommand(files, options, io, deps)),
  );
}

/** devices, runs and uploads: what the lab holds. */
function addListings(program: Command, io: Output, deps: UploadDeps, run: Run): void {
  apiOptions(
    program
      .command('devices')
      .description('list the device labels the lab knows')
      .option('--json', "print the API's JSON"),
  ).action((options) => run(async () => (await import('./commands/devices.ts')).devicesCommand(options, io, deps)));

  apiOptions(
    program
      .command('runs')
      .description('list runs, with the run ids compare takes (run=ID)')
      .option('--device <glob>', 'only devices matching this glob, e.g. "sas*"')
      .addOption(new Option('--format <format>', 'only runs of this format').choices(FORMATS))
      .option('--limit <n>', limitHelp('runs'))
      .option('--json', "print the API's JSON"),
  ).action((options) => run(async () => (await import('./commands/runs.ts')).runsCommand(options, io, deps)));

  apiOptions(
    program
      .command('uploads')
      .description(
        'what became of each uploaded key (ready with its runs, failed and why, deleted); ' +
          '--history lists every version',
      )
      .option(
        '--status <status>',
        `only uploads in this state: ${UPLOAD_STATUSES.slice(0, -1).join(', ')} or ${UPLOAD_STATUSES.at(-1)}`,
      )
      .option('--history', "every version of every key, replaced ones too, instead of each key's current state")
      .option('--limit <n>', limitHelp('uploads'))
      .option('--json', "print the API's JSON"),
  ).action((options) => run(async () => (await import('./commands/uploads.ts')).uploadsCommand(options, io, deps)));
}

function addCompare(program: Command, io: Output, deps: UploadDeps, run: Run): void {
  apiOptions(
    program
      .command('compare')
      .description(
        'how many times better A is than B, per point and overall, with an interval when each side has 2+ runs',
      )
      .argument('<a>', `selector for A: ${SELECTOR_HELP}`)
      .argument('<b>', 'selector for B, same grammar')
      .option('--metric <metric>', `${METRIC_SPEC_HELP} (default all)`)
      .option('--format <format>', 'text (the default: the table, its notes and the setups), csv or md')
      .option('--json', "print the API's Comparison JSON unchanged")
      .option(
        '--html [file]',
        'also write the report page of this comparison as one self-contained HTML file (without a file: ' +
          'to --out, else a new file in the temp folder), and say where',
      )
      .option('--out <file>', 'where --html writes (implies --html)')
      .option(
        '--share',
        'also freeze this comparison in the lab (POST /reports) and print the link to it: a page that later ' +
          'uploads do not change',
      ),
  ).action((a: string, b: string, options) =>
    run(async () => (await import('./commands/compare.ts')).compareCommand(a, b, options, io, deps)),
  );
}

function addLab(program: Command, run: Run): void {
  labOptions(
    program
      .command('lab')
      .description(
        'run the whole pipeline on this machine (local S3, DynamoDB, ingest, API, report page), as npm start does',
      )
      .allowExcessArguments(false),
  ).action((_options, command: Command) =>
    run(() => runLabProcess(command.parent ? process.argv.slice(process.argv.indexOf('lab') + 1) : [])),
  );
}

/**
 * The lab runs in its own Node process: s3rver's paged listings need Node's
 * legacy OpenSSL provider, a flag a running process cannot take on.
 */
function runLabProcess(args: readonly string[]): Promise<number> {
  const main = fileURLToPath(siblingModule(import.meta.url, '../infra/local/main'));
  const loader = isSource(import.meta.url) ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, ['--openssl-legacy-provider', ...loader, main, ...args], {
    stdio: 'inherit',
    cwd: process.cwd(),
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

/** Runs one command line (arguments after the program name) and returns its exit code. */
export async function runCli(
  args: readonly string[],
  io: Output = processOutput,
  deps: UploadDeps = {},
): Promise<number> {
  let code = 0;
  const program = buildProgram(io, deps, (c) => (code = c));
  try {
    await program.parseAsync([...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    throw error;
  }
  return code;
}
