/**
 * `benchdrop devices` and `benchdrop runs` against the real API over HTTP: the
 * deployed handler (functions/api/handler.ts) behind the local lab's HTTP server
 * (infra/local/http.ts), reading dynalite, with more labels than one page holds.
 * The CLI follows `next`: devices lists every label, runs as many as --limit
 * asks for, and says how many more there are past it.
 */
import { serveApi, type ServedApi } from '../../harness/api-server.ts';
import '../../harness/quiet.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SQSBatchResponse } from 'aws-lambda';
import { handler as apiHandler, setApiDeps } from '../../functions/api/handler.ts';
import { handler as ingestHandler, setIngestDeps } from '../../functions/ingest/handler.ts';
import { s3EventRecord, sequencerGenerator, sqsEvent } from '../../infra/local/events.ts';
import type { ApiHandler } from '../../infra/local/http.ts';
import type { DeviceEntry, RunListing } from '../../shared/api.ts';
import type { DiskperfRun, IostatRun } from '../../shared/model.ts';
import { parseText } from '../../shared/parsers/index.ts';
import { BatchWriter } from '../../shared/store/batch.ts';
import { runId } from '../../shared/store/keys.ts';
import { deviceItem, runTagItems } from '../../shared/store/items.ts';
import { diskperfRunItem, iostatRunItem } from '../../shared/store/run-items.ts';
import { runCli } from '../../cli/program.ts';
import { startEmulators, type Emulators } from '../../harness/emulators.ts';
import { fixture } from '../support/fixtures.ts';
import { lambdaContext } from '../../harness/lambda.ts';
import { captureOutput } from './fake-api.ts';

/** More labels than one page of GET /devices (1,000) or of GET /runs holds; one diskperf run each. */
const LABELS = Array.from({ length: 1234 }, (_, i) => `lab-${String(i).padStart(4, '0')}`);

let env: Emulators;
let served: ServedApi | undefined;
let api: string;
/** The query strings the API was asked with, per path. */
const asked: { path: string; query: URLSearchParams }[] = [];

beforeAll(async () => {
  env = await startEmulators();
  const template = (
    await parseText(fixture('irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt').toString('utf8'), 'redux.txt')
  ).runs[0] as DiskperfRun;
  const writer = new BatchWriter(env.db, env.tableName);
  LABELS.forEach((label, n) => {
    const key = `${label}/redux.txt`;
    const source = { bucket: env.bucket, key, version: 'v1' };
    const ingestedAt = new Date(Date.UTC(2031, 0, 1) + n * 1000).toISOString();
    writer.put(
      diskperfRunItem(template, { runId: runId(env.bucket, key, 'v1', 0), label, tags: {}, source, ingestedAt }),
    );
    writer.put(deviceItem(label, 'diskperf', ingestedAt, 'v1'));
  });
  await writer.flush();
  setApiDeps(env.apiDeps);
  const recording: ApiHandler = (event, context) => {
    asked.push({ path: event.rawPath, query: new URLSearchParams(event.rawQueryString) });
    return (apiHandler as ApiHandler)(event, context);
  };
  served = await serveApi(recording);
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
  asked.length = 0;
  const code = await runCli([...args, '--api', api], output.io, { env: {} });
  return { code, out: output.out, err: output.err, lines: output.out.split('\n') };
}

describe('benchdrop devices', () => {
  it('lists every label, page after page, and how many', async () => {
    const { code, err, lines } = await run('devices');
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/^label +format +last seen$/);
    expect(lines.slice(1, -1).map((l) => l.split(/\s+/)[0])).toEqual(LABELS);
    expect(lines.at(-1)).toBe('1234 devices');
    // Two pages of the largest size: the second asked for with the first's next.
    expect(asked.map((a) => [a.path, a.query.get('limit'), a.query.has('next')])).toEqual([
      ['/devices', '1000', false],
      ['/devices', '1000', true],
    ]);
  });

  it('--json holds every label, as GET /devices pages them', async () => {
    const { code, out } = await run('devices', '--json');
    expect(code).toBe(0);
    const body = JSON.parse(out) as { devices: DeviceEntry[]; next?: string };
    expect(body.devices.map((d) => d.label)).toEqual(LABELS);
    expect(body.next).toBeUndefined();
  });
});

