/**
 * `npm start` and `benchdrop lab`: start the local lab, ingest the demo logs, print
 * where everything is and what to paste next, and stop cleanly on Ctrl-C/SIGTERM.
 */
import '../../shared/node-support-notice.ts';
import './env.ts';
import { Command } from 'commander';
import { LAB_CREDENTIALS } from '../../shared/config.ts';
import { LAB_BUCKET, startLab, type Lab } from './lab.ts';
import { labOptions, type LabCommandOptions } from './options.ts';

export async function runLab(
  options: LabCommandOptions,
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<Lab> {
  const started = Date.now();
  const lab = await startLab({
    dataDir: options.data,
    fresh: options.fresh === true,
    samples: options.samples,
    s3Port: options.s3Port,
    apiPort: options.apiPort,
    host: options.host,
    allowNonLoopback: options.allowNonLoopback === true,
    maxSeriesPerFile: options.maxSeriesPerFile,
    log: out,
  });
  await lab.idle();
  const e = lab.endpoints;
  const dead = lab.queue.deadLetters.length;
  out(
    `benchdrop lab ready in ${((Date.now() - started) / 1000).toFixed(1)} s (data in ${e.dataDir}; ` +
      `endpoints in ${e.dataDir}/lab.json)`,
  );
  out(
    `  S3 endpoint  ${e.s3Endpoint}  bucket ${e.bucket}  ` +
      `(credentials ${LAB_CREDENTIALS.accessKeyId} / ${LAB_CREDENTIALS.secretAccessKey}, region ${e.region})`,
  );
  out(`  API          ${e.apiUrl}`);
  out(`  report page  ${e.reportUrl}`);
  if (dead > 0) out(`  ${dead} message(s) in the dead-letter list: see ${e.dataDir}/dead-letters.jsonl`);
  out('');
  out('Upload a log with the AWS CLI (a small log is ingested within a second; GET /uploads tells when):');
  out(
    `  AWS_ACCESS_KEY_ID=${LAB_CREDENTIALS.accessKeyId} AWS_SECRET_ACCESS_KEY=${LAB_CREDENTIALS.secretAccessKey} ` +
      `aws --endpoint-url ${e.s3Endpoint} --region ${e.region} ` +
      `s3 cp FILE s3://${LAB_BUCKET}/mydisk/FILE --metadata device=mydisk`,
  );
  out('See what was ingested, and compare two devices:');
  out(`  curl '${e.apiUrl}/uploads'`);
  out(`  curl '${e.apiUrl}/compare?a=scsi2sd_redux&b=scsi2sd_10M_Sync&metric=all'`);
  out(`  curl '${e.apiUrl}/compare?a=nvme-ssd&b=sata-ssd'      # the demo's fio sweeps, by block size and queue depth`);
  out('Stop with Ctrl-C; a second start on the same data folder finds everything still there.');
  return lab;
}

/** Stop on Ctrl-C or SIGTERM, once, waiting for the batch in flight. */
export function stopOnSignals(lab: Lab, out: (line: string) => void): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    out(`\n${signal}: stopping the lab...`);
    lab.stop().then(
      () => {
        out('stopped; nothing lost.');
        process.exit(0);
      },
      (error: unknown) => {
        out(`error while stopping: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (invokedDirectly) {
  const program = labOptions(new Command('benchdrop-lab').description('the whole benchdrop pipeline on this machine'));
  program.parse(process.argv);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  runLab(program.opts<LabCommandOptions>(), out).then(
    (lab) => stopOnSignals(lab, out),
    (error: unknown) => {
      process.stderr.write(`benchdrop lab: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}
