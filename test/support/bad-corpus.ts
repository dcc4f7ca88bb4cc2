/**
 * The bad input corpus (test/fixtures/bad/expected.json) sent through the real
 * ingest pipeline: every case is put into s3rver, delivered to the ingest handler
 * in real-shaped SQS batches of ten (seven corpus cases and three good logs from
 * test/fixtures), and its upload record, runs and items are checked against the
 * outcome the table expects. Used by test/integration/bad-corpus.test.ts (the
 * committed and quick cases) and test/stress/bad-input.stress.ts (all of them).
 *
 * The big or pathological inputs are not committed: GENERATORS writes them into a
 * temporary directory at test time, from the parameters documented with each.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { SQSBatchResponse } from 'aws-lambda';
import { expect } from 'vitest';
import * as z from 'zod';
import { handler, setIngestDeps } from '../../functions/ingest/handler.ts';
import { s3EventRecord, sequencerGenerator, sqsEvent } from '../../infra/local/events.ts';
import { objectRefOf, type IngestDeps } from '../../shared/ingest.ts';
import { runId, runPk } from '../../shared/store/keys.ts';
import { runRecord } from '../../shared/store/packing.ts';
import type { RunItem } from '../../shared/store/items.ts';
import type { Emulators } from '../../harness/emulators.ts';
import { lambdaContext } from '../../harness/lambda.ts';
import { solarisDevices, solarisIostatLog } from '../../harness/logs.ts';
import { getCurrent, getUpload, itemsOfKey, jsonBytes, scanAll, type Item } from '../../harness/table.ts';
import { FIXTURE_PLATFORMS } from './fixtures.ts';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');
export const BAD = join(FIXTURES, 'bad');

// ---------------------------------------------------------------- the table

const Warning = z.object({ line: z.number().int().min(0), message: z.string().min(1) }).strict();

const Failed = z
  .object({
    status: z.literal('failed'),
    /** The record's line: 0 when the problem is the file as a whole. */
    line: z.number().int().min(0),
    /** Substrings of the record's message. */
    message: z.array(z.string().min(1)).min(1),
  })
  .strict();

const Ready = z
  .object({
    status: z.literal('ready'),
    runs: z.number().int().min(1),
    /** Every warning of every run, in order (all of them, or the first ones when warningCount is given). */
    warnings: z.array(Warning),
    warningCount: z.number().int().min(0).optional(),
    /** The record's device label. */
    device: z.string().optional(),
    /** Partial run META items, in run order. */
    runItems: z.array(z.record(z.string(), z.unknown())).optional(),
  })
  .strict();

export const GENERATED = [
  'prose-5001-lines',
  'long-line-after-good-lines',
  'diskperf-huge-header',
  'single-line-20mb',
  'gzip-bomb',
  'over-size',
  'devices-100000',
  'devices-10000',
] as const;
export type Generated = (typeof GENERATED)[number];

const BadCase = z
  .object({
    name: z.string().regex(/^[a-z0-9-]+$/),
    /** A committed file, relative to test/fixtures/. */
    file: z.string().optional(),
    generate: z.enum(GENERATED).optional(),
    /** The S3 key (default `<name>/<file name>`), or one of exactly this many UTF-8 bytes. */
    key: z
      .union([z.string().min(1), z.object({ unicodeBytes: z.number().int().min(16).max(1024) }).strict()])
      .optional(),
    /** S3 user metadata as a client sends it (`device`, `tags`). */
    metadata: z.record(z.string(), z.string()).optional(),
    /** Big inputs: only in `npm run test:stress`. */
    stress: z.boolean().optional(),
    expect: z.discriminatedUnion('status', [Failed, Ready]),
  })
  .strict()
  .refine((c) => (c.file === undefined) !== (c.generate === undefined), {
    message: 'a case has either a file or a generator',
  });

export type BadCase = z.infer<typeof BadCase>;

export const BAD_CORPUS: BadCase[] = z
  .object({ about: z.string(), cases: z.array(BadCase) })
  .parse(JSON.parse(readFileSync(join(BAD, 'expected.json'), 'utf8'))).cases;

