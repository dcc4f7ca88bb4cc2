/**
 * `npm run bench:cost`: DynamoDB write units and items per ingested file (issue 6,
 * item 4), through the real ingest handler against in-process emulators.
 *
 *   1. start dynalite + s3rver with harness/emulators.ts (the table from
 *      shared/store/table.ts: base table plus the byDevice and byStatus GSIs, both
 *      projecting ALL);
 *   2. wrap the document client's send(): every BatchWrite/Put/Update/Delete gets
 *      ReturnConsumedCapacity 'TOTAL' and the CapacityUnits of each response are
 *      summed (dynalite answers with ConsumedCapacity: ceil(item bytes / 1 KiB) per
 *      item written, the larger of old and new item for a replacement, measured
 *      the way DynamoDB sizes items); every item written is also recorded, to count
 *      items and to estimate GSI writes, which dynalite does not charge;
 *   3. upload each file to s3rver and deliver the S3 notification in a real-shaped
 *      SQS event (infra/local/events.ts) to functions/ingest/handler.ts, as
 *      test/integration/ingest.test.ts does, one file at a time:
 *      (a) the three IRIX Indy diskperf samples (test/fixtures/irix/);
 *      (b) generated Solaris `iostat -xn` logs of 10 devices (harness/logs.ts)
 *          of 1, 10, 50 and 200 MB, written to bench/out/ and uploaded from
 *          there by a multipart upload (a 200 MB log is never held whole);
 *   4. print write units (table, measured by dynalite; GSI, estimated; total) and
 *      items per file and per MB. An iostat run's samples are an object in the
 *      results bucket, not items: the table gets its META, SERIES and TAG
 *      items and the upload record, so the cost per MB falls as the log grows.
 *
 * Target: at every size, iostat writes at most TARGET_SHARE of the
 * BASELINE_WCU_PER_MB the CHUNK items cost (BENCHMARKS.md, before samples
 * moved to S3). 1 MB = 10^6 bytes. Exit 1 when an ingestion does not end `ready`.
 *
 *   npm run bench:cost
 */
import '../shared/node-support-notice.ts';
import '../harness/quiet.ts';
import { closeSync, createReadStream, existsSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { Upload } from '@aws-sdk/lib-storage';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { handler, setIngestDeps } from '../functions/ingest/handler.ts';
import { s3EventRecord, sequencerGenerator, sqsEvent } from '../infra/local/events.ts';
import { objectRefOf } from '../shared/ingest.ts';
import { uploadPk, uploadSk } from '../shared/store/keys.ts';
import { INDEXES } from '../shared/store/table.ts';
import { startEmulators, type Emulators } from '../harness/emulators.ts';
import { lambdaContext } from '../harness/lambda.ts';
import { solarisDevices, solarisIostatLog } from '../harness/logs.ts';
import { untilStored } from '../infra/local/s3rver-writes.ts';
import { OUT_DIR } from './generate.ts';
import { table } from './stats.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MB = 1_000_000;
const DISKPERF = ['irix-6.5-indy-scsi2sd-redux', 'irix-6.5-indy-300G-10K', 'irix-6.5-indy-scsi2sd-10M-sync'].map(
  (name) => join(ROOT, 'test/fixtures/irix', `${name}.diskperf.txt`),
);
const IOSTAT_SIZES_MB = [1, 10, 50, 200];
const IOSTAT_DEVICES = 10;
/** What an iostat MB cost with CHUNK items (table + GSI WCU, BENCHMARKS.md), and the share of it now allowed. */
const BASELINE_WCU_PER_MB = 543;
const TARGET_SHARE = 0.05;
/** Reports written to the log file at a time (about 7 KB each at 10 devices). */
const REPORTS_PER_BLOCK = 2000;

// ---------------------------------------------------------------- item sizes (DynamoDB's rule, approximately)

/** Bytes of a number as DynamoDB stores it: about one byte per two significant digits, plus one. */
function numberBytes(n: number): number {
  const digits = Math.abs(n).toExponential().replace(/e.*$/, '').replace(/[.-]/g, '').replace(/0+$/, '').length || 1;
  return Math.ceil(digits / 2) + 1;
}

/** Bytes of an attribute value: strings and binaries by length, lists and maps 3 + 1 per element + their contents. */
function valueBytes(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number') return numberBytes(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + valueBytes(v), 0);
  if (value instanceof Set) return [...value].reduce((sum: number, v) => sum + valueBytes(v), 0);
  if (typeof value === 'object')
    return 3 + Object.entries(value).reduce((sum, [k, v]) => sum + 1 + Buffer.byteLength(k, 'utf8') + valueBytes(v), 0);
  return 0;
}

/** An item's size: attribute names plus values. */
export function itemBytes(item: Record<string, unknown>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item))
    if (value !== undefined) bytes += Buffer.byteLength(name, 'utf8') + valueBytes(value);
  return bytes;
}

const writeUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

// ---------------------------------------------------------------- the metered client

interface Meter {
  /** CapacityUnits dynalite returned for the base table. */
  tableUnits: number;
  /** Estimated GSI write units (index entries put, replaced or removed). */
  gsiUnits: number;
  /** Our own estimate of the table's units for puts of whole items (cross-check). */
  estimatedTableUnits: number;
  requests: number;
  /** Items put or deleted, by `type`. */
  itemsByType: Map<string, number>;
  /** Distinct keys put. */
  keys: Set<string>;
  /** Write commands that came back without ConsumedCapacity. */
  unmetered: number;
}

const newMeter = (): Meter => ({
  tableUnits: 0,
  gsiUnits: 0,
  estimatedTableUnits: 0,
  requests: 0,
  itemsByType: new Map(),
  keys: new Set(),
  unmetered: 0,
});

type Item = Record<string, unknown>;

/**
 * The items the table holds (as far as this process wrote them), to price index
 * updates: an index entry is written when an item with the index key is put
 * (ceil(size / 1 KiB)), removed when the key goes away, and both when it changes.
 */
class Shadow {
  private items = new Map<string, Item>();

  static key(item: Item): string {
    return `${String(item['pk'])}\u0000${String(item['sk'])}`;
  }

  put(item: Item, meter: Meter): void {
    const old = this.items.get(Shadow.key(item));
    this.items.set(Shadow.key(item), item);
    meter.gsiUnits += indexUnits(old, item);
    meter.estimatedTableUnits += Math.max(writeUnits(itemBytes(item)), old ? writeUnits(itemBytes(old)) : 0);
  }

  delete(key: Item, meter: Meter): void {
    const old = this.items.get(Shadow.key(key));
    this.items.delete(Shadow.key(key));
    meter.gsiUnits += indexUnits(old, undefined);
  }
}

function indexUnits(old: Item | undefined, next: Item | undefined): number {
  let units = 0;
  for (const index of Object.values(INDEXES)) {
    const before =
      old && old[index.partitionKey] !== undefined && old[index.sortKey] !== undefined
        ? `${String(old[index.partitionKey])}\u0000${String(old[index.sortKey])}`
        : undefined;
    const after =
      next && next[index.partitionKey] !== undefined && next[index.sortKey] !== undefined
        ? `${String(next[index.partitionKey])}\u0000${String(next[index.sortKey])}`
        : undefined;
    if (before !== undefined && after !== undefined && before === after)
      units += Math.max(writeUnits(itemBytes(old!)), writeUnits(itemBytes(next!)));
    else {
      if (before !== undefined) units += writeUnits(itemBytes(old!));
      if (after !== undefined) units += writeUnits(itemBytes(next!));
    }
  }
  return units;
}

function countItem(meter: Meter, item: Item): void {
  const type = typeof item['type'] === 'string' ? item['type'] : 'other';
  meter.itemsByType.set(type, (meter.itemsByType.get(type) ?? 0) + 1);
  meter.keys.add(Shadow.key(item));
}

function consumed(output: unknown): number | undefined {
  const c = (output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] } | undefined)
    ?.ConsumedCapacity;
  if (c === undefined) return undefined;
  return (Array.isArray(c) ? c : [c]).reduce((sum, x) => sum + (x.CapacityUnits ?? 0), 0);
}

