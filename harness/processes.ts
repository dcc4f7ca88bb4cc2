/**
 * Child processes for the end-to-end tests: the local lab as `npm start` runs it
 * (its own Node process, --openssl-legacy-provider, the build in dist/ that the
 * tests' global setup makes), and the real clients
 * (AWS CLI, the benchdrop CLI, sh and curl) run asynchronously with execFile,
 * never with the *Sync variants: the lab lives in another process here, but a
 * blocked test worker could not notice a lab that hangs or dies either.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LabEndpoints } from '../infra/local/lab.ts';
import { SDK_NODE_NOTICE_OFF } from '../shared/node-support-notice.ts';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const LAB_MAIN = 'dist/infra/local/main.js';
/** `npm start` is `node` with these arguments (package.json's start script, checked by startup-output.test.ts). */
export const LAB_NODE_ARGS = ['--openssl-legacy-provider', LAB_MAIN] as const;

/** What the lab writes to <data>/lab.json. */
export type LabJson = LabEndpoints;

export interface Ran {
  command: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/**
 * Runs a program to its end and resolves with its exit code and output, whatever
 * the code; rejects only when it could not be started at all (ENOENT, EACCES).
 */
export function run(file: string, args: readonly string[], options: RunOptions = {}): Promise<Ran> {
  const command = [file, ...args]
    .map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(' ');
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    execFile(
      file,
      [...args],
      {
        cwd: options.cwd ?? REPO_ROOT,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        const code = (error as { code?: unknown } | null)?.code;
        if (typeof code === 'string') {
          reject(Object.assign(new Error(`could not run ${command}: ${code}`), { code }));
          return;
        }
        resolvePromise({
          command,
          code: error ? (typeof code === 'number' ? code : null) : 0,
          signal: (error?.signal as NodeJS.Signals | undefined) ?? null,
          stdout,
          stderr,
          ms: Date.now() - started,
        });
      },
    );
  });
}

/** The tail of a text, for failure messages. */
export function tail(text: string, chars = 4000): string {
  return text.length <= chars ? text : `[... ${text.length - chars} characters before]\n${text.slice(-chars)}`;
}

/** A finished command, for failure messages. */
export function explain(ran: Ran): string {
  return (
    `$ ${ran.command}\nexit ${ran.code ?? `signal ${ran.signal}`} after ${ran.ms} ms\n` +
    `--- stdout\n${tail(ran.stdout)}\n--- stderr\n${tail(ran.stderr)}`
  );
}

/**
 * The environment for the clients: this process's, without any AWS_* or
 * BENCHDROP_* setting of whoever runs the tests, the AWS CLI's config and
 * credential files pointed at files that do not exist (no profile interferes),
 * no instance-metadata lookups, and no AWS SDK notice about the Node version.
 */
export function clientEnv(scratch: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(AWS_|BENCHDROP_|POWERTOOLS_)/.test(name)) env[name] = value;
  }
  return {
    ...env,
    AWS_CONFIG_FILE: join(scratch, 'no-such-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(scratch, 'no-such-aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_PAGER: '',
    ...SDK_NODE_NOTICE_OFF,
    ...extra,
  };
}

/** One S3 record the lab delivered to the ingest handler (from its Powertools event log). */
export interface DeliveredEvent {
  eventName: string;
  key: string;
  size?: number;
  eTag?: string;
  /** The message's ApproximateReceiveCount in that delivery. */
  receiveCount: number;
}

export interface LabStartOptions {
  dataDir: string;
  fresh: boolean;
  /** Extra arguments after the data and port options. */
  args?: string[];
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /**
   * What start() waits for: the "ready" banner (default: the lab has ingested what
   * it found), or only its endpoints (lab.json written, its servers listening).
   */
  waitFor?: 'ready' | 'endpoints';
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Signals a process by its id; one that has just exited is no error. */
function sendSignal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** The lab running as a child process: its endpoints, its output, and a way to stop it. */
export class LabProcess {
  private stdoutText = '';
  private stderrText = '';
  private exitInfo: Exit | undefined;
  private spawnError: Error | undefined;
  readonly exited: Promise<Exit>;
  endpoints!: LabJson;
  private readonly killOnExit = () => {
    if (this.running) sendSignal(this.pid, 'SIGKILL');
  };