/** The committed files of test/fixtures/bad/ (everything but the two descriptions). */
export function committedBadFiles(): string[] {
  return readdirSync(BAD)
    .filter((f) => f !== 'README.md' && f !== 'expected.json')
    .sort();
}

// ---------------------------------------------------------------- generated inputs

const X4100 = readFileSync(join(FIXTURES, 'solaris/solaris-10-x4100-sas-maxcontig.iostat.txt'));
const REDUX = readFileSync(join(FIXTURES, 'irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt'), 'utf8');

export interface GenerateContext {
  maxUploadBytes: number;
}

/** How each generated input is made; every one is deterministic. */
export const GENERATORS: Record<Generated, { fileName: string; make(ctx: GenerateContext): Buffer }> = {
  /** 5,001 lines of prose: format detection gives up after 5,000. */
  'prose-5001-lines': {
    fileName: 'notes.txt',
    make: () =>
      Buffer.from(Array.from({ length: 5001 }, (_, i) => `Line ${i + 1} of my notes, with no table in it.\n`).join('')),
  },
  /** The x4100 sample (41 lines), then one line of 1 MiB with no line end. */
  'long-line-after-good-lines': {
    fileName: 'x4100-then-long-line.txt',
    make: () => Buffer.concat([X4100, Buffer.alloc(1024 * 1024, 'x')]),
  },
  /**
   * The redux table with 60 extra header fields `# Remark N : <10,000 x>` after its
   * 12 header lines (lines 13-72): stored as printed, they would outgrow a
   * DynamoDB item (400 KB).
   */
  'diskperf-huge-header': {
    fileName: 'redux-huge-header.diskperf.txt',
    make: () => {
      const lines = REDUX.replace(/\n$/, '').split('\n');
      const remarks = Array.from({ length: 60 }, (_, i) => `# Remark ${i + 1} : ${'x'.repeat(10_000)}`);
      return Buffer.from([...lines.slice(0, 12), ...remarks, ...lines.slice(12)].join('\n') + '\n');
    },
  },
  /** 20,000,000 bytes of `0.1 ` with no line end at all. */
  'single-line-20mb': {
    fileName: 'one-line.txt',
    make: () => Buffer.alloc(20_000_000, '0.1 '),
  },
  /**
   * A valid iostat session that decompresses to 1 GiB from about 2 MB: one gzip
   * member with the command, title and header, then 1,024 identical members of
   * 1 MiB of rows (four devices, so every four rows make a report). gunzip reads
   * concatenated members as one stream, exactly like `cat a.gz b.gz`.
   */
  'gzip-bomb': {
    fileName: 'bomb.iostat.txt.gz',
    make: () => {
      const head = gzipSync(
        'iostat -xn 5 100000\n                    extended device statistics\n    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device\n',
      );
      const rows = solarisDevices(4)
        .map((d) => `    0.0   82.1    0.0 18789.1  1.0 41.0   11.9  499.1  68  99 ${d}\n`)
        .join('');
      const mib = Buffer.alloc(1024 * 1024 - ((1024 * 1024) % rows.length), rows);
      const member = gzipSync(mib, { level: 9 });
      return Buffer.concat([head, ...Array.from({ length: 1024 }, () => member)]);
    },
  },
  /** The x4100 sample repeated to one byte more than the lab's limit. */
  'over-size': {
    fileName: 'x4100-repeated.iostat.txt',
    make: ({ maxUploadBytes }) => {
      const out = Buffer.alloc(maxUploadBytes + 1);
      for (let at = 0; at < out.length; at += X4100.length) X4100.copy(out, at);
      return out;
    },
  },
  /**
   * `iostat -xn 5 2` of a host with 100,000 devices (c1t0d0 ... c6250t15d0): line 1 the
   * command, 2 the title, 3 the header, the rows from line 4, so device 10,001 is on line 10,004.
   */
  'devices-100000': {
    fileName: 'iostat-xn-100000-devices.txt',
    make: () => Buffer.from(solarisIostatLog({ reports: 2, devices: solarisDevices(100_000) })),
  },
  /** Six reports of 10,000 devices: the most one session may have. */
  'devices-10000': {
    fileName: 'iostat-xn-10000-devices.txt',
    make: () => Buffer.from(solarisIostatLog({ reports: 6, devices: solarisDevices(10_000) })),
  },
};