type BatchRequest = { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } };

/** A BatchWrite's puts and deletes, those DynamoDB left unprocessed aside. */
function recordBatch(command: BatchWriteCommand, output: unknown, shadow: Shadow, meter: Meter): void {
  const left = (output as { UnprocessedItems?: Record<string, BatchRequest[]> }).UnprocessedItems ?? {};
  const unprocessed = new Set(
    Object.values(left)
      .flat()
      .map((r) => Shadow.key((r.PutRequest?.Item ?? r.DeleteRequest?.Key)!)),
  );
  for (const requests of Object.values(command.input.RequestItems ?? {})) {
    for (const r of requests) {
      if (r.PutRequest?.Item && !unprocessed.has(Shadow.key(r.PutRequest.Item))) {
        shadow.put(r.PutRequest.Item, meter);
        countItem(meter, r.PutRequest.Item);
      } else if (r.DeleteRequest?.Key && !unprocessed.has(Shadow.key(r.DeleteRequest.Key)))
        shadow.delete(r.DeleteRequest.Key, meter);
    }
  }
}

/** Wrap env.db.send; `current` is the meter the next writes are charged to. */
function meterClient(env: Emulators, shadow: Shadow): { current: Meter; original: Emulators['db']['send'] } {
  const state = { current: newMeter(), original: env.db.send.bind(env.db) as Emulators['db']['send'] };
  const send = async (command: unknown, ...rest: unknown[]): Promise<unknown> => {
    const isWrite =
      command instanceof BatchWriteCommand ||
      command instanceof PutCommand ||
      command instanceof UpdateCommand ||
      command instanceof DeleteCommand;
    if (!isWrite) return (state.original as (...a: unknown[]) => Promise<unknown>)(command, ...rest);
    const input = (command as { input: Record<string, unknown> }).input;
    input['ReturnConsumedCapacity'] = 'TOTAL';
    const output = await (state.original as (...a: unknown[]) => Promise<unknown>)(command, ...rest);
    const meter = state.current;
    meter.requests++;
    const units = consumed(output);
    if (units === undefined) meter.unmetered++;
    else meter.tableUnits += units;
    if (command instanceof PutCommand) {
      const item = command.input.Item as Item;
      shadow.put(item, meter);
      countItem(meter, item);
    } else if (command instanceof DeleteCommand) {
      shadow.delete(command.input.Key as Item, meter);
    } else if (command instanceof BatchWriteCommand) recordBatch(command, output, shadow, meter);
    // UpdateCommand: dynalite's units cover the table; GSI effects of updates are not estimated
    // (ingesting a new object issues only the `pending` reset on the object item, which no index holds).
    return output;
  };
  (env.db as unknown as { send: unknown }).send = send;
  return state;
}

// ---------------------------------------------------------------- main

interface Row {
  label: string;
  bytes: number;
  meter: Meter;
  status: string;
}

interface Input {
  label: string;
  key: string;
  /** The file uploaded. */
  path: string;
  device: string;
}

/**
 * A Solaris `iostat -xn` log of about targetBytes in bench/out/ (kept for the
 * next run), written a block of reports at a time: the first block carries the
 * command line, each later one only its reports.
 */
