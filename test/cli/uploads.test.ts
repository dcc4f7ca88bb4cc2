/**
 * `benchdrop uploads` against the real API over HTTP (the deployed handler
 * behind the local lab's HTTP server, reading dynalite), the uploads made by
 * the real ingest handler from objects in s3rver: an overwritten key, a deleted
 * one, a file that fails. Each key is said once per line, and no line says
 * `(line 0)`.
 */
import { serveApi, type ServedApi } from '../../harness/api-server.ts';
import '../../harness/quiet.ts';
import type { SQSBatchResponse } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setApiDeps } from '../../functions/api/handler.ts';
import { handler as ingestHandler, setIngestDeps } from '../../functions/ingest/handler.ts';
import { s3EventRecord, sequencerGenerator, sqsEvent, type S3EventName } from '../../infra/local/events.ts';
import type { UploadListing } from '../../shared/api.ts';
import { objectRefOf } from '../../shared/ingest.ts';
import { runCli } from '../../cli/program.ts';
import { startEmulators, type Emulators } from '../../harness/emulators.ts';
import { fixture } from '../support/fixtures.ts';
import { lambdaContext } from '../../harness/lambda.ts';
import { captureOutput } from './fake-api.ts';

const REDUX = fixture('irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt');
const INDY_300G = fixture('irix/irix-6.5-indy-300G-10K.diskperf.txt');
const PROSE = fixture('bad/prose-only.txt');

let env: Emulators;
let served: ServedApi | undefined;
let api: string;
const sequencer = sequencerGenerator(0x3000000000000n);
/** The version each upload was filed under, by name. */
const versions = new Map<string, string>();

async function deliver(key: string, eventName: S3EventName, body?: Buffer): Promise<string> {
  const put = body !== undefined ? await env.put(key, body) : undefined;
  const event = s3EventRecord({
    eventName,
    bucket: env.bucket,
    key,
    ...(put ? { size: put.size, eTag: put.eTag } : {}),
    sequencer: sequencer(),
  });
  expect((await ingestHandler(sqsEvent([event]), lambdaContext())) as SQSBatchResponse).toEqual({
    batchItemFailures: [],
  });
  return objectRefOf(event).version;
}

beforeAll(async () => {
  env = await startEmulators({ maxUploadBytes: 10_000_000 });
  setIngestDeps(env.deps);
  setApiDeps(env.apiDeps);
  versions.set('first', await deliver('sas10k/run1.txt', 'ObjectCreated:Put', INDY_300G));
  versions.set('second', await deliver('sas10k/run1.txt', 'ObjectCreated:Put', REDUX));
  versions.set('notes', await deliver('sas10k/notes.txt', 'ObjectCreated:Put', PROSE));
  versions.set('gone', await deliver('old/run.txt', 'ObjectCreated:Put', REDUX));
  await deliver('old/run.txt', 'ObjectRemoved:Delete');
  served = await serveApi();
  api = served.url;
}, 60_000);

afterAll(async () => {
  setApiDeps(undefined);
  setIngestDeps(undefined);
  await served?.close();
  await env?.stop();
});

async function run(...args: string[]) {
  const output = captureOutput();
  const code = await runCli(['uploads', ...args, '--api', api], output.io, { env: {} });
  return { code, out: output.out, err: output.err, lines: output.out.split('\n') };
}

/** The table's rows as [status, key, outcome], columns split on runs of two spaces. */
const rows = (lines: string[]) =>
  lines
    .slice(1, -1)
    .map((line) => line.split(/ {2,}/))
    .map((cells) => [cells[0], cells[1], cells.at(-1)]);

describe('benchdrop uploads', () => {
  it('lists each key once as it now stands, newest first, and how many', async () => {
    const { code, err, lines } = await run();
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/^status +key +version +updated +outcome$/);
    expect(rows(lines)).toEqual([
      ['deleted', 'old/run.txt', 'the key was deleted; its runs were removed'],
      [
        'failed',
        'sas10k/notes.txt',
        'no diskperf, iostat or fio data in the first 8 lines; expected a diskperf result table, an iostat -x report or a fio output',
      ],
      ['ready', 'sas10k/run1.txt', '1 run'],
    ]);
    expect(lines.at(-1)).toBe('3 uploads');
    for (const line of lines) expect(line).not.toContain('(line 0)');
  });

  it('--history lists every version, the replaced one naming the version that replaced it', async () => {
    const { code, lines } = await run('--history');
    expect(code).toBe(0);
    expect(rows(lines)).toEqual(
      expect.arrayContaining([
        ['replaced', 'sas10k/run1.txt', `replaced by version ${versions.get('second')}`],
        ['ready', 'sas10k/run1.txt', '1 run'],
      ]),
    );
    expect(lines.at(-1)).toBe('4 uploads');
  });

  it('--status filters, --limit pages and says how many more, --json prints the listing', async () => {
    expect(rows((await run('--status', 'failed')).lines)).toEqual([
      ['failed', 'sas10k/notes.txt', expect.stringMatching(/^no diskperf, iostat or fio data/)],
    ]);
    expect((await run('--status', 'replaced')).lines).toEqual([
      'no key is in state replaced: a replaced version is history, --history lists it',
    ]);
    expect(rows((await run('--status', 'replaced', '--history')).lines)).toEqual([
      ['replaced', 'sas10k/run1.txt', expect.stringMatching(/^replaced by version /)],
    ]);
    const limited = await run('--history', '--limit', '1');
    expect(limited.lines.at(-1)).toBe('1 upload shown, 3 more: --limit 4 shows them all');
    const json = JSON.parse((await run('--json', '--status', 'failed')).out) as { uploads: UploadListing[] };
    expect(json.uploads).toEqual([
      expect.objectContaining({
        key: 'sas10k/notes.txt',
        status: 'failed',
        details: expect.stringContaining('sas10k/notes.txt: no diskperf, iostat or fio data'),
      }),
    ]);
    const bad = await run('--status', 'lost');
    expect({ code: bad.code, err: bad.err }).toEqual({
      code: 1,
      err: expect.stringContaining('--status lost: expected one of processing, ready, failed, replaced, deleted'),
    });
  });
});