/**
 * A key of exactly `bytes` UTF-8 bytes under `<folder>/`: 2-, 3- and 4-byte
 * characters and ASCII in turn, ending in `.txt`. Folders keep every part under
 * 200 bytes: s3rver stores each part as a file name (at most 255 bytes), a limit
 * of the emulator that real S3 does not have.
 */
export function unicodeKey(folder: string, bytes: number): string {
  const units = ['ä', '€', '𝄞', 'x'];
  let key = `${folder}/`;
  let part = 0;
  for (let i = 0; Buffer.byteLength(key) < bytes - 8; i++) {
    const unit = units[i % units.length]!;
    if (part + Buffer.byteLength(unit) > 190) {
      key += '/';
      part = 0;
    }
    key += unit;
    part += Buffer.byteLength(unit);
  }
  key += 'x'.repeat(bytes - 4 - Buffer.byteLength(key)) + '.txt';
  if (Buffer.byteLength(key) !== bytes)
    throw new Error(`unicodeKey made ${Buffer.byteLength(key)} bytes, not ${bytes}`);
  return key;
}

// ---------------------------------------------------------------- good logs mixed into the batches

export interface GoodLog {
  file: string;
  runs: number;
}

/** Every fixture log with an expected.json beside it, and its run count from there. */
export function goodLogs(): GoodLog[] {
  const logs: GoodLog[] = [];
  for (const platform of FIXTURE_PLATFORMS) {
    for (const name of readdirSync(join(FIXTURES, platform)).sort()) {
      const match = /^(.*)\.expected\.json$/.exec(name);
      if (!match) continue;
      const log = readdirSync(join(FIXTURES, platform)).find(
        (f) => f !== name && f.startsWith(`${match[1]}.`) && !f.endsWith('.expected.json'),
      );
      if (log === undefined) continue;
      const expected = JSON.parse(readFileSync(join(FIXTURES, platform, name), 'utf8')) as { runs?: unknown[] };
      // Fixtures that expect an error are not good logs.
      if (expected.runs === undefined) continue;
      logs.push({ file: `${platform}/${log}`, runs: expected.runs.length });
    }
  }
  return logs;
}

// ---------------------------------------------------------------- the run

export interface CorpusRunOptions {
  env: Emulators;
  cases: readonly BadCase[];
  /** The lab's limit for this run (the handler's deps.maxUploadBytes). */
  maxUploadBytes: number;
  /** Every write of the first delivery carries this time. */
  now: string;
  /** Corpus cases per SQS batch; three good logs join each (ten messages, the stack's batch size). */
  perBatch?: number;
}

export interface Delivered {
  case: BadCase;
  key: string;
  version: string;
  size: number;
  /** Substitutions for placeholders in the case's strings. */
  values: Record<string, string>;
}

export interface GoodDelivered {
  log: GoodLog;
  key: string;
  version: string;
}

export interface BatchResult {
  /** What the handler answered, or the error it threw. */
  response?: SQSBatchResponse;
  thrown?: string;
  /** The same messages delivered again (as SQS would after a visibility timeout). */
  redelivered?: SQSBatchResponse;
  redeliveryThrown?: string;
  ms: number;
}

export interface CorpusRun {
  delivered: Delivered[];
  good: GoodDelivered[];
  batches: BatchResult[];
  /** The whole table after both deliveries. */
  items: Item[];
  /** Checked outcome per corpus case: an empty list when it is as expected. */
  mismatches: Map<string, string[]>;
  goodMismatches: string[];
  /** Cases without a final record (neither ready nor failed). */
  lost: string[];
  /** Milliseconds of the first delivery of the batch each case was in. */
  batchMs: Map<string, number>;
}

