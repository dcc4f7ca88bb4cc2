/**
 * How the CLI finds the running local lab when no flag names it. `npm start`'s
 * command line runs in a child process (free ports, the demo logs) with its data
 * folder at <scratch>/.benchdrop, as in a fresh clone, and the CLI runs in
 * <scratch>: as a child process for the README's lines, typed as printed, and
 * in-process for the rest. Nothing is mocked: the lab.json read is the one the
 * lab wrote, and the stale one is what the lab leaves when it stops.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { humanBytes } from '../../cli/commands/upload.ts';
import { runCli } from '../../cli/program.ts';
import { clientEnv, explain, LabProcess, REPO_ROOT, run, type LabJson } from '../../harness/processes.ts';
import { captureOutput, closedPort, startFakeApi } from './fake-api.ts';

const BENCHDROP = join(REPO_ROOT, 'bin/benchdrop.js');
const LOG = join(REPO_ROOT, 'test/fixtures/solaris/solaris-10-xn.iostat.txt');

/** The folder `npm start` ran in: its data folder is the default one, .benchdrop. */
let scratch: string;
/** A folder with no lab in it. */
let elsewhere: string;
let dataDir: string;
let lab: LabProcess | undefined;
let endpoints: LabJson;
/** The line every command prints on stderr when it found the lab through ./.benchdrop/lab.json. */
let announced: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'benchdrop-find-'));
  elsewhere = await mkdtemp(join(tmpdir(), 'benchdrop-nolab-'));
  dataDir = join(scratch, '.benchdrop');
  lab = await LabProcess.start({
    dataDir,
    fresh: true,
    env: clientEnv(scratch, { POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' }),
  });
  endpoints = lab.endpoints;
  announced = `using the lab at ${endpoints.apiUrl} (from .benchdrop/lab.json)`;
}, 120_000);

afterAll(async () => {
  try {
    await lab?.stop();
  } finally {
    for (const dir of [scratch, elsewhere]) if (dir) await rm(dir, { recursive: true, force: true });
  }
}, 30_000);

/** The CLI in-process, in `cwd`, with only the environment given. */
async function cli(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const output = captureOutput();
  const code = await runCli(args, output.io, { env, cwd, pollIntervalMs: 100 });
  return { code, out: output.out, err: output.err };
}

/** The lines of a child's stderr that say which lab it used. */
const usingLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('using '));

