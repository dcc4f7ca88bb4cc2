/**
 * The Lambda bundles as the stack builds them (infra/bundling.ts, the settings
 * NodejsFunction gets, then the afterBundling step): self-contained, the AWS SDK
 * included, so each loads in a fresh node from a directory with no node_modules,
 * as it runs from /var/task; and a source map that still maps the project's code.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { builtinModules, SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { afterBundlingCommands, CREDENTIAL_PROVIDERS_UNUSED_IN_LAMBDA, LAMBDA_NODE_OPTIONS, lambdaEsbuildOptions } from '../../infra/bundling.ts';
import type { RawSourceMap } from '../../infra/source-map.ts';
import { ENV } from '../../shared/config.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HANDLERS = { ingest: 'functions/ingest/handler.ts', api: 'functions/api/handler.ts' } as const;
const work = mkdtempSync(join(tmpdir(), 'benchdrop-bundling-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const isBuiltin = (path: string) => path.startsWith('node:') || builtinModules.includes(path);
const run = promisify(execFile);

describe('Lambda bundles', () => {
  for (const [name, entry] of Object.entries(HANDLERS)) {
    it(`${name}: includes the AWS SDK, loads with no node_modules in sight, and maps its own code`, async () => {
      const dir = join(work, name);
      const outfile = join(dir, 'index.mjs');
      const result = await build({ ...lambdaEsbuildOptions(), entryPoints: [join(ROOT, entry)], outfile, absWorkingDir: ROOT, metafile: true, logLevel: 'silent' });

      // Statically, only Node's built-ins; dynamically, at most the credential providers Lambda never needs.
      const imports = Object.values(result.metafile.outputs).flatMap((output) => output.imports.filter((i) => i.external));
      expect(imports.filter((i) => i.kind !== 'dynamic-import' && !isBuiltin(i.path))).toEqual([]);
      expect(imports.filter((i) => !isBuiltin(i.path)).every((i) => CREDENTIAL_PROVIDERS_UNUSED_IN_LAMBDA.includes(i.path))).toBe(true);
      expect(Object.keys(result.metafile.inputs).some((input) => input.includes('node_modules/@aws-sdk/client-dynamodb/'))).toBe(true);

      // The stack's afterBundling step, run as the stack runs it.
      const mapPath = `${outfile}.map`;
      const before = JSON.parse(readFileSync(mapPath, 'utf8')) as RawSourceMap;
      for (const command of afterBundlingCommands(ROOT.replace(/\/$/, ''), dir)) await run('bash', ['-c', command], { cwd: ROOT });
      const after = JSON.parse(readFileSync(mapPath, 'utf8')) as RawSourceMap;
      expect(after.sources.length).toBeGreaterThan(0);
      expect(after.sources.some((s) => s.includes('node_modules'))).toBe(false);
      expect(statSync(mapPath).size).toBeLessThan(JSON.stringify(before).length / 5);
      // Every position of the bundle that mapped to the project's code still maps there.
      const whole = new SourceMap(before as SourceMapPayload);
      const trimmed = new SourceMap(after as SourceMapPayload);
      const lines = readFileSync(outfile, 'utf8').split('\n');
      let own = 0;
      for (let line = 0; line < lines.length; line++) {
        for (let column = 0; column < lines[line]!.length; column += 53) {
          const entry = whole.findEntry(line, column) as { originalSource?: string; originalLine?: number };
          if (entry.originalSource === undefined || entry.originalSource.includes('node_modules')) continue;
          own++;
          const mapped = trimmed.findEntry(line, column) as { originalSource?: string; originalLine?: number };
          expect([mapped.originalSource, mapped.originalLine]).toEqual([entry.originalSource, entry.originalLine]);
        }
      }
      expect(own).toBeGreaterThan(100);

      // A fresh node with the deployed NODE_OPTIONS, run from the bundle's directory (tmpdir: no node_modules above it).
      const probe = `const m = await import(${JSON.stringify(pathToFileURL(outfile).href)}); console.log(typeof m.handler);`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe], {
        cwd: dir,
        env: { PATH: process.env['PATH'], NODE_OPTIONS: LAMBDA_NODE_OPTIONS, AWS_REGION: 'us-east-1', [ENV.tableName]: 'table', [ENV.bucketName]: 'bucket', POWERTOOLS_LOG_LEVEL: 'SILENT' },
      });
      expect(stdout.trim()).toBe('function');
    }, 120_000);
  }
});
