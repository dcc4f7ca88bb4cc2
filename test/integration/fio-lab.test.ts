/**
 * fio through the whole pipeline: two constructed sweeps uploaded into a fresh lab
 * (S3 events, queue, ingest handler, DynamoDB) and compared through GET /compare, its
 * CSV, GET /runs/{id} and `benchdrop compare`. Device `fast` does exactly twice the
 * IOPS of `slow` at every point; each has three runs whose noise is the same factors
 * (0.97, 1, 1.04), so the medians keep the ratio at 2 exactly while the runs spread
 * enough for an interval. An output with one sweep written twice is two runs; one
 * whose only job failed, or of more points than a run item holds, ends its upload
 * failed, naming the job's line.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../harness/quiet.ts';
import { runCli } from '../../cli/program.ts';
import { fioJson, type WrittenJob } from '../../harness/fio-output.ts';
import { LAB_BUCKET, startLab, type Lab } from '../../infra/local/lab.ts';
import type { RunDetail, UploadListing } from '../../shared/api.ts';
import { createS3Client } from '../../shared/aws.ts';
import type { Comparison } from '../../shared/comparison/index.ts';
import { LAB_CREDENTIALS } from '../../shared/config.ts';
import { captureOutput } from '../cli/fake-api.ts';

const NOISE = [0.97, 1, 1.04];
const SIZES = [4096, 65_536, 1_048_576];
const DEPTHS = [1, 8, 32];

/** One run of the sweep: random reads and writes at every size and depth, IOPS scaled by `scale`. */
function sweep(scale: number): WrittenJob[] {
  return (['randread', 'randwrite'] as const).flatMap((rw) =>
    DEPTHS.flatMap((iodepth) =>
      SIZES.map((bs) => ({ rw, bs, iodepth, numjobs: 1, iops: (scale * 1000 * iodepth * 65_536) / (bs + 61_440) })),
    ),
  );
}

let dir: string;
let lab: Lab;

async function put(key: string, body: string): Promise<void> {
  const s3 = createS3Client({ s3Endpoint: lab.endpoints.s3Endpoint, credentials: LAB_CREDENTIALS });
  try {
    await s3.send(new PutObjectCommand({ Bucket: LAB_BUCKET, Key: key, Body: body }));
  } finally {
    s3.destroy();
  }
}

/** The upload record of a key (GET /uploads, each key's current state). */
async function uploadOf(key: string): Promise<UploadListing | undefined> {
  const { body } = await get<{ uploads: UploadListing[] }>('/uploads?limit=100');
  return body.uploads.find((u) => u.key === key);
}

async function get<T>(path: string): Promise<{ status: number; body: T; text: string }> {
  const response = await fetch(`${lab.endpoints.apiUrl}${path}`);
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('json') === true;
  return { status: response.status, body: (json ? JSON.parse(text) : undefined) as T, text };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'benchdrop-fio-lab-'));
  lab = await startLab({
    dataDir: join(dir, 'lab'),
    fresh: true,
    samples: false,
    s3Port: 0,
    apiPort: 0,
    log: () => {},
  });
  for (const [r, noise] of NOISE.entries()) {
    await put(`fast/sweep-${r}.json`, fioJson({ jobs: sweep(2 * noise), timestamp: 1_733_220_000 + r * 60 }));
    await put(`slow/sweep-${r}.json`, fioJson({ jobs: sweep(noise), timestamp: 1_733_230_000 + r * 60 }));
  }
  await put('twice/sweep.json', fioJson({ jobs: [...sweep(1), ...sweep(1.1)] }));
  const failed = fioJson({ jobs: [{ rw: 'randread', bs: 4096, iodepth: 1, iops: 1 }] }).replace(
    '"error": 0',
    '"error": 5',
  );
  await put('broken/failed.json', failed);
  const wide = Array.from({ length: 601 }, (_, i) => ({
    rw: 'randread' as const,
    bs: 4096,
    iodepth: i + 1,
    iops: 100,
  }));
  await put('wide/sweep.json', fioJson({ jobs: wide }));
  await lab.idle();
}, 60_000);