function iostatLogFile(targetBytes: number): string {
  const path = join(OUT_DIR, `cost-solaris-${IOSTAT_DEVICES}dev-${targetBytes}B.log`);
  if (existsSync(path) && Math.abs(statSync(path).size - targetBytes) < targetBytes / 100) return path;
  const devices = solarisDevices(IOSTAT_DEVICES);
  // A report's size hardly varies: size one, then generate as many as fit.
  const one =
    Buffer.byteLength(solarisIostatLog({ reports: 101, devices })) -
    Buffer.byteLength(solarisIostatLog({ reports: 1, devices }));
  const reports = Math.max(2, Math.round(targetBytes / (one / 100)));
  const fd = openSync(path, 'w');
  try {
    for (let done = 0; done < reports; done += REPORTS_PER_BLOCK) {
      const text = solarisIostatLog({
        reports: Math.min(REPORTS_PER_BLOCK, reports - done),
        devices,
        host: 'benchhost',
      });
      writeSync(fd, done === 0 ? text : text.slice(text.indexOf('\n') + 1));
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

/** The files ingested: the diskperf fixtures, then the generated iostat logs. */
function costInputs(): Input[] {
  return [
    ...DISKPERF.map((path) => ({
      label: basename(path),
      key: `cost/${basename(path)}`,
      path,
      device: basename(path, '.diskperf.txt'),
    })),
    ...IOSTAT_SIZES_MB.map((mb) => ({
      label: `solaris iostat -xn, ${IOSTAT_DEVICES} devices, ${mb} MB`,
      key: `cost/solaris-${mb}MB.log`,
      path: iostatLogFile(mb * MB),
      device: `solaris-${mb}MB`,
    })),
  ];
}

/** The file into s3rver, streamed (a multipart upload when large); its size and eTag for the event. */
async function uploadFile(env: Emulators, input: Input): Promise<{ eTag: string; size: number }> {
  const size = statSync(input.path).size;
  const done = await new Upload({
    client: env.s3,
    params: {
      Bucket: env.bucket,
      Key: input.key,
      Body: size < 5 * MB ? readFileSync(input.path) : createReadStream(input.path),
      Metadata: { device: input.device },
      ContentType: 'text/plain',
    },
  }).done();
  if (!(await untilStored(env.s3, env.bucket, input.key, size, 60_000)))
    throw new Error(`s3rver does not hold the ${size} bytes of ${input.key}`);
  return { eTag: (done.ETag ?? '').replace(/"/g, ''), size };
}

/** Uploads one file and ingests it with its writes metered; `ready` false when it did not end ready. */
async function ingestMetered(
  env: Emulators,
  metered: ReturnType<typeof meterClient>,
  sequencer: () => string,
  input: Input,
): Promise<{ row: Row; ready: boolean }> {
  const put = await uploadFile(env, input);
  const record = s3EventRecord({
    eventName: 'ObjectCreated:Put',
    bucket: env.bucket,
    key: input.key,
    size: put.size,
    eTag: put.eTag,
    sequencer: sequencer(),
  });
  const meter = newMeter();
  metered.current = meter;
  const started = performance.now();
  const response = await handler(sqsEvent([record]), lambdaContext());
  const seconds = (performance.now() - started) / 1000;
  metered.current = newMeter();
  const version = objectRefOf(record).version;
  const upload = await metered.original(
    new GetCommand({
      TableName: env.tableName,
      Key: { pk: uploadPk(env.bucket, input.key), sk: uploadSk(version) },
    }),
  );
  const status = String((upload.Item as Item | undefined)?.['status'] ?? 'missing');
  const ready = response.batchItemFailures.length === 0 && status === 'ready';
  if (!ready)
    console.log(
      `  ${input.label}: NOT ready (status ${status}, ${response.batchItemFailures.length} batch failure(s)): ` +
        `${String((upload.Item as Item | undefined)?.['message'] ?? '')}`,
    );
  const types = [...meter.itemsByType].map(([t, n]) => `${t} ${n}`).join(', ');
  console.log(
    `  ${input.label}: ${put.size} bytes in ${seconds.toFixed(2)} s; ${meter.requests} write requests, ` +
      `table ${meter.tableUnits} WCU (own estimate ${meter.estimatedTableUnits}), GSI ~${meter.gsiUnits} WCU; ` +
      `items written: ${types}`,
  );
  if (meter.unmetered > 0) console.log(`    note: ${meter.unmetered} write(s) came back without ConsumedCapacity`);
  return { row: { label: input.label, bytes: put.size, meter, status }, ready };
}

const total = (m: Meter) => m.tableUnits + m.gsiUnits;

function printCostTable(rows: Row[]): void {
  const out: string[][] = [
    ['file', 'bytes', 'items', 'table WCU', 'GSI WCU (est.)', 'total WCU', 'WCU / MB', 'items / MB', 'status'],
  ];
  for (const r of rows) {
    const mb = r.bytes / MB;
    const items = r.meter.keys.size;
    const perMb = r.label.includes('iostat');
    out.push([
      r.label,
      String(r.bytes),
      String(items),
      String(r.meter.tableUnits),
      String(r.meter.gsiUnits),
      String(total(r.meter)),
      perMb ? (total(r.meter) / mb).toFixed(1) : '-',
      perMb ? (items / mb).toFixed(1) : '-',
      r.status,
    ]);
  }
  console.log(
    '\nDynamoDB writes per ingested file (table WCU: ConsumedCapacity from dynalite; GSI WCU: ' +
      'estimated from the items written):\n',
  );
  console.log(table(out, (c) => c > 0 && c < 8));
  const diskperf = rows.filter((r) => !r.label.includes('iostat'));
  if (diskperf.length > 0) {
    const mean = (f: (r: Row) => number) => diskperf.reduce((s, r) => s + f(r), 0) / diskperf.length;
    console.log(
      `\ndiskperf: ${mean((r) => total(r.meter)).toFixed(1)} WCU per file on average ` +
        `(table ${mean((r) => r.meter.tableUnits).toFixed(1)}, ` +
        `GSI ${mean((r) => r.meter.gsiUnits).toFixed(1)}), ${mean((r) => r.meter.keys.size).toFixed(1)} items per file`,
    );
  }
}

/**
 * The target for iostat write cost, the same at every size: at most
 * TARGET_SHARE of what CHUNK items cost per MB. Prints each size's figure and
 * verdict; true when every size meets it.
 */
function iostatCostMet(rows: Row[]): boolean {
  const target = TARGET_SHARE * BASELINE_WCU_PER_MB;
  const iostat = rows.filter((r) => r.label.includes('iostat'));
  console.log(
    `\niostat write cost, target at most ${(TARGET_SHARE * 100).toFixed(0)} % of ${BASELINE_WCU_PER_MB} WCU/MB ` +
      `(${target.toFixed(1)} WCU/MB) at every size:`,
  );
  let met = iostat.length === IOSTAT_SIZES_MB.length;
  for (const r of iostat) {
    const perMb = total(r.meter) / (r.bytes / MB);
    const pass = perMb <= target && r.status === 'ready';
    met &&= pass;
    console.log(
      `  ${(r.bytes / MB).toFixed(0).padStart(4)} MB: ${perMb.toFixed(2).padStart(7)} WCU/MB ` +
        `(${((perMb / BASELINE_WCU_PER_MB) * 100).toFixed(2)} % of ${BASELINE_WCU_PER_MB}), ` +
        `${(r.meter.keys.size / (r.bytes / MB)).toFixed(2)} items/MB: ${pass ? 'PASS' : 'FAIL'}`,
    );
  }
  return met;
}

async function main(): Promise<number> {
  const env = await startEmulators({
    maxUploadBytes: 250 * MB,
    tableName: 'benchdrop-cost',
    bucket: 'benchdrop-cost-drop',
  });
  const metered = meterClient(env, new Shadow());
  const sequencer = sequencerGenerator(0x1000000000000n);
  setIngestDeps(env.deps);
  const rows: Row[] = [];
  let failed = false;
  try {
    for (const input of costInputs()) {
      const { row, ready } = await ingestMetered(env, metered, sequencer, input);
      if (!ready) failed = true;
      rows.push(row);
    }
  } finally {
    setIngestDeps(undefined);
    await env.stop();
  }
  printCostTable(rows);
  const met = iostatCostMet(rows);
  const verdict = met
    ? 'all met'
    : `NOT met: iostat writes more than ${TARGET_SHARE * 100} % of ${BASELINE_WCU_PER_MB} WCU/MB at some size`;
  console.log(`\ntargets: ${verdict}`);
  if (failed) console.log('\nbench FAILED: an ingestion did not end ready');
  return failed ? 1 : 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(`bench:cost FAILED: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
}
