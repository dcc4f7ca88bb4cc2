/**
 * `npm run bench:samples`: GET /runs/{id}/samples end to end (issue 17), one
 * series of 10,000 reports of one metric in one answer, against the target
 * "under 200 ms".
 *
 *   1. start the local lab (infra/local/lab.ts: s3rver, dynalite, the lab's
 *      queue and ingest handler, its HTTP front and the API handler) in a
 *      scratch folder;
 *   2. upload a generated Linux sysstat `iostat -x` log of 8 devices and just
 *      over 10,000 reports (bench/generate.ts) into the drop bucket, and wait
 *      for the lab to ingest it: its samples object is in the results bucket;
 *   3. ask GET /runs/{id}/samples?series=D&metric=M&limit=10000 as the CLI asks
 *      an AWS lab (cli/api-client.ts: SigV4-signed, JSON parsed), the series
 *      and the metric turning over each request: first once cold (the footer
 *      read and kept), then `--requests` times (default 40);
 *   4. print the cold time, the median and p95 of the rest, the answer's size,
 *      and PASS/FAIL for p95 under 200 ms.
 *
 * Exit 0 whatever the target says; 1 when a request fails or an answer does
 * not hold 10,000 samples.
 *
 *   npm run bench:samples -- [--requests 40]
 */
import '../shared/node-support-notice.ts';
import '../harness/quiet.ts';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../cli/api-client.ts';
import { LAB_BUCKET, startLab, type Lab } from '../infra/local/lab.ts';
import type { RunDetail, RunSamples, UploadsPage } from '../shared/api.ts';
import { createS3Client } from '../shared/aws.ts';
import { LAB_CREDENTIALS } from '../shared/config.ts';
import { numberArg } from './args.ts';
import { writeIostatLog } from './generate.ts';
import { median, percentile } from './stats.ts';

const DEVICES = 8;
const REPORTS = 10_000;
const TARGET_MS = 200;
/** Metrics asked for in turn: a column read per request, each a different one. */
const METRICS = ['util_pct', 'write_kBps', 'read_iops', 'write_ms', 'active_queue'] as const;
const KEY = 'bench/samples/linux-8-disks.iostat.txt';

/** A log of DEVICES disks and at least REPORTS reports: sized from a small one's bytes per report. */
function writeLog(dir: string): { path: string; reports: number } {
  const probe = join(dir, 'probe.txt');
  const small = writeIostatLog('linux', probe, 200_000, { devices: DEVICES });
  const perReport = statSync(probe).size / small.reports;
  const path = join(dir, 'log.txt');
  const written = writeIostatLog('linux', path, Math.ceil(perReport * (REPORTS + 20)), { devices: DEVICES });
  if (written.reports < REPORTS) throw new Error(`the generated log has ${written.reports} reports, not ${REPORTS}`);
  return { path, reports: written.reports };
}

async function ingest(lab: Lab, path: string): Promise<{ runId: string; seconds: number }> {
  const started = performance.now();
  const s3 = createS3Client({ s3Endpoint: lab.endpoints.s3Endpoint, credentials: LAB_CREDENTIALS });
  await s3.send(new PutObjectCommand({ Bucket: LAB_BUCKET, Key: KEY, Body: readFileSync(path) }));
  await lab.idle();
  s3.destroy();
  const client = apiClient(lab);
  const { uploads } = await client.get<UploadsPage>('/uploads', { limit: 10 });
  const upload = uploads.find((u) => u.key === KEY);
  if (upload?.status !== 'ready') throw new Error(`the log was not ingested: ${JSON.stringify(upload)}`);
  return { runId: upload.runIds[0]!, seconds: (performance.now() - started) / 1000 };
}

/** Signed as for an AWS lab (the lab's front does not check it, but the client pays for it). */
const apiClient = (lab: Lab) =>
  new ApiClient(
    { url: lab.endpoints.apiUrl, sign: true, region: lab.endpoints.region, source: 'bench' },
    { credentials: LAB_CREDENTIALS },
  );

interface Timed {
  ms: number;
  answer: RunSamples;
}

async function timedRequest(client: ApiClient, runId: string, series: string, metric: string): Promise<Timed> {
  const started = performance.now();
  const answer = await client.get<RunSamples>(`/runs/${runId}/samples`, { series, metric, limit: REPORTS });
  const ms = performance.now() - started;
  if (answer.reports.length !== REPORTS || answer.values.length !== REPORTS)
    throw new Error(`${series} ${metric}: ${answer.reports.length} samples, not ${REPORTS}`);
  return { ms, answer };
}

async function main(): Promise<number> {
  const requests = numberArg('--requests', 40, (n) => Number.isInteger(n) && n > 0, 'a whole number above 0');
  const dir = mkdtempSync(join(tmpdir(), 'benchdrop-bench-samples-'));
  let lab: Lab | undefined;
  try {
    const log = writeLog(dir);
    lab = await startLab({
      dataDir: join(dir, 'lab'),
      fresh: true,
      samples: false,
      s3Port: 0,
      apiPort: 0,
      log: () => {},
    });
    const { runId, seconds } = await ingest(lab, log.path);
    console.log(
      `log: ${DEVICES} disks x ${log.reports} reports, ${(statSync(log.path).size / 1e6).toFixed(1)} MB, ` +
        `ingested in ${seconds.toFixed(1)} s (run ${runId})`,
    );
    const client = apiClient(lab);
    const series = (await client.get<RunDetail>(`/runs/${runId}`)).series.map((s) => s.native);
    if (series.length !== DEVICES) throw new Error(`the run has ${series.length} series, not ${DEVICES}`);
    const cold = await timedRequest(client, runId, series[0]!, METRICS[0]);
    const times: number[] = [];
    for (let i = 1; i <= requests; i++)
      times.push((await timedRequest(client, runId, series[i % DEVICES]!, METRICS[i % METRICS.length]!)).ms);
    const p50 = median(times);
    const p95 = percentile(times, 95);
    const bytes = Buffer.byteLength(JSON.stringify(cold.answer));
    console.log(`answer: ${REPORTS} samples of one series and metric, ${(bytes / 1024).toFixed(0)} KiB of JSON`);
    console.log(`cold (footer read): ${cold.ms.toFixed(1)} ms`);
    console.log(`warm, ${requests} requests: median ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`);
    const met = p95 < TARGET_MS;
    console.log(`target p95 under ${TARGET_MS} ms: ${met ? 'PASS' : 'FAIL'}`);
    console.log(`targets: ${met ? 'all met' : `NOT met: samples p95 ${p95.toFixed(0)} ms`}`);
    return 0;
  } finally {
    await lab?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main().catch((error: unknown) => {
  console.error(error);
  return 1;
});