describe('benchdrop runs', () => {
  const idsOf = (lines: string[]) => lines.slice(1, -1).map((l) => l.split(/\s+/)[0]);

  it('without a device: the first 100 of runs over more than 1,000 labels, and how many more the next page holds', async () => {
    const { code, err, lines } = await run('runs');
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(idsOf(lines)).toHaveLength(100);
    expect(lines.slice(1, -1).map((l) => l.split(/\s+/)[1])).toEqual(LABELS.slice(0, 100));
    // The count is the next page's (one request): across labels a page stops at the labels it may read, so "at least".
    const [, more] =
      /^100 runs shown, at least (\d+) more: --limit (\d+) shows \1 of them, --device or --format narrows the list$/.exec(
        lines.at(-1)!,
      ) ?? [];
    expect(Number(more)).toBeGreaterThan(0);
    expect(lines.at(-1)).toContain(`--limit ${100 + Number(more)} shows`);
    // The 100 (one page, or more when a busy table made a page short), then one page of up to 1,000 counted.
    expect(asked[0]!.query.get('limit')).toBe('100');
    expect(asked[0]!.query.has('next')).toBe(false);
    expect(asked.slice(1).every((a) => a.query.has('next'))).toBe(true);
    expect(asked.at(-1)!.query.get('limit')).toBe('1000');
  });

  it('--limit past one page: every run, each once, and no "more"', async () => {
    const { code, lines } = await run('runs', '--limit', '5000');
    expect(code).toBe(0);
    const ids = idsOf(lines);
    expect(ids).toHaveLength(LABELS.length);
    expect(new Set(ids).size).toBe(LABELS.length);
    expect(lines.at(-1)).toBe('1234 runs');
    // Page after page, each asking for at most 1,000 and going on from the one before.
    expect(asked.length).toBeGreaterThan(1);
    expect(asked.every((a) => a.path === '/runs' && Number(a.query.get('limit')) <= 1000)).toBe(true);
    expect(asked.slice(1).every((a) => a.query.has('next'))).toBe(true);
  });

  it('says exactly how many more when they fit one more page', async () => {
    const { code, lines } = await run('runs', '--device', 'lab-000*', '--limit', '4');
    expect(code).toBe(0);
    expect(lines.slice(1, -1).map((l) => l.split(/\s+/)[1])).toEqual(LABELS.slice(0, 4));
    expect(lines.at(-1)).toBe('4 runs shown, 6 more: --limit 10 shows them all');
    expect((await run('runs', '--device', 'lab-000*', '--limit', '10')).lines.at(-1)).toBe('10 runs');
    // An exact label lists its runs whole: one run here, and nothing more.
    expect((await run('runs', '--device', 'lab-0007')).lines.slice(1)).toEqual([
      expect.stringMatching(/^r[0-9a-f]{24} +lab-0007 +diskperf /),
      '1 run',
    ]);
  });

  it('--json gives the runs and the next of the API, which goes on after them', async () => {
    const { code, out } = await run('runs', '--device', 'lab-01*', '--limit', '3', '--json');
    expect(code).toBe(0);
    const body = JSON.parse(out) as { runs: RunListing[]; next: string };
    expect(body.runs.map((r) => r.device)).toEqual(LABELS.slice(100, 103));
    const rest = (await (
      await fetch(`${api}/runs?${new URLSearchParams({ device: 'lab-01*', limit: '2', next: body.next })}`)
    ).json()) as { runs: RunListing[] };
    expect(rest.runs.map((r) => r.device)).toEqual(LABELS.slice(103, 105));
  });

  it('refuses a --limit that is not a whole number of runs, before asking the API', async () => {
    const { code, err } = await run('runs', '--limit', '0');
    expect(code).toBe(1);
    expect(err).toBe('error: --limit 0: expected a whole number of runs, 1 or more');
    expect(asked).toEqual([]);
  });
});