const LATER = '2099-01-01T00:00:00.000Z';

/** Upload every case (and good logs), deliver the batches twice, and check every outcome. */
export async function runCorpus(options: CorpusRunOptions): Promise<CorpusRun> {
  const { env, cases, maxUploadBytes, now } = options;
  const perBatch = options.perBatch ?? 7;
  const deps: IngestDeps = { ...env.deps, maxUploadBytes, now: () => now };
  const sequencer = sequencerGenerator(BigInt(Date.now()) << 12n);
  const good = goodLogs();
  const work = mkdtempSync(join(tmpdir(), 'benchdrop-bad-corpus-'));
  const run: CorpusRun = {
    delivered: [],
    good: [],
    batches: [],
    items: [],
    mismatches: new Map(),
    goodMismatches: [],
    lost: [],
    batchMs: new Map(),
  };
  try {
    let goodIndex = 0;
    for (let start = 0; start < cases.length; start += perBatch) {
      const group = cases.slice(start, start + perBatch);
      const events: ReturnType<typeof s3EventRecord>[] = [];
      for (const c of group) {
        const { body, fileName } = inputOf(c, work, maxUploadBytes);
        const key = keyOf(c, fileName);
        const put = await env.put(key, body, c.metadata ? { metadata: c.metadata } : {});
        const event = s3EventRecord({
          eventName: 'ObjectCreated:Put',
          bucket: env.bucket,
          key,
          size: put.size,
          eTag: put.eTag,
          sequencer: sequencer(),
        });
        events.push(event);
        run.delivered.push({
          case: c,
          key,
          version: objectRefOf(event).version,
          size: put.size,
          values: { maxUploadBytes: String(maxUploadBytes), size: String(put.size), now },
        });
      }
      for (let g = 0; g < 3; g++) {
        const log = good[goodIndex++ % good.length]!;
        const key = `good-${start}-${g}/${basename(log.file)}`;
        const put = await env.put(key, readFileSync(join(FIXTURES, log.file)));
        const event = s3EventRecord({
          eventName: 'ObjectCreated:Put',
          bucket: env.bucket,
          key,
          size: put.size,
          eTag: put.eTag,
          sequencer: sequencer(),
        });
        events.push(event);
        run.good.push({ log, key, version: objectRefOf(event).version });
      }
      const messageIds = events.map((_, i) => `corpus-${start}-${i}`);
      const batch: BatchResult = { ms: 0 };
      const started = Date.now();
      setIngestDeps(deps);
      try {
        batch.response = await handler(sqsEvent(events, { messageIds }), lambdaContext());
      } catch (error) {
        batch.thrown = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      }
      batch.ms = Date.now() - started;
      for (const c of group) run.batchMs.set(c.name, batch.ms);
      // Redelivery (receive count 2) at a later time: a finished record must not be written again.
      setIngestDeps({ ...deps, now: () => LATER });
      try {
        batch.redelivered = await handler(sqsEvent(events, { messageIds, receiveCount: 2 }), lambdaContext());
      } catch (error) {
        batch.redeliveryThrown = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      } finally {
        setIngestDeps(undefined);
      }
      run.batches.push(batch);
      for (const c of group) run.mismatches.set(c.name, batchMismatches(batch));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  run.items = await scanAll(env);
  for (const d of run.delivered) {
    const found = await checkCase(env, d, run.items);
    run.mismatches.get(d.case.name)!.push(...found.mismatches);
    if (found.lost) run.lost.push(d.case.name);
  }
  for (const g of run.good) {
    const record = await getUpload(env, env.bucket, g.key, g.version);
    if (record?.['status'] !== 'ready' || record['runCount'] !== g.log.runs) {
      run.goodMismatches.push(
        `${g.log.file}: ${record?.['status']} with ${record?.['runCount']} runs (expected ready with ${g.log.runs}); ${String(record?.['message'] ?? '')}`,
      );
    }
  }
  return run;
}

function inputOf(c: BadCase, work: string, maxUploadBytes: number): { body: Buffer; fileName: string } {
  if (c.file !== undefined) return { body: readFileSync(join(FIXTURES, c.file)), fileName: basename(c.file) };
  const generator = GENERATORS[c.generate!];
  // Into the run's temporary directory (removed at the end), and uploaded from there.
  const path = join(work, generator.fileName);
  writeFileSync(path, generator.make({ maxUploadBytes }));
  return { body: readFileSync(path), fileName: generator.fileName };
}

function keyOf(c: BadCase, fileName: string): string {
  if (c.key === undefined) return `${c.name}/${fileName}`;
  if (typeof c.key === 'string') return c.key;
  return unicodeKey(c.name, c.key.unicodeBytes);
}

function batchMismatches(batch: BatchResult): string[] {
  const out: string[] = [];
  if (batch.thrown !== undefined) out.push(`the handler threw: ${batch.thrown}`);
  if (batch.redeliveryThrown !== undefined) out.push(`the handler threw on redelivery: ${batch.redeliveryThrown}`);
  // A bad file is a permanent failure: no message of the batch may be handed back for a retry.
  if ((batch.response?.batchItemFailures.length ?? 0) > 0)
    out.push(`batch item failures (would be retried): ${JSON.stringify(batch.response!.batchItemFailures)}`);
  if ((batch.redelivered?.batchItemFailures.length ?? 0) > 0)
    out.push(`batch item failures on redelivery: ${JSON.stringify(batch.redelivered!.batchItemFailures)}`);
  return out;
}

const fill = (text: string, values: Record<string, string>) =>
  text.replace(/\{(\w+)\}/g, (all, name: string) => values[name] ?? all);

function fillAll(value: unknown, values: Record<string, string>): unknown {
  if (typeof value === 'string') return fill(value, values);
  if (Array.isArray(value)) return value.map((v) => fillAll(v, values));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillAll(v, values)]));
  return value;
}

