/**
 * The closing line of a vitest run (closing-line-reporter.ts), read from a real
 * vitest run in a child process on test files written to a temporary folder,
 * outside this repository and its test globs: a file that cannot be loaded, hooks
 * that throw, an unhandled rejection are failures, not a quiet `0 failed`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explain, REPO_ROOT, run, type Ran } from '../harness/processes.ts';

const VITEST = join(REPO_ROOT, 'node_modules/vitest/vitest.mjs');
const REPORTER = join(REPO_ROOT, 'test/closing-line-reporter.ts');

let scratch: string;

/** This process's environment without what vitest set for it, so the child is a run of its own. */
function runnerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !/^VITEST/.test(name)) env[name] = value;
  return { ...env, NO_COLOR: '1' };
}

/** Writes the files into a folder of their own and runs vitest there with only the closing-line reporter. */
async function vitestOn(name: string, files: Record<string, string>): Promise<{ ran: Ran; closing: string }> {
  const root = await mkdtemp(join(scratch, `${name}-`));
  // No imports, so nothing has to resolve from the temporary folder: describe, it and expect are globals.
  await writeFile(
    join(root, 'vitest.config.mjs'),
    `export default { test: { globals: true, include: ['*.test.ts'], reporters: [${JSON.stringify(REPORTER)}] } };\n`,
  );
  for (const [file, text] of Object.entries(files)) await writeFile(join(root, file), text);
  const ran = await run(
    process.execPath,
    [VITEST, 'run', '--root', root, '--config', join(root, 'vitest.config.mjs')],
    { cwd: root, env: runnerEnv(), timeoutMs: 60_000 },
  );
  const closing = ran.stdout.split('\n').filter((line) => line.startsWith('Tests: '));
  expect(closing, explain(ran)).toHaveLength(1);
  return { ran, closing: closing[0]! };
}

describe('the closing line', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'benchdrop-closing-line-'));
  });

  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('counts a test file that fails to load as a failure', async () => {
    const { ran, closing } = await vitestOn('unloadable', {
      'broken.test.ts':
        "import { helper } from './no-such-module.ts';\n\nit('uses the helper', () => expect(helper).toBeDefined());\n",
    });
    expect(closing).toBe('Tests: 0 passed, 1 failed (1 file failed to load), 0 skipped');
    expect(ran.code, explain(ran)).toBe(1);
  }, 60_000);

  it('counts hooks that throw, a file that throws while collected and an unhandled rejection, each once', async () => {
    const { ran, closing } = await vitestOn('outside', {
      'a-broken-import.test.ts': "import './no-such-module.ts';\n\nit('never collected', () => {});\n",
      'b-fine.test.ts': "it('passes', () => expect(1 + 1).toBe(2));\nit.skip('is skipped', () => {});\n",
      'c-before-all.test.ts':
        "describe('a suite', () => {\n  beforeAll(() => {\n    throw new Error('setup broke');\n  });\n  it('one', () => {});\n  it('two', () => {});\n});\n",
      'd-after-all.test.ts':
        "describe('another suite', () => {\n  afterAll(() => {\n    throw new Error('teardown broke');\n  });\n  it('passes first', () => {});\n});\n",
      'e-throws-while-collected.test.ts':
        "it('declared', () => {});\nthrow new Error('the file throws as it is collected');\n",
      'f-file-hook.test.ts':
        "beforeAll(() => {\n  throw new Error('file setup broke');\n});\nit('a', () => {});\nit('b', () => {});\nit('c', () => {});\n",
      'g-unhandled.test.ts':
        "it('leaves a rejection behind', async () => {\n  void Promise.reject(new Error('nobody catches this'));\n  await new Promise((resolve) => setTimeout(resolve, 50));\n});\n",
    });
    // Passed: b's one, d's one, g's one. Skipped: b's skip, c's two and f's three (their hooks threw).
    // Failed: a and e unloaded, the suites of c and d and the file f outside their tests, g's rejection.
    expect(closing).toBe(
      'Tests: 3 passed, 6 failed (2 files failed to load, 3 suites failed outside their tests, 1 unhandled error), 6 skipped',
    );
    expect(ran.code, explain(ran)).toBe(1);
  }, 60_000);

  it('keeps its plain form when only tests fail', async () => {
    const { ran, closing } = await vitestOn('plain', {
      'tests.test.ts':
        "it('passes', () => {});\nit('fails', () => expect(1).toBe(2));\nit.skip('is skipped', () => {});\n",
    });
    expect(closing).toBe('Tests: 1 passed, 1 failed, 1 skipped');
    expect(ran.code, explain(ran)).toBe(1);
  }, 60_000);
});
