/**
 * The Lambda bundles as the stack builds them (infra/bundling.ts, the settings
 * NodejsFunction gets): self-contained, the AWS SDK included, so each loads in a
 * fresh node from a directory with no node_modules, as it runs from /var/task;
 * and a source map beside each that maps back to the project's code; the
 * ingest function's samples encoder thread runs from the bundle packaged beside it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules, SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { CREDENTIAL_PROVIDERS_UNUSED_IN_LAMBDA, lambdaEsbuildOptions } from '../../infra/bundling.ts';
import { parquetReadObjects } from 'hyparquet';
import { bundleEncoderWorker } from '../../infra/encoder-worker.ts';
import { ENV } from '../../shared/config.ts';
import { ENCODER_WORKER } from '../../shared/store/samples-encoder.ts';
import { SAMPLE_METRICS, samplesDecompressors } from '../../shared/store/samples-schema.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HANDLERS = {
  ingest: 'functions/ingest/handler.ts',
  api: 'functions/api/handler.ts',
  'dead-letter': 'functions/dead-letter/handler.ts',
  sweeper: 'functions/sweeper/handler.ts',
} as const;
const work = mkdtempSync(join(tmpdir(), 'benchdrop-bundling-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const isBuiltin = (path: string) => path.startsWith('node:') || builtinModules.includes(path);
const run = promisify(execFile);

describe('Lambda bundles', () => {
  for (const [name, entry] of Object.entries(HANDLERS)) {
    it(`${name}: includes the AWS SDK, loads with no node_modules in sight, and has a map back to its sources`, async () => {
      const dir = join(work, name);
      const outfile = join(dir, 'index.mjs');
      const result = await build({
        ...lambdaEsbuildOptions(),
        entryPoints: [join(ROOT, entry)],
        outfile,
        absWorkingDir: ROOT,
        metafile: true,
        logLevel: 'silent',
      });

      // Statically, only Node's built-ins; dynamically, at most the credential providers Lambda never needs.
      const imports = Object.values(result.metafile.outputs).flatMap((output) =>
        output.imports.filter((i) => i.external),
      );
      expect(imports.filter((i) => i.kind !== 'dynamic-import' && !isBuiltin(i.path))).toEqual([]);
      expect(
        imports.filter((i) => !isBuiltin(i.path)).every((i) => CREDENTIAL_PROVIDERS_UNUSED_IN_LAMBDA.includes(i.path)),
      ).toBe(true);
      expect(
        Object.keys(result.metafile.inputs).some((input) => input.includes('node_modules/@aws-sdk/client-dynamodb/')),
      ).toBe(true);

      // The map shipped beside it leads a stack trace back to the project's .ts files.
      const map = new SourceMap(JSON.parse(readFileSync(`${outfile}.map`, 'utf8')) as SourceMapPayload);
      const lines = readFileSync(outfile, 'utf8').split('\n');
      const sources = new Set<string>();
      for (let line = 0; line < lines.length; line++) {
        for (let column = 0; column < lines[line]!.length; column += 997) {
          const source = (map.findEntry(line, column) as { originalSource?: string }).originalSource;
          if (source !== undefined && !source.includes('node_modules'))
            sources.add(relative(ROOT, resolve(dir, source)));
        }
      }
      expect([...sources].some((s) => s.startsWith(entry.split('/').slice(0, 2).join('/')))).toBe(true);
      expect([...sources].some((s) => s.startsWith('shared/'))).toBe(true);

      // A fresh node, run from the bundle's directory (tmpdir: no node_modules above it).
      const probe = `const m = await import(${JSON.stringify(pathToFileURL(outfile).href)}); console.log(typeof m.handler);`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe], {
        cwd: dir,
        env: {
          PATH: process.env['PATH'],
          AWS_REGION: 'us-east-1',
          [ENV.tableName]: 'table',
          [ENV.bucketName]: 'bucket',
          POWERTOOLS_LOG_LEVEL: 'SILENT',
        },
      });
      expect(stdout.trim()).toBe('function');
    }, 120_000);
  }

  it('ingest: the samples encoder thread runs from its own bundle beside the handler, with no node_modules', async () => {
    const dir = join(work, 'encoder');
    await build({
      ...lambdaEsbuildOptions(),
      entryPoints: [join(ROOT, 'test/support/encoder-probe.ts')],
      outfile: join(dir, 'index.mjs'),
      absWorkingDir: ROOT,
      logLevel: 'silent',
    });
    const worker = await bundleEncoderWorker(dir);
    expect(worker).toBe(join(dir, `${ENCODER_WORKER}.mjs`));
    const { stdout } = await run(process.execPath, [join(dir, 'index.mjs')], {
      cwd: dir,
      env: { PATH: process.env['PATH'] },
    });
    const bytes = Buffer.from(stdout, 'base64');
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const rows = await parquetReadObjects({ file, compressors: samplesDecompressors });
    expect(rows.map((r) => [r['series'], r['report'], r['line'], r['since_boot'], r[SAMPLE_METRICS[0]!]])).toEqual([
      ['sda', 0, 3, true, 1.5],
      ['sda', 1, 5, false, 2.5],
      ['sda', 2, 7, false, 3.5],
    ]);
    expect(rows.every((r) => Number.isNaN(r[SAMPLE_METRICS[1]!]))).toBe(true);
  }, 120_000);
});