  /** `viaNpm`: the child is npm, and the lab is the process lab.json names (npm start). */
  private constructor(
    readonly child: ChildProcess,
    private readonly viaNpm = false,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (text: string) => (this.stdoutText += text));
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (this.stderrText += text));
    // Kept for start() to report: an unheard 'error' event would end the test worker.
    child.on('error', (error) => (this.spawnError = error));
    child.once('exit', (code, signal) => {
      this.exitInfo = { code, signal };
      process.off('exit', this.killOnExit);
    });
    // Resolved on 'close', not 'exit': by then everything it printed has been read.
    this.exited = new Promise((resolvePromise) =>
      child.once('close', (code, signal) => resolvePromise({ code, signal })),
    );
    // Last resort, should the test worker end without afterAll: never leave the lab running.
    process.once('exit', this.killOnExit);
  }

  /** The lab's own process: under npm, the one lab.json names (signalling npm would leave it running). */
  get pid(): number {
    return this.viaNpm && this.endpoints?.pid !== undefined ? this.endpoints.pid : this.child.pid!;
  }

  get running(): boolean {
    return this.exitInfo === undefined && this.child.pid !== undefined;
  }

  get stdout(): string {
    return this.stdoutText;
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Everything it printed, for failure messages. */
  output(chars = 6000): string {
    return `--- lab stdout\n${tail(this.stdoutText, chars)}\n--- lab stderr\n${tail(this.stderrText, chars)}`;
  }

  /**
   * Starts the lab (`npm start`'s command line, free ports) and waits for its
   * "ready" line, the end of its banner and its lab.json (or, with waitFor
   * 'endpoints', for its lab.json alone). On failure or timeout it is stopped
   * and the error carries its output.
   */
  static async start(options: LabStartOptions): Promise<LabProcess> {
    const args = [
      ...LAB_NODE_ARGS,
      ...(options.fresh ? ['--fresh'] : []),
      '--data',
      options.dataDir,
      '--s3-port',
      '0',
      '--api-port',
      '0',
      ...(options.args ?? []),
    ];
    const file = join(options.dataDir, 'lab.json');
    // Waiting for the endpoints means waiting for this start's lab.json, not the last one's.
    if (options.waitFor === 'endpoints') await rm(file, { force: true });
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lab = new LabProcess(child);
    const timeoutMs = options.timeoutMs ?? 60_000;
    try {
      await lab.until(
        options.waitFor === 'endpoints' ? () => lab.readEndpoints(file) : () => lab.bannerPrinted(),
        timeoutMs,
      );
      if (options.waitFor !== 'endpoints' && !(await lab.readEndpoints(file)))
        throw new Error(`the lab is ready but ${file} cannot be read`);
      return lab;
    } catch (error) {
      await lab.stop();
      throw new Error(`${(error as Error).message}\n${lab.output()}`, { cause: error });
    }
  }

  /**
   * `npm start` as printed, in `cwd` (a checkout with node_modules): the README's
   * defaults, data in <cwd>/.benchdrop, ports 4569 and 4580. Waits as start() does.
   */
  static async startWithNpm(options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<LabProcess> {
    const file = join(options.cwd, '.benchdrop', 'lab.json');
    await rm(file, { force: true });
    const lab = new LabProcess(
      spawn('npm', ['start'], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] }),
      true,
    );
    try {
      await lab.until(async () => lab.bannerPrinted() && (await lab.readEndpoints(file)), options.timeoutMs ?? 90_000);
      return lab;
    } catch (error) {
      await lab.stop();
      throw new Error(`npm start: ${(error as Error).message}\n${lab.output()}`, { cause: error });
    }
  }

  /** The banner ends with the line saying how to stop the lab. */
  private bannerPrinted(): boolean {
    return /^benchdrop lab ready in /m.test(this.stdoutText) && /^Stop with Ctrl-C/m.test(this.stdoutText);
  }

  /** True once lab.json is there and whole (it is written in one go, but may be read mid-write). */
  private async readEndpoints(file: string): Promise<boolean> {
    try {
      this.endpoints = JSON.parse(await readFile(file, 'utf8')) as LabJson;
      return true;
    } catch {
      return false;
    }
  }

  /** Polls `condition` until it holds; fails when the lab exits first or time runs out. */
  private async until(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await condition()) return;
      if (this.spawnError) throw new Error(`the lab could not be started: ${this.spawnError.message}`);
      if (!this.running)
        throw new Error(
          `the lab exited before it was ready (exit ${this.exitInfo?.code ?? `signal ${this.exitInfo?.signal}`})`,
        );
      if (Date.now() > deadline) throw new Error(`the lab was not ready within ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** SIGKILL by PID, as a crash would end it, and wait for the exit. */
  async kill(): Promise<Exit> {
    if (this.running) sendSignal(this.pid, 'SIGKILL');
    return this.exited;
  }

  /**
   * SIGTERM by PID, then wait for the exit (SIGKILL after `graceMs`). Safe to
   * call on a lab that already exited.
   */
  async stop(graceMs = 20_000): Promise<Exit & { killed: boolean }> {
    if (this.child.pid === undefined) return { code: null, signal: null, killed: false };
    if (!this.running) return { ...(await this.exited), killed: false };
    sendSignal(this.pid, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), graceMs)));
    const first = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (first !== 'late') return { ...first, killed: false };
    if (this.running) sendSignal(this.pid, 'SIGKILL');
    return { ...(await this.exited), killed: true };
  }

  /** The lines it printed that match `pattern`, without their indentation. */
  printedLines(pattern: RegExp): string[] {
    return this.stdoutText
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => pattern.test(l));
  }

  /**
   * The S3 records the lab delivered to the ingest handler, read from the
   * handler's own log of each invocation event (POWERTOOLS_LOGGER_LOG_EVENT).
   */
  deliveredEvents(): DeliveredEvent[] {
    const events: DeliveredEvent[] = [];
    for (const line of this.stdoutText.split('\n')) {
      if (!line.startsWith('{')) continue;
      let entry: {
        message?: string;
        event?: { Records?: { body?: string; attributes?: { ApproximateReceiveCount?: string } }[] };
      };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      if (entry.message !== 'Lambda invocation event') continue;
      for (const message of entry.event?.Records ?? []) {
        const body = JSON.parse(message.body ?? '{}') as {
          Records?: { eventName: string; s3: { object: { key: string; size?: number; eTag?: string } } }[];
        };
        for (const record of body.Records ?? []) {
          const { key, size, eTag } = record.s3.object;
          const receiveCount = Number(message.attributes?.ApproximateReceiveCount ?? 0);
          events.push({
            eventName: record.eventName,
            key: decodeURIComponent(key.replace(/\+/g, ' ')),
            ...(size !== undefined ? { size } : {}),
            ...(eTag !== undefined ? { eTag } : {}),
            receiveCount,
          });
        }
      }
    }
    return events;
  }
}
