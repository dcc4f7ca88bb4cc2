/**
 * What the first hour prints (issue 14), as a user meets it: `npm ci` warns of no
 * package's engines under this Node, and the lab (`npm start`'s command line in a
 * child process) and the benchdrop command print no AWS SDK notice about the
 * Node version, nor any EBADENGINE. The children get the clients' environment
 * without the SDK's switch, so each entry point has to set it itself
 * (shared/node-support-notice.ts); other warnings still print.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SDK_NODE_NOTICE_OFF } from '../../shared/node-support-notice.ts';
import { clientEnv, explain, LAB_NODE_ARGS, LabProcess, REPO_ROOT, run, type Ran } from '../../harness/processes.ts';

const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
  subset(range: string, superset: string): boolean;
};

const NOTICE = 'NodeVersionSupportWarning';
const SWITCH = Object.keys(SDK_NODE_NOTICE_OFF)[0]!;
const FIXTURE = join(REPO_ROOT, 'test/fixtures/solaris/solaris-10-xn.iostat.txt');
/** Under Node 22 and later the SDK has nothing to say: the notice can only show before. */
const NOTICE_EXPECTED_UNSILENCED = Number(process.versions.node.split('.')[0]) < 22;

let scratch: string;
let lab: LabProcess | undefined;

/** The clients' environment without the SDK's switch (clientEnv sets it), or with it as given. */
function bareEnv(value?: string): NodeJS.ProcessEnv {
  const env = clientEnv(scratch);
  delete env[SWITCH];
  if (value !== undefined) env[SWITCH] = value;
  return env;
}

function expectQuiet(what: string, stderr: string): void {
  expect(stderr, `${what} stderr:\n${stderr}`).not.toContain(NOTICE);
  expect(stderr, `${what} stderr:\n${stderr}`).not.toContain('EBADENGINE');
}

function expectSuccess(ran: Ran): void {
  expect(ran.code, explain(ran)).toBe(0);
}

const benchdrop = (args: readonly string[], env: NodeJS.ProcessEnv) =>
  run(process.execPath, ['bin/benchdrop.js', ...args], { env, timeoutMs: 60_000 });

const uploadArgs = (device: string) => {
  const e = lab!.endpoints;
  return [
    'upload',
    FIXTURE,
    '--device',
    device,
    '--wait',
    '--api',
    e.apiUrl,
    '--bucket',
    e.bucket,
    '--endpoint',
    e.s3Endpoint,
  ];
};

describe('what a first start prints', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'benchdrop-startup-'));
  });

  afterAll(async () => {
    await lab?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  it('npm start is the command line the lab tests start', async () => {
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts['start']).toBe(['node', ...LAB_NODE_ARGS].join(' '));
  });

  it('the lab starts and ingests the demo logs without a Node version notice or EBADENGINE on stderr', async () => {
    lab = await LabProcess.start({ dataDir: join(scratch, 'data'), fresh: true, env: bareEnv(), timeoutMs: 60_000 });
    // The demo logs went through the lab's S3 and DynamoDB clients before the banner.
    expect(lab.stdout).toMatch(/^benchdrop lab ready in /m);
    const listed = (await (await fetch(`${lab.endpoints.apiUrl}/uploads`)).json()) as { uploads: { status: string }[] };
    expect(listed.uploads.length, lab.output()).toBeGreaterThan(0);
    expect(
      listed.uploads.every((u) => u.status === 'ready'),
      lab.output(),
    ).toBe(true);
    expectQuiet('the lab', lab.stderr);
  }, 90_000);

  it('benchdrop --help, and an upload to the lab (an S3 client made), print neither', async () => {
    const help = await benchdrop(['--help'], bareEnv());
    expectSuccess(help);
    expect(help.stdout).toMatch(/^Usage: benchdrop /m);
    expectQuiet('benchdrop --help', help.stderr);

    const upload = await benchdrop(uploadArgs('quiet-disk'), bareEnv());
    expectSuccess(upload);
    expect(upload.stdout).toMatch(/^ready quiet-disk\/solaris-10-xn\.iostat\.txt: \d+ runs?$/m);
    expectQuiet('benchdrop upload', upload.stderr);
  }, 90_000);

  it('the notice is the SDK switch away: asked for, the same upload prints it (below Node 22)', async () => {
    const upload = await benchdrop(uploadArgs('noisy-disk'), bareEnv('false'));
    expectSuccess(upload);
    expect(upload.stderr.includes(NOTICE), upload.stderr).toBe(NOTICE_EXPECTED_UNSILENCED);
  }, 90_000);

  it('only that notice is silenced: a warning of another kind still prints', async () => {
    const probe = (silence: boolean) =>
      [
        silence ? "await import('./shared/node-support-notice.ts');" : '',
        "const { S3Client } = await import('@aws-sdk/client-s3');",
        "new S3Client({ region: 'us-east-1' });",
        "process.emitWarning('a warning of its own', 'BenchdropProbeWarning');",
      ].join('\n');
    for (const silence of [true, false]) {
      const ran = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe(silence)], {
        env: bareEnv(),
        timeoutMs: 60_000,
      });
      expectSuccess(ran);
      expect(ran.stderr).toContain('BenchdropProbeWarning: a warning of its own');
      expect(ran.stderr.includes(NOTICE), ran.stderr).toBe(!silence && NOTICE_EXPECTED_UNSILENCED);
    }
  }, 60_000);

  it('npm ci on a fresh clone warns of no engine, and package.json says what the locked packages allow', async () => {
    const clone = join(scratch, 'clone');
    await mkdir(clone);
    for (const file of ['package.json', 'package-lock.json']) await copyFile(join(REPO_ROOT, file), join(clone, file));
    // A dry run checks every locked package's engines as `npm ci` does, installs
    // nothing and needs no network; it refuses a lock out of step with package.json.
    const ci = await run(
      'npm',
      [
        'ci',
        '--dry-run',
        '--offline',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--cache',
        join(scratch, 'npm-cache'),
      ],
      { cwd: clone, env: bareEnv(), timeoutMs: 120_000 },
    );
    expectSuccess(ci);
    expect(ci.stdout).toMatch(/added \d+ packages/);
    expect(`${ci.stdout}${ci.stderr}`).not.toContain('EBADENGINE');

    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const lock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { engines?: { node?: unknown } }>;
    };
    const engines = pkg.engines.node;
    expect(semver.satisfies(process.version, engines)).toBe(true);
    expect(lock.packages['']?.engines?.node).toBe(engines);
    // Every Node that package.json allows, each locked package allows too (optional ones included).
    const narrower = Object.entries(lock.packages)
      .filter(
        ([path, entry]) =>
          path !== '' && typeof entry.engines?.node === 'string' && !semver.subset(engines, entry.engines.node),
      )
      .map(([path, entry]) => `${path.replace(/^.*node_modules\//, '')}: ${String(entry.engines!.node)}`);
    expect(narrower).toEqual([]);
  }, 120_000);
});
