/**
 * The ingest path alone, as a Lambda runs it: bundled by bench/ingest.ts into
 * bench/out/ingest-runner.mjs and run as a plain `node` process (no loader, so its
 * peak RSS is the handler's and not tsx's). It imports functions/ingest/handler.ts,
 * which builds its clients from the environment exactly as in AWS
 * (BENCHDROP_TABLE, BENCHDROP_S3_ENDPOINT, BENCHDROP_DYNAMODB_ENDPOINT, the AWS_*
 * credentials), and invokes it once with a real-shaped SQS event
 * (infra/local/events.ts) holding the S3 record given as JSON in argv[2].
 *
 * Prints one JSON line: the handler's batch failures, its wall time and CPU time,
 * the peak RSS of this process (VmHWM) and the RSS sampled every 100 ms.
 */
import { handler } from '../functions/ingest/handler.ts';
import { s3EventRecord, sqsEvent, type S3EventRecordInput } from '../infra/local/events.ts';
import { lambdaContext } from '../harness/lambda.ts';
import { peakRss, type PeakRss } from './peak-rss.ts';

export interface RunnerResult {
  done: true;
  /** Wall time of the invocation. */
  ms: number;
  /** CPU time of this process during the invocation (user + system). */
  cpuMs: number;
  batchItemFailures: number;
  rss: PeakRss;
  /** VmRSS in KiB, sampled every RSS_SAMPLE_MS while the handler ran. */
  rssSamplesKiB: number[];
  /** Node flags of this process: empty when no loader is involved. */
  execArgv: string[];
}

export const RSS_SAMPLE_MS = 100;

function currentRssKiB(): number {
  return Math.round(process.memoryUsage.rss() / 1024);
}

const input = JSON.parse(process.argv[2] ?? '') as S3EventRecordInput;
const rssSamplesKiB: number[] = [];
const sampler = setInterval(() => rssSamplesKiB.push(currentRssKiB()), RSS_SAMPLE_MS);
const started = performance.now();
const cpuBefore = process.cpuUsage();
const response = await handler(sqsEvent([s3EventRecord(input)]), lambdaContext('benchdrop-ingest', 900_000));
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
clearInterval(sampler);
const result: RunnerResult = {
  done: true,
  ms,
  cpuMs: (cpu.user + cpu.system) / 1000,
  batchItemFailures: response.batchItemFailures.length,
  rss: peakRss(),
  rssSamplesKiB,
  execArgv: process.execArgv,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
