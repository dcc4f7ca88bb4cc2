/**
 * `--max-series-per-file`: parsed by the options npm start and `benchdrop lab`
 * share, carried by main.ts's runLab to the ingest handler's deps. Shown with the
 * lab in this process: a limit of 1 fails a two-disk iostat log with the reason.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Command } from 'commander';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAB_CREDENTIALS } from '../../../shared/config.ts';
import { type Lab } from '../../../infra/local/lab.ts';
import { runLab } from '../../../infra/local/main.ts';
import { labOptions, type LabCommandOptions } from '../../../infra/local/options.ts';
import type { UploadListing } from '../../../shared/api.ts';
import { createS3Client } from '../../../shared/aws.ts';
import { LAB_DEFAULTS } from '../../../shared/config.ts';
import { solarisIostatLog } from '../../../harness/logs.ts';

const parse = (args: string[]) =>
  labOptions(new Command('lab').exitOverride().configureOutput({ writeErr: () => {} }))
    .parse(args, { from: 'user' })
    .opts<LabCommandOptions>();

let scratch: string;
let lab: Lab | undefined;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'benchdrop-options-'));
});
afterAll(async () => {
  await lab?.stop();
  await rm(scratch, { recursive: true, force: true });
});

describe('--max-series-per-file', () => {
  it('defaults to the lab default and takes only a positive whole number', () => {
    expect(parse([]).maxSeriesPerFile).toBe(LAB_DEFAULTS.maxSeriesPerFile);
    expect(parse(['--max-series-per-file', '5']).maxSeriesPerFile).toBe(5);
    for (const bad of ['0', '-1', '2.5', 'many'])
      expect(() => parse(['--max-series-per-file', bad]), bad).toThrow(/not a positive whole number/);
  });

  it('reaches ingestion: a file with more series fails, saying so', async () => {
    const options = parse([
      '--data',
      join(scratch, 'lab'),
      '--no-samples',
      '--s3-port',
      '0',
      '--api-port',
      '0',
      '--max-series-per-file',
      '1',
    ]);
    lab = await runLab(options, () => {});
    const s3 = createS3Client({
      region: 'us-east-1',
      s3Endpoint: lab.endpoints.s3Endpoint,
      credentials: LAB_CREDENTIALS,
    });
    try {
      await s3.send(
        new PutObjectCommand({
          Bucket: lab.endpoints.bucket,
          Key: 'two-disks/run.txt',
          Body: solarisIostatLog({ reports: 3, devices: ['c0t0d0', 'c0t1d0'] }),
        }),
      );
    } finally {
      s3.destroy();
    }
    await lab.idle();
    const listed = (await (await fetch(`${lab.endpoints.apiUrl}/uploads`)).json()) as { uploads: UploadListing[] };
    expect(listed.uploads.find((u) => u.key === 'two-disks/run.txt')).toMatchObject({
      status: 'failed',
      message: expect.stringContaining('at most 1 series a file'),
    });
  });
});