/** The parts of `actual` that `pattern` names, for a readable mismatch. */
function project(actual: unknown, pattern: unknown): unknown {
  if (Array.isArray(pattern))
    return Array.isArray(actual) ? actual.map((a, i) => (i < pattern.length ? project(a, pattern[i]) : '...')) : actual;
  if (pattern !== null && typeof pattern === 'object' && actual !== null && typeof actual === 'object') {
    return Object.fromEntries(
      Object.keys(pattern).map((k) => [
        k,
        project((actual as Record<string, unknown>)[k], (pattern as Record<string, unknown>)[k]),
      ]),
    );
  }
  return actual;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** DynamoDB's limits on key attributes (UTF-8 bytes) and whole items. */
const PARTITION_KEY_BYTES = 2048;
const SORT_KEY_BYTES = 1024;
const ITEM_BYTES = 400 * 1024;

/** Key attributes within DynamoDB's limits (dynalite does not check index keys or bytes) and items under 400 KB. */
export function itemLimitMismatches(item: Item): string[] {
  const out: string[] = [];
  for (const [name, limit] of [
    ['pk', PARTITION_KEY_BYTES],
    ['gsi1pk', PARTITION_KEY_BYTES],
    ['gsi2pk', PARTITION_KEY_BYTES],
    ['gsi3pk', PARTITION_KEY_BYTES],
    ['sk', SORT_KEY_BYTES],
    ['gsi1sk', SORT_KEY_BYTES],
    ['gsi2sk', SORT_KEY_BYTES],
    ['gsi3sk', SORT_KEY_BYTES],
  ] as const) {
    const value = item[name];
    if (typeof value === 'string' && Buffer.byteLength(value) > limit)
      out.push(`${item.sk}: ${name} is ${Buffer.byteLength(value)} bytes, DynamoDB allows ${limit}`);
  }
  const size = jsonBytes(item);
  if (size >= ITEM_BYTES) out.push(`${item.sk}: item of ${size} bytes, DynamoDB allows 400 KB`);
  return out;
}

async function checkCase(
  env: Emulators,
  d: Delivered,
  items: Item[],
): Promise<{ mismatches: string[]; lost: boolean }> {
  const out: string[] = [];
  const expected = fillAll(d.case.expect, d.values) as BadCase['expect'];
  const record = await getUpload(env, env.bucket, d.key, d.version);
  const status = record?.['status'];
  if (status !== 'ready' && status !== 'failed')
    return { mismatches: [`no final upload record (status ${String(status)})`], lost: true };
  const message = String(record!['message'] ?? '');
  if (status !== expected.status)
    out.push(`status ${status} (expected ${expected.status})${message ? `: ${message}` : ''}`);
  if (CONTROL.test(message)) out.push(`the message holds control characters: ${JSON.stringify(message)}`);
  if (record!['updatedAt'] !== d.values['now'])
    out.push(`the record was written again on redelivery (updatedAt ${String(record!['updatedAt'])})`);
  const keyItems = await itemsOfKey(env, env.bucket, d.key, 64, items);
  for (const item of keyItems) out.push(...itemLimitMismatches(item));

  if (expected.status === 'failed') {
    if (status !== 'failed') return { mismatches: out, lost: false };
    if (record!['line'] !== expected.line)
      out.push(`line ${String(record!['line'])} (expected ${expected.line}): ${message}`);
    for (const part of expected.message)
      if (!message.includes(part)) out.push(`the message lacks "${part}": ${message}`);
    if (record!['runCount'] !== 0 || (record!['runIds'] as unknown[]).length !== 0)
      out.push('a failed record lists runs');
    const left = keyItems.filter((i) => i.pk !== record!.pk).map((i) => `${i.pk} ${i.sk}`);
    if (left.length > 0) out.push(`a failed upload left items behind: ${left.slice(0, 3).join(', ')}`);
    return { mismatches: out, lost: false };
  }

  if (status !== 'ready') return { mismatches: out, lost: false };
  const runCount = record!['runCount'] as number;
  if (runCount !== expected.runs) out.push(`${runCount} runs (expected ${expected.runs})`);
  const current = await getCurrent(env, env.bucket, d.key);
  if (current?.['version'] !== d.version) out.push('the upload did not become the current version of its key');
  const metas: Item[] = [];
  for (let index = 0; index < runCount; index++) {
    const meta = items.find((i) => i.pk === runPk(runId(env.bucket, d.key, d.version, index)) && i.sk === 'META');
    if (meta === undefined) out.push(`run ${index} has no META item`);
    else metas.push(meta);
  }
  const warnings = metas.flatMap((m) => m['warnings'] as { line: number; message: string }[]);
  for (const w of warnings)
    if (CONTROL.test(w.message))
      out.push(`warning on line ${w.line} holds control characters: ${JSON.stringify(w.message)}`);
  if (record!['warnings'] !== warnings.length)
    out.push(`the record counts ${String(record!['warnings'])} warnings, the runs hold ${warnings.length}`);
  const wantCount = expected.warningCount ?? expected.warnings.length;
  if (warnings.length !== wantCount)
    out.push(`${warnings.length} warnings (expected ${wantCount}): ${JSON.stringify(warnings.slice(0, 5))}`);
  expected.warnings.forEach((want, i) => {
    const got = warnings[i];
    if (got === undefined || got.line !== want.line || !got.message.includes(want.message))
      out.push(`warning ${i}: ${JSON.stringify(got)} (expected line ${want.line} with "${want.message}")`);
  });
  if (expected.device !== undefined && record!['device'] !== expected.device)
    out.push(`device ${JSON.stringify(record!['device'])} (expected ${JSON.stringify(expected.device)})`);
  if (expected.runItems !== undefined) {
    // As readers hand them out: a diskperf table as rows, however it is packed.
    const records = metas.map((m) => runRecord(m as unknown as RunItem));
    try {
      expect(records).toMatchObject(expected.runItems);
    } catch {
      out.push(
        `run items ${JSON.stringify(project(records, expected.runItems))} (expected ${JSON.stringify(expected.runItems)})`,
      );
    }
  }
  return { mismatches: out, lost: false };
}
