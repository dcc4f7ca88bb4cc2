/**
 * dynalite in a child process of its own, for benchmarks: DynamoDB is a remote
 * service, and dynalite on the caller's thread would bill its own work (LevelDB,
 * number parsing, capacity sums) to the code being measured and queue it behind
 * that code's requests. In-memory, on a free loopback port.
 *
 * Run as a script, this file is the child: it starts dynalite, prints
 * `{"port":N}` on one line, and exits when its stdin closes (so it never outlives
 * the parent, even one that was killed).
 */
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import dynalite from 'dynalite';
// The child serves the Queries: it is where dynalite's iterators must close.
import '../infra/local/dynalite-iterators.ts';

export interface DynaliteProcess {
  endpoint: string;
  pid: number;
  stop(): Promise<void>;
}

const SELF = fileURLToPath(import.meta.url);
const START_TIMEOUT_MS = 30_000;

export function startDynaliteProcess(): Promise<DynaliteProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', SELF], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()).length > 4000 && (stderr = stderr.slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
  };
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () => fail(new Error(`dynalite did not start within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop();
      reject(error);
    };
    let out = '';
    child.stdout.on('data', function onData(d: Buffer) {
      out += d.toString();
      const line = out.split('\n')[0];
      if (!out.includes('\n') || line === undefined) return;
      child.stdout.off('data', onData);
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const { port } = JSON.parse(line) as { port: number };
      resolve({ endpoint: `http://127.0.0.1:${port}`, pid: child.pid!, stop });
    });
    child.once('error', fail);
    child.once('exit', (code, signal) =>
      fail(new Error(`dynalite exited (${signal ?? code}) before it listened: ${stderr.trim()}`)),
    );
  });
}

if (process.argv[1] === SELF) {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  server.listen(0, '127.0.0.1', () =>
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`),
  );
  // In memory: nothing to flush, and the clients' keep-alive sockets need not be waited for.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}