describe('benchdrop runs on real uploads', () => {
  // A table of its own: the paging tests above count every run of theirs.
  const table = 'real-uploads';
  const sequencer = sequencerGenerator(0x3000000000000n);
  const X4100_KEY = 'x4100/solaris-10-x4100-sas-maxcontig.iostat.txt';

  /** Puts the object in s3rver and runs the ingest handler on its S3 event, as the lab does. */
  async function ingest(key: string, body: Uint8Array, metadata: Record<string, string> = {}): Promise<void> {
    const put = await env.put(key, body, { metadata });
    const event = s3EventRecord({
      eventName: 'ObjectCreated:Put',
      bucket: env.bucket,
      key,
      size: put.size,
      eTag: put.eTag,
      sequencer: sequencer(),
    });
    expect((await ingestHandler(sqsEvent([event]), lambdaContext())) as SQSBatchResponse).toEqual({
      batchItemFailures: [],
    });
  }

  beforeAll(async () => {
    await env.createTable(table);
    setIngestDeps({ ...env.deps, tableName: table });
    await ingest(X4100_KEY, fixture('solaris/solaris-10-x4100-sas-maxcontig.iostat.txt'), {
      tags: 'interface=SAS;rpm=10000',
    });
    await ingest('fedora/linux.txt', fixture('linux/linux-sysstat-12.5.4-x.txt'), { device: 'fedora' });
    await ingest('irix-indy-scsi2sd-redux.diskperf.txt', fixture('irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt'));
    // A Solaris -T u log (epoch stamps, so UTC), its run built by the store's record builder from the parsed samples.
    const text = fixture('solaris/solaris-10-xn-Tu.iostat.txt').toString('utf8');
    const run = (await parseText(text, 'tu.txt')).runs[0] as IostatRun;
    const key = 'tu/tu.txt';
    const items = iostatRunItem(run, {
      runId: runId(env.bucket, key, 'v1', 0),
      label: 'tu',
      tags: {},
      source: { bucket: env.bucket, key, version: 'v1' },
      ingestedAt: '2031-01-01T00:00:00.000Z',
    });
    const writer = new BatchWriter(env.db, table);
    for (const item of [...items.series, ...runTagItems(items.run), items.run]) writer.put(item);
    for (const label of ['tu', ...items.seriesLabels])
      writer.put(deviceItem(label, 'iostat', items.run.ingestedAt, 'v1'));
    await writer.flush();
    setApiDeps({ ...env.apiDeps, tableName: table });
  }, 60_000);

  afterAll(() => {
    setApiDeps(env.apiDeps);
    setIngestDeps(env.deps);
  });

  /** The table's rows by column name (the header's words; "run id" is `id`). */
  const rowsOf = (lines: string[]) => {
    const header = lines[0]!;
    const starts = ['run id', 'device', 'format', 'host', 'measured', 'context', 'tags', 'key'].map((name) =>
      header.indexOf(name),
    );
    expect(starts.every((start, i) => start >= 0 && (i === 0 || start > starts[i - 1]!))).toBe(true);
    return lines.slice(1, -1).map((line) => {
      const cells = starts.map((start, i) => line.slice(start, starts[i + 1]).trim());
      const [id, device, format, host, measured, context, tags, key] = cells as [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      return { id, device, format, host, measured, context, tags, key };
    });
  };

  it("a row per run, counted as runs: a 5-disk iostat upload of 4 runs is 4 rows, with host, samples' time range, context and tags", async () => {
    const { code, err, lines } = await run('runs');
    expect(err).toBe('');
    expect(code).toBe(0);
    const rows = rowsOf(lines);
    // 4 x4100 runs, the Linux run, the diskperf run and the -T u run.
    expect(rows).toHaveLength(7);
    expect(lines.at(-1)).toBe('7 runs');
    expect(new Set(rows.map((r) => r.id)).size).toBe(7);

    const x4100 = rows.filter((r) => r.key === X4100_KEY);
    expect(x4100.map((r) => r.device)).toEqual(Array(4).fill('x4100 (5 disks)'));
    // The context lines typed before each run, and the upload's tags.
    expect(x4100.map((r) => r.context).sort()).toEqual([
      'tunefs -a 1 /opt',
      'tunefs -a 16 /opt',
      'tunefs -a 32 /opt; dd if=/dev/zero of=/…',
      'tunefs -a 8 /opt',
    ]);
    expect(x4100.every((r) => r.tags === 'interface=SAS,rpm=10000' && r.format === 'iostat')).toBe(true);
    // Solaris iostat -xnz prints no host and no times: said as unknown, not filled with the ingest time.
    expect(x4100.every((r) => r.host === '-' && r.measured === '-')).toBe(true);

    // The host from the Linux banner, `Linux 5.15.0-91-generic (myhost) ...`.
    expect(rows.find((r) => r.key === 'fedora/linux.txt')).toMatchObject({
      device: 'fedora (3 disks)',
      host: 'myhost',
      tags: '-',
    });
    // diskperf: the header's date, which IRIX prints without a zone.
    expect(rows.find((r) => r.device === 'scsi2sd_redux')).toMatchObject({
      host: 'IRIS',
      measured: '2020-04-03 21:10:13 local',
      context: 'diskperf -W -n scsi2sd_redux -c 1G -t 6…',
    });
    // Epoch stamps are UTC: the first and last report, marked so.
    expect(rows.find((r) => r.key === 'tu/tu.txt')).toMatchObject({
      device: 'tu (2 disks)',
      measured: '2014-03-06 10:00:00–10:00:10 UTC',
      context: 'iostat -xn -T u 5 3',
    });
  });

  it('--json carries the same, in full: host, context, tags and the time range in ISO 8601', async () => {
    const { code, out } = await run('runs', '--device', 'tu', '--json');
    expect(code).toBe(0);
    const [tu] = (JSON.parse(out) as { runs: RunListing[] }).runs;
    expect(tu).toMatchObject({
      device: 'tu',
      from: '2014-03-06T10:00:00Z',
      to: '2014-03-06T10:00:10Z',
      reports: 3,
      disks: 2,
      context: ['iostat -xn -T u 5 3'],
    });
  });

  it('disk labels named by a pattern: a row per disk, and the count says how many runs they are', async () => {
    const { code, lines } = await run('runs', '--device', 'x4100/*');
    expect(code).toBe(0);
    const rows = rowsOf(lines);
    expect(rows).toHaveLength(20);
    expect(new Set(rows.map((r) => r.device))).toEqual(
      new Set(['d10', 'd11', 'd12', 'c0t0d0', 'c0t1d0'].map((d) => `x4100/${d}`)),
    );
    expect(lines.at(-1)).toBe('20 rows: 4 runs, a row per disk');
    // One disk named: one row per run again.
    expect((await run('runs', '--device', 'x4100/c0t0d0')).lines.at(-1)).toBe('4 runs');
  });
});
