/**
 * The local lab has no authentication, so it binds loopback only unless asked:
 * `npm start`'s command line (infra/local/main.ts in its own Node process) refuses
 * a non-loopback --host before it creates anything, accepts one with
 * --allow-non-loopback, and binds 127.0.0.1 when no --host is given. Servers here
 * bind free ports; the "allowed" case uses a TEST-NET address (RFC 5737) that no
 * machine has, so it fails to bind instead of exposing anything.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBindAddress, isLoopback } from '../../../infra/local/lab.ts';
import { DEFAULT_HOST, labOptions, type LabCommandOptions } from '../../../infra/local/options.ts';
import { clientEnv, explain, LAB_NODE_ARGS, LabProcess, run } from '../../../harness/processes.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'benchdrop-binding-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** main.ts as `npm start` runs it, on free ports, to its exit. */
function startLab(dataDir: string, args: string[]) {
  return run(
    process.execPath,
    [...LAB_NODE_ARGS, '--data', dataDir, '--no-samples', '--s3-port', '0', '--api-port', '0', ...args],
    {
      env: clientEnv(scratch),
      timeoutMs: 60_000,
    },
  );
}

describe('lab binding', () => {
  it('tells loopback addresses from everything else', () => {
    const loopback = [
      '127.0.0.1',
      '127.8.9.10',
      '::1',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
      'localhost',
      'LocalHost',
    ];
    const other = [
      '0.0.0.0',
      '::',
      '10.0.0.1',
      '192.168.1.20',
      '192.0.2.1',
      'fe80::1',
      '::2',
      '::ffff:10.0.0.1',
      '127.evil.example',
      '127.0.0.1.nip.io',
      'localhost.example',
      'example.org',
      '',
    ];
    for (const host of loopback) expect(isLoopback(host), host).toBe(true);
    for (const host of other) expect(isLoopback(host), host).toBe(false);
    for (const host of other)
      expect(() => checkBindAddress(host, false), host).toThrow(
        /^refusing to bind .*: the lab has no authentication; pass --allow-non-loopback/,
      );
    for (const host of other) expect(() => checkBindAddress(host, true), host).not.toThrow();
  });

  it('defaults to 127.0.0.1 for both servers, in the options npm start and benchdrop lab share', () => {
    expect(DEFAULT_HOST).toBe('127.0.0.1');
    const options = labOptions(new Command('lab').exitOverride()).parse([], { from: 'user' }).opts<LabCommandOptions>();
    expect(options.host).toBe(DEFAULT_HOST);
    expect(options.allowNonLoopback).toBeUndefined();
  });

  it('refuses a non-loopback --host without --allow-non-loopback, before creating anything', async () => {
    // The wiring through main.ts; the address table above covers the rest.
    const hosts = ['0.0.0.0', '127.0.0.1.nip.io'];
    // One Node process each, side by side: each takes seconds to start.
    const runs = await Promise.all(
      hosts.map(async (host) => {
        const dataDir = join(scratch, `refused-${host.replace(/\W/g, '_')}`);
        return { host, dataDir, ran: await startLab(dataDir, ['--host', host]) };
      }),
    );
    for (const { host, dataDir, ran } of runs) {
      expect(ran.code, explain(ran)).toBe(1);
      expect(ran.stderr).toContain(
        `benchdrop lab: refusing to bind ${host}: the lab has no authentication; pass --allow-non-loopback to expose it anyway`,
      );
      expect(ran.stdout).not.toMatch(/ready in/);
      expect(existsSync(dataDir), host).toBe(false);
    }
  }, 90_000);

  it('goes on to bind a non-loopback --host with --allow-non-loopback (here an address no machine has, so the bind fails)', async () => {
    const dataDir = join(scratch, 'allowed');
    const ran = await startLab(dataDir, ['--host', '192.0.2.1', '--allow-non-loopback']);
    expect(ran.code, explain(ran)).toBe(1);
    expect(ran.stderr).not.toContain('refusing to bind');
    expect(ran.stderr).toMatch(/EADDRNOTAVAIL|cannot assign requested address/i);
    // It got past the check: the data folder exists.
    expect(existsSync(dataDir)).toBe(true);
  });

  it('binds S3, the API and DynamoDB to 127.0.0.1 when no --host is given', async () => {
    const lab = await LabProcess.start({
      dataDir: join(scratch, 'default'),
      fresh: true,
      args: ['--no-samples'],
      env: clientEnv(scratch),
    });
    try {
      const e = lab.endpoints;
      for (const url of [e.s3Endpoint, e.apiUrl, e.dynamodbEndpoint]) expect(new URL(url).hostname).toBe('127.0.0.1');
      expect(lab.printedLines(/^(S3 endpoint|API) /).join('\n')).toMatch(
        /^S3 endpoint {2}http:\/\/127\.0\.0\.1:\d+ [\s\S]*\nAPI {10}http:\/\/127\.0\.0\.1:\d+$/,
      );
      const answer = await fetch(`${e.apiUrl}/devices`);
      expect(answer.status).toBe(200);
      await answer.arrayBuffer();
    } finally {
      const stopped = await lab.stop();
      expect(stopped.killed).toBe(false);
    }
  }, 90_000);
});