afterAll(async () => {
  await lab?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('fio in the lab', () => {
  it('GET /compare pairs the sweeps point by point: 2x, with an interval over the runs', async () => {
    const { status, body: c } = await get<Comparison>('/compare?a=fast&b=slow');
    expect(status).toBe(200);
    expect(c.a.formats).toEqual(['fio']);
    expect(c.a.runs).toBe(3);
    expect(c.metrics).toEqual(['fio_read_bw', 'fio_read_lat', 'fio_write_bw', 'fio_write_lat']);
    // 2 rw x 3 sizes x 3 depths, bandwidth and latency of the direction each measures.
    expect(c.points).toBe(36);
    expect(c.ratio).toBeCloseTo(2, 4);
    expect(c.ci!.label).toBe('95% interval over 3 runs a side');
    expect(c.ci!.low).toBeLessThan(2);
    expect(c.ci!.high).toBeGreaterThan(2);
    expect(c.significant).toBe(true);
    const at = c.rows.find((r) => r.metric === 'fio_read_bw' && r.bs === 65_536 && r.iodepth === 8)!;
    expect(at).toMatchObject({ rw: 'randread', numjobs: 1, point: 'randread bs=65536 iodepth=8 numjobs=1' });
    expect(at.ratio).toBeCloseTo(2, 4);
    expect(at.spread!.a.runs).toBe(3);
    expect(c.warnings).toEqual([]);
    expect(c.sentence).toMatch(/^fast is 2\.00x slow on all \(36 points/);
  });

  it('one metric by name, as CSV: a row per point with its rw, block size, depth and jobs', async () => {
    const { status, text } = await get<never>('/compare?a=fast&b=slow&metric=fio_write_iops&format=csv');
    expect(status).toBe(200);
    const lines = text.split('\r\n');
    expect(lines[0]).toMatch(/^metric,point \(rw bs qd jobs\),A IOPS,A spread,n A,B IOPS,/);
    expect(lines.filter((l) => l.startsWith('fio_write_iops,randwrite '))).toHaveLength(9);
    expect(lines).toContainEqual(expect.stringMatching(/^fio_write_iops,randwrite 1m qd32 nj1,[\d.]+,.*,2\.00x,\[/));
  });

  it('GET /runs/{id} gives a fio run its points and what the output says of itself', async () => {
    const upload = (await uploadOf('fast/sweep-0.json'))!;
    expect(upload).toMatchObject({ status: 'ready', format: 'fio', device: 'fast', runCount: 1 });
    const { body: detail } = await get<RunDetail>(`/runs/${upload.runIds![0]}`);
    expect(detail.run.format).toBe('fio');
    if (detail.run.format !== 'fio') return;
    expect(detail.run.points).toHaveLength(18);
    expect(detail.run.meta).toMatchObject({ version: 'fio-3.36', jobs: 18, options: { ioengine: 'libaio' } });
    expect(detail.run.points[0]).toMatchObject({ point: { rw: 'randread', bs: 4096, iodepth: 1, numjobs: 1 } });
  });

  it('an output holding its sweep twice is two runs of its device', async () => {
    expect(await uploadOf('twice/sweep.json')).toMatchObject({ status: 'ready', runCount: 2 });
    const { body: c } = await get<Comparison>('/compare?a=twice&b=slow&metric=fio_read_iops');
    expect(c.a.runs).toBe(2);
    expect(c.ci).not.toBeNull();
  });

  it('an output whose only job failed ends its upload failed, with the job and its line', async () => {
    const upload = (await uploadOf('broken/failed.json'))!;
    expect(upload.status).toBe('failed');
    expect(upload.message).toMatch(/^line \d+: no job of this fio output measured anything/);
    expect(upload.message).toContain('failed with error 5');
  });

  it('a run of more points than an item holds ends its upload failed at the job of the 601st', async () => {
    const upload = (await uploadOf('wide/sweep.json'))!;
    expect(upload.status).toBe('failed');
    expect(upload.message).toMatch(/^line \d+: 601 points \(rw, bs, iodepth, numjobs\) in one fio run, more than 600/);
  });

  it('benchdrop compare prints the table by point against the lab', async () => {
    const output = captureOutput();
    const code = await runCli(['compare', 'fast', 'slow', '--api', lab.endpoints.apiUrl], output.io, {
      env: {},
      cwd: dir,
    });
    expect(output.err).toBe('');
    expect(code).toBe(0);
    expect(output.out).toContain('point (rw bs qd jobs)');
    expect(output.out).toMatch(/fio_read_bw +randread 4k qd1 nj1 +MiB\/s +[\d.]+ .*2\.00x/);
    expect(output.out).toContain('fast is 2.00x slow on all (36 points');
  });
});