describe('with no flag, the CLI talks to the lab npm start runs in this folder', () => {
  it("runs the README's compare lines as printed (the CLI as a child process), saying which lab it used", async () => {
    const env = clientEnv(scratch);
    const [table, html] = await Promise.all([
      run(
        process.execPath,
        [
          BENCHDROP,
          'compare',
          'x4100/c0t0d0,context~tunefs -a 1 /opt',
          'x4100/c0t0d0,context~tunefs -a 32 /opt',
          '--metric',
          'write_iops',
        ],
        { cwd: scratch, env },
      ),
      run(process.execPath, [BENCHDROP, 'compare', 'scsi2sd_redux', '300G_10K_SGI_Indy', '--html', 'report.html'], {
        cwd: scratch,
        env,
      }),
    ]);
    expect(table.code, explain(table)).toBe(0);
    expect(usingLines(table.stderr)).toEqual([announced]);
    // The demo's x4100 log: c0t0d0 writes 6028.7 ops/s at maxcontig 1 against 84.9 at 32.
    expect(table.stdout).toMatch(/^write_iops +6028\.7 +1 +84\.9 +1 +71\.0x$/m);
    expect(html.code, explain(html)).toBe(0);
    expect(usingLines(html.stderr)).toEqual([announced]);
    expect(html.stderr).toContain('wrote report.html');
    const page = await readFile(join(scratch, 'report.html'), 'utf8');
    expect(page).toMatch(/^<!doctype html>/i);
    expect(page).toContain('300G_10K_SGI_Indy is 2.56x scsi2sd_redux on all');
  }, 90_000);

  it('devices and runs find it too, each saying so in one line on stderr and nothing else there', async () => {
    const devices = await cli(scratch, ['devices']);
    expect(devices.code).toBe(0);
    expect(devices.err).toBe(announced);
    expect(devices.out).toContain('x4100/c0t0d0');
    const runs = await cli(scratch, ['runs', '--device', 'scsi2sd_redux']);
    expect(runs.code).toBe(0);
    expect(runs.err).toBe(announced);
    expect(runs.out.split('\n').at(-1)).toBe('1 run');
  });

  it('upload takes the bucket and S3 endpoint from lab.json, and --wait its API', async () => {
    const { code, out, err } = await cli(scratch, ['upload', LOG, '--device', 'found-disk', '--wait']);
    expect(err).toBe(
      `using the lab at ${endpoints.apiUrl}, bucket ${endpoints.bucket} at ${endpoints.s3Endpoint} (from .benchdrop/lab.json)`,
    );
    expect(code).toBe(0);
    const size = humanBytes((await stat(LOG)).size);
    expect(out.split('\n')).toEqual([
      `uploaded ${LOG} -> s3://${endpoints.bucket}/found-disk/${basename(LOG)} (${size})`,
      `ready found-disk/${basename(LOG)}: 1 run`,
    ]);
    const found = await cli(scratch, ['devices']);
    expect(found.out).toMatch(/^found-disk\/c0t0d0 +iostat /m);
  });

  it('--data names the data folder from anywhere, as given (absolute or relative)', async () => {
    const absolute = await cli(elsewhere, ['devices', '--data', dataDir]);
    expect(absolute.code).toBe(0);
    expect(absolute.err).toBe(`using the lab at ${endpoints.apiUrl} (from ${dataDir}/lab.json)`);
    const relative = await cli(dirname(scratch), ['devices', '--data', `${basename(scratch)}/.benchdrop`]);
    expect(relative.code).toBe(0);
    expect(relative.err).toBe(`using the lab at ${endpoints.apiUrl} (from ${basename(scratch)}/.benchdrop/lab.json)`);
  });

  it('the running lab comes before BENCHDROP_API, and flags before both, without announcing anything', async () => {
    const unused = `http://127.0.0.1:${await closedPort()}`;
    const found = await cli(scratch, ['devices'], { BENCHDROP_API: unused });
    expect(found.code).toBe(0);
    expect(found.err).toBe(announced);

    const other = await startFakeApi({ 'GET /devices': { body: { devices: [] } } });
    try {
      const named = await cli(scratch, ['devices', '--api', other.url], { BENCHDROP_API: unused });
      expect(named.code).toBe(0);
      expect(named.err).toBe('');
      expect(named.out).toContain('no devices yet');
      expect(other.requests.map((r) => r.path)).toEqual(['/devices']);
    } finally {
      await other.close();
    }
    const bucket = await cli(scratch, [
      'upload',
      LOG,
      '--device',
      'named-disk',
      '--bucket',
      endpoints.bucket,
      '--endpoint',
      endpoints.s3Endpoint,
    ]);
    expect(bucket.code).toBe(0);
    expect(bucket.err).toBe('');
  });

  it('--data naming a folder without lab.json is an error saying so, even with BENCHDROP_API set', async () => {
    const { code, out, err } = await cli(elsewhere, ['runs', '--data', 'nolab'], { BENCHDROP_API: endpoints.apiUrl });
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toBe(
      'error: --data nolab: there is no nolab/lab.json; the lab writes it there when it starts (npm start -- --data nolab)',
    );
  });

  it("a lab.json that is not a lab's is refused, naming the file and what is wrong", async () => {
    const folder = join(elsewhere, 'broken');
    await mkdir(join(folder, '.benchdrop'), { recursive: true });
    await writeFile(join(folder, '.benchdrop', 'lab.json'), '{"apiUrl": "http://127.0.0.1:4580"');
    const truncated = await cli(folder, ['devices']);
    expect(truncated.code).toBe(1);
    expect(truncated.err).toBe(
      "error: .benchdrop/lab.json is not a lab's endpoints file (not JSON); the lab writes a new one when it starts (npm start), or name the lab with --api URL",
    );
    await writeFile(
      join(folder, '.benchdrop', 'lab.json'),
      JSON.stringify({ apiUrl: endpoints.apiUrl, region: 'us-east-1' }),
    );
    const partial = await cli(folder, ['devices']);
    expect(partial.err).toBe(
      "error: .benchdrop/lab.json is not a lab's endpoints file (no s3Endpoint, bucket); the lab writes a new one when it starts (npm start), or name the lab with --api URL",
    );
  });
});

// Last: it stops the lab.
describe('after the lab stops', () => {
  it('lab.json stays, and each command says the lab is not running', async () => {
    await lab!.stop();
    expect(existsSync(join(dataDir, 'lab.json'))).toBe(true);
    const notRunning = `the lab is not running? .benchdrop/lab.json stays after the lab stops: start it again with \`npm start\`, or name another lab with --api URL or --stack NAME`;

    const runs = await cli(scratch, ['runs']);
    expect(runs.code).toBe(1);
    expect(runs.err.split('\n')).toEqual([
      announced,
      `error: could not reach the benchdrop API at ${endpoints.apiUrl} (from .benchdrop/lab.json): ECONNREFUSED; ${notRunning}`,
    ]);

    const withEnv = await cli(scratch, ['compare', 'a', 'b'], { BENCHDROP_API: 'http://127.0.0.1:4580' });
    expect(withEnv.err.split('\n').at(-1)).toBe(
      `error: could not reach the benchdrop API at ${endpoints.apiUrl} (from .benchdrop/lab.json): ECONNREFUSED; ${notRunning} (BENCHDROP_API is set, but .benchdrop/lab.json comes first: --api "$BENCHDROP_API" uses it)`,
    );

    const upload = await cli(scratch, ['upload', LOG, '--device', 'late-disk']);
    expect(upload.code).toBe(1);
    expect(upload.err.split('\n')).toEqual([
      `using bucket ${endpoints.bucket} at ${endpoints.s3Endpoint} (from .benchdrop/lab.json)`,
      `error: ${LOG}: upload to s3://${endpoints.bucket}/late-disk/${basename(LOG)} failed: could not reach ${endpoints.s3Endpoint} (ECONNREFUSED); is the lab running?`,
    ]);
  }, 60_000);
});
