/**
 * The Lambda bundles as the stack builds them (infra/bundling.ts, the settings
 * NodejsFunction gets): self-contained, the AWS SDK included, so each loads in a
 * fresh node from a directory with no node_modules, as it runs from /var/task.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { LAMBDA_NODE_OPTIONS, lambdaEsbuildOptions } from '../../infra/bundling.ts';
import { ENV } from '../../shared/config.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HANDLERS = { ingest: 'functions/ingest/handler.ts', api: 'functions/api/handler.ts' } as const;
const work = mkdtempSync(join(tmpdir(), 'benchdrop-bundling-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const isBuiltin = (path: string) => path.startsWith('node:') || builtinModules.includes(path);

describe('Lambda bundles', () => {
  for (const [name, entry] of Object.entries(HANDLERS)) {
    it(`${name}: includes the AWS SDK, imports only Node built-ins, and loads with no node_modules in sight`, async () => {
      const outfile = join(work, name, 'index.mjs');
      const result = await build({ ...lambdaEsbuildOptions(), entryPoints: [join(ROOT, entry)], outfile, absWorkingDir: ROOT, metafile: true, logLevel: 'silent' });
      const imports = Object.values(result.metafile.outputs).flatMap((output) => output.imports.filter((i) => i.external).map((i) => i.path));
      expect(imports.filter((path) => !isBuiltin(path))).toEqual([]);
      expect(imports.some((path) => path.includes('@aws-sdk'))).toBe(false);

      // A fresh node with the deployed NODE_OPTIONS, run from the bundle's directory (tmpdir: no node_modules above it).
      const probe = `const m = await import(${JSON.stringify(pathToFileURL(outfile).href)}); console.log(typeof m.handler);`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], {
        cwd: join(work, name),
        env: { PATH: process.env['PATH'], NODE_OPTIONS: LAMBDA_NODE_OPTIONS, AWS_REGION: 'us-east-1', [ENV.tableName]: 'table', [ENV.bucketName]: 'bucket', POWERTOOLS_LOG_LEVEL: 'SILENT' },
      });
      expect(stdout.trim()).toBe('function');
    }, 120_000);
  }
});
