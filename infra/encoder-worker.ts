/**
 * Bundles the samples encoder's thread (shared/store/samples-encoder-worker.ts)
 * into the ingest function's package, beside its index.mjs, where
 * samples-encoder.ts starts it from. Run by the ingest function's bundling,
 * after esbuild: `tsx infra/encoder-worker.ts <outputDir>`; bench/lambda.ts and
 * the bundling test build it the same way.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { ENCODER_WORKER } from '../shared/store/samples-encoder.ts';
import { lambdaEsbuildOptions } from './bundling.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const ENCODER_WORKER_ENTRY = `shared/store/${ENCODER_WORKER}.ts`;

/** The command the bundling runs, from the project root `inputDir` into `outputDir`. */
export function encoderWorkerCommand(inputDir: string, outputDir: string): string {
  return `cd "${inputDir}" && node_modules/.bin/tsx infra/encoder-worker.ts "${outputDir}"`;
}

/** Write `<ENCODER_WORKER>.mjs` (and its map) into outputDir; the file written. */
export async function bundleEncoderWorker(
  outputDir: string,
  options: BuildOptions = lambdaEsbuildOptions(),
): Promise<string> {
  const outfile = join(outputDir, `${ENCODER_WORKER}.mjs`);
  await build({
    ...options,
    entryPoints: [join(ROOT, ENCODER_WORKER_ENTRY)],
    outfile,
    absWorkingDir: ROOT,
    logLevel: 'warning',
  });
  return outfile;
}

const target = process.argv[2];
if (target !== undefined && import.meta.url.endsWith(process.argv[1]!.replace(/\\/g, '/'))) {
  await bundleEncoderWorker(target);
}
