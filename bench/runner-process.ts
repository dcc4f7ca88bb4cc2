/**
 * The ingest path alone, as a Lambda runs it: bench/ingest-runner.ts bundled as
 * the stack bundles the functions (infra/bundling.ts: the SDK inside, minified;
 * target this machine's Node) and run as a plain `node` process against the
 * lab's S3 and a table of its own in the lab's DynamoDB, once per S3 record.
 */
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { lambdaEsbuildOptions } from '../infra/bundling.ts';
import { bundleEncoderWorker } from '../infra/encoder-worker.ts';
import type { S3EventRecordInput } from '../infra/local/events.ts';
import { LAB_CREDENTIALS } from '../shared/config.ts';
import { type LabEndpoints } from '../infra/local/lab.ts';
import { createLocalTable } from '../infra/local/table.ts';

/** Where the runner reads and writes: the lab's endpoints, or the test emulators'. */
export type RunnerEndpoints = Pick<LabEndpoints, 'region' | 's3Endpoint' | 'dynamodbEndpoint' | 'resultsBucket'>;
import { ENV } from '../shared/config.ts';
import { clientEnv } from '../harness/processes.ts';
import { OUT_DIR } from './generate.ts';
import type { RunnerResult } from './ingest-runner.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface RunnerRun {
  result: RunnerResult;
  /** Spawn to exit. */
  processMs: number;
}

/** The runner bundle's path, built now. */
export async function bundleIngestRunner(): Promise<string> {
  const options = { ...lambdaEsbuildOptions(), target: 'node20' };
  // The samples encoder's thread, beside the runner as beside the ingest function.
  await bundleEncoderWorker(OUT_DIR, options);
  await build({
    ...options,
    entryPoints: [{ in: join(ROOT, 'bench/ingest-runner.ts'), out: 'ingest-runner' }],
    outdir: OUT_DIR,
    outExtension: { '.js': '.mjs' },
    logLevel: 'warning',
  });
  return join(OUT_DIR, 'ingest-runner.mjs');
}

/** A table of the runner's own in the lab's DynamoDB (kept if it exists). */
export function createRunnerTable(endpoints: RunnerEndpoints, tableName: string): Promise<void> {
  return createLocalTable(tableName, {
    region: endpoints.region,
    endpoint: endpoints.dynamodbEndpoint,
    credentials: LAB_CREDENTIALS,
    keepExisting: true,
  });
}

/** One invocation of the ingest handler in its own process; throws with its output when it fails. */
export async function runIngestRunner(
  bundle: string,
  scratch: string,
  endpoints: RunnerEndpoints,
  tableName: string,
  record: S3EventRecordInput,
  extraEnv: Record<string, string> = {},
): Promise<RunnerRun> {
  const env = clientEnv(scratch, {
    AWS_ACCESS_KEY_ID: LAB_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LAB_CREDENTIALS.secretAccessKey,
    AWS_REGION: endpoints.region,
    [ENV.tableName]: tableName,
    [ENV.resultsBucket]: endpoints.resultsBucket,
    [ENV.s3Endpoint]: endpoints.s3Endpoint,
    [ENV.dynamodbEndpoint]: endpoints.dynamodbEndpoint,
    POWERTOOLS_LOG_LEVEL: 'WARN',
    POWERTOOLS_METRICS_DISABLED: 'true',
    ...extraEnv,
  });
  // The measured process must not inherit a loader from tsx.
  delete env['NODE_OPTIONS'];
  const spawned = performance.now();
  const child = spawn(process.execPath, [bundle, JSON.stringify(record)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const code = await new Promise<number | null>((resolvePromise, reject) => {
    child.once('error', reject);
    child.once('close', resolvePromise);
  });
  const processMs = performance.now() - spawned;
  const last = stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || !last.startsWith('{'))
    throw new Error(`the ingest runner exited with ${code}:\n${(stderr || stdout).trim().slice(-3000)}`);
  const result = JSON.parse(last) as RunnerResult;
  if (result.execArgv.length > 0)
    throw new Error(`the ingest runner ran with node flags ${result.execArgv.join(' ')}: its RSS would include them`);
  if (result.batchItemFailures > 0)
    throw new Error(`the ingest handler reported a batch failure:\n${stderr.trim().slice(-3000)}`);
  return { result, processMs };
}
