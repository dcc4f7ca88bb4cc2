/**
 * Stress section "bad input": the whole corpus of test/fixtures/bad/expected.json,
 * the big generated inputs included (a 20 MB single line, a gzip bomb of 1 GiB,
 * an object over the size limit, 100,000 and 10,000 devices), through the real
 * ingest handler against dynalite and s3rver, with good logs in every batch (see
 * test/support/bad-corpus.ts). The lab's limit here is 25 MB, above the 20 MB line
 * so that the line limit is what refuses it. Then the bomb and the long line once
 * more, each alone in its batch, timed.
 */
import '../../harness/quiet.ts';
import type { SQSBatchResponse } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler, setIngestDeps } from '../../functions/ingest/handler.ts';
import { s3EventRecord, sqsEvent } from '../../infra/local/events.ts';
import { objectRefOf } from '../../shared/ingest.ts';
import { runId } from '../../shared/store/keys.ts';
import { samplesKey } from '../../shared/store/samples-schema.ts';
import { readSamplesObject, rowGroupSeries } from '../support/samples.ts';
import { BAD_CORPUS, GENERATORS, runCorpus, type CorpusRun, type Generated } from '../support/bad-corpus.ts';
import { startEmulators, type Emulators } from '../../harness/emulators.ts';
import { lambdaContext } from '../../harness/lambda.ts';
import { recordStressSummary } from '../support/stress-summary.ts';
import { getUpload } from '../../harness/table.ts';

const NOW = '2024-06-01T09:00:00.000Z';
const MAX_UPLOAD_BYTES = 25_000_000;
/** A sample budget the 60,000 samples of the 10,000-device case pass once (the default is far above). */
const BUFFERED_SAMPLES = 50_000;

let env: Emulators;
let run: CorpusRun;
let peakRss = 0;
let ms = 0;

beforeAll(async () => {
  env = await startEmulators({ maxUploadBytes: MAX_UPLOAD_BYTES });
  env.deps.bufferedSamples = BUFFERED_SAMPLES;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  const started = Date.now();
  try {
    run = await runCorpus({ env, cases: BAD_CORPUS, maxUploadBytes: MAX_UPLOAD_BYTES, now: NOW });
  } finally {
    ms = Date.now() - started;
    clearInterval(sampler);
  }
}, 600_000);

afterAll(async () => {
  setIngestDeps(undefined);
  await env?.stop();
});

/** One generated input, alone in its batch: the handler's answer, the record, the time taken. */
async function alone(
  generated: Generated,
): Promise<{ response: SQSBatchResponse; record: Record<string, unknown> | undefined; ms: number; bytes: number }> {
  const body = GENERATORS[generated].make({ maxUploadBytes: MAX_UPLOAD_BYTES });
  const key = `alone/${GENERATORS[generated].fileName}`;
  const put = await env.put(key, body);
  const event = s3EventRecord({
    eventName: 'ObjectCreated:Put',
    bucket: env.bucket,
    key,
    size: put.size,
    eTag: put.eTag,
  });
  setIngestDeps({ ...env.deps, maxUploadBytes: MAX_UPLOAD_BYTES });
  const started = Date.now();
  const response = await handler(sqsEvent([event]), lambdaContext());
  const took = Date.now() - started;
  return {
    response,
    record: await getUpload(env, env.bucket, key, objectRefOf(event).version),
    ms: took,
    bytes: body.length,
  };
}

describe('bad input: the whole corpus', () => {
  it('every case ends as the table says, no retry, no loss, good logs ingested beside them', (context) => {
    const failed = [...run.mismatches].filter(([, m]) => m.length > 0);
    const slowest = Math.max(...run.batches.map((b) => b.ms));
    const slowCases = [...run.batchMs].filter(([, t]) => t === slowest).map(([name]) => name);
    recordStressSummary(context, {
      section: 'bad input',
      cases: BAD_CORPUS.length,
      failures: failed.length + run.goodMismatches.length,
      lost: run.lost.length,
      detail: `${run.good.length} good logs ingested in the same ${run.batches.length} batches, each delivered twice; slowest batch ${(slowest / 1000).toFixed(1)} s (${slowCases.join(', ')}); whole run ${(ms / 1000).toFixed(1)} s; peak RSS ${Math.round(peakRss / 1e6)} MB`,
    });
    expect(Object.fromEntries(failed)).toEqual({});
    expect(run.goodMismatches).toEqual([]);
    expect(run.lost).toEqual([]);
  });

  it('10,000 devices: every sample stored, in partial row groups once 50,000 samples wait, one series each', async () => {
    const d = run.delivered.find((x) => x.case.name === 'devices-10000')!;
    const file = await readSamplesObject(env.s3, env.resultsBucket, samplesKey(runId(env.bucket, d.key, d.version, 0)));
    const groups = rowGroupSeries(file.metadata);
    expect(groups.reduce((a, g) => a + g.rows, 0)).toBe(10_000 * 6);
    for (const g of groups) expect(g.min).toBe(g.max);
    // Six reports of 10,000 devices pass the budget once: each series is written in two row groups, not held whole.
    expect(groups.length).toBe(2 * 10_000);
    expect(BUFFERED_SAMPLES).toBeLessThan(10_000 * 6);
  });

  it('the gzip bomb alone is refused at the limit in seconds, naming the limit', async () => {
    const bomb = await alone('gzip-bomb');
    expect(bomb.bytes).toBeLessThan(5_000_000);
    expect(bomb.response).toEqual({ batchItemFailures: [] });
    expect(bomb.record).toMatchObject({
      status: 'failed',
      line: 0,
      message: expect.stringContaining(`more than ${MAX_UPLOAD_BYTES} bytes after decompression`),
    });
    expect(bomb.ms).toBeLessThan(30_000);
  });

  it('the 20 MB single line alone is refused at line 1 in seconds', async () => {
    const line = await alone('single-line-20mb');
    expect(line.response).toEqual({ batchItemFailures: [] });
    expect(line.record).toMatchObject({
      status: 'failed',
      line: 1,
      message: expect.stringContaining('a line longer than 64 KiB'),
    });
    expect(line.ms).toBeLessThan(10_000);
  });
});
