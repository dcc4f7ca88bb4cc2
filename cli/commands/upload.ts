/**
 * `benchdrop upload FILE... [--device L] [--tag k=v]... [--wait] [--timeout S]`:
 * puts logs into the lab's drop bucket, where the pipeline picks them up.
 *
 * Object keys: `<device>/<file name>` with --device, else `<folder>/<file name>`
 * where <folder> is the name of the directory holding the file
 * (`logs/sas10k/run1.txt` -> `sas10k/run1.txt`); the file's own name is kept as
 * is. The key's first folder is what labels the runs when there is no `device`
 * metadata (README, "Upload conventions"), so both forms label the runs the same way.
 * Two files mapping to one key are refused before anything is sent.
 *
 * Metadata: `device` (with --device) and `tags` (`k=v;k=v`, checked with the
 * pipeline's own parser before any upload). Each file goes up with lib-storage's
 * Upload (multipart above 8 MiB, 4 parts in flight), with a progress bar per file
 * on a terminal and one line per file otherwise.
 *
 * --wait polls GET /uploads?history=true every second until each uploaded
 * version's newest record is settled: `ready`, `failed`, `deleted`, or
 * `replaced` by a newer upload (or --timeout seconds pass, DEFAULT_TIMEOUT_S by default); the
 * exit code is 1 if any upload, ingestion or wait failed. Each outcome is one
 * line saying the key once (cli/commands/uploads.ts outcomeLine).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Client } from '@aws-sdk/client-s3';
import cliProgress from 'cli-progress';
import { MAX_PAGE, type UploadListing } from '../../shared/api.ts';
import { createS3Client } from '../../shared/aws.ts';
import { cleanLabel, formatTags, parseTags } from '../../shared/labels.ts';
import { ApiClient } from '../api-client.ts';
import { plural } from '../../shared/comparison/format.ts';
import { announceTarget, guarded, type CliDeps } from '../context.ts';
import { DEFAULT_TIMEOUT_S } from '../defaults.ts';
import { CliError, type Output } from '../io.ts';
import { Target, type BucketTarget, type TargetFlags } from '../target.ts';
import { outcomeLine } from './uploads.ts';

export const PART_SIZE = 8 * 1024 * 1024;
export const QUEUE_SIZE = 4;
/** Unversioned buckets: records updated this long before our upload started still count (clock skew). */
const CLOCK_SKEW_MS = 1_000;

export interface UploadOptions extends TargetFlags {
  device?: string;
  tag?: string[];
  wait?: boolean;
  timeout?: string | number;
}

export interface UploadDeps extends CliDeps {
  /** An S3 client to use instead of one made from the target (it is not destroyed). */
  s3?: S3Client;
}

interface Planned {
  file: string;
  key: string;
  size: number;
}

interface Uploaded extends Planned {
  bucket: string;
  versionId?: string;
  eTag?: string;
  startedAt: number;
}

/** The object key for a file: `<device or the file's folder>/<file name>`. */
export function objectKey(file: string, device?: string): string {
  const name = basename(file);
  const folder = device ?? basename(dirname(resolve(file)));
  return folder ? `${folder}/${name}` : name;
}

export function uploadCommand(
  files: readonly string[],
  options: UploadOptions,
  io: Output,
  deps: UploadDeps = {},
): Promise<number> {
  return guarded(io, async () => {
    // Everything that can be checked is checked before the first byte leaves.
    const { device, metadata, timeoutS } = checkedOptions(options);
    if (files.length === 0) throw new CliError('no file to upload');
    const planned = await planUploads(files, device);

    const target = new Target(options, deps);
    const bucket = await target.bucket();
    // Find the API before uploading, so a missing one fails first.
    const api = options.wait ? new ApiClient(await target.api(), deps) : undefined;
    announceTarget(target, io);

    const s3 =
      deps.s3 ??
      createS3Client({
        ...(bucket.region ? { region: bucket.region } : {}),
        ...(bucket.endpoint ? { s3Endpoint: bucket.endpoint } : {}),
        ...(bucket.credentials ? { credentials: bucket.credentials } : {}),
      });
    let uploaded: Uploaded[];
    let failures: number;
    try {
      ({ uploaded, failures } = sayOutcomes(await uploadAll(s3, bucket, planned, metadata, io), bucket, io));
    } finally {
      if (!deps.s3) s3.destroy();
    }

    if (api && uploaded.length > 0)
      failures += await waitForIngest(api, uploaded, timeoutS, io, deps.pollIntervalMs ?? 1000);
    if (failures > 0 && files.length > 1) io.err(`${plural(failures, 'file')} of ${files.length} did not make it`);
    return failures === 0 ? 0 : 1;
  });
}

/** The flags checked: the device label, the S3 metadata (device, tags) and --timeout in seconds. */
function checkedOptions(options: UploadOptions): {
  device: string | undefined;
  metadata: Record<string, string>;
  timeoutS: number;
} {
  const tags = parseTags((options.tag ?? []).join(';'));
  const device = options.device === undefined ? undefined : cleanLabel(options.device);
  if (options.device !== undefined && device === undefined) throw new CliError('--device is empty');
  if (device !== undefined && !/^[\x20-\x7e]+$/.test(device))
    throw new CliError(`--device "${device}": S3 metadata takes printable ASCII only`);
  const timeoutS = options.timeout === undefined ? DEFAULT_TIMEOUT_S : Number(options.timeout);
  if (!(timeoutS > 0 && Number.isFinite(timeoutS)))
    throw new CliError(`--timeout ${options.timeout}: expected a number of seconds above 0`);
  const metadata: Record<string, string> = {};
  if (device !== undefined) metadata['device'] = device;
  const tagText = formatTags(tags);
  if (tagText) metadata['tags'] = tagText;
  return { device, metadata, timeoutS };
}

/** Each file with its key and size; refused when one is not a regular file or two would share a key. */
async function planUploads(files: readonly string[], device: string | undefined): Promise<Planned[]> {
  const planned: Planned[] = [];
  const byKey = new Map<string, string>();
  for (const file of files) {
    const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
      throw new CliError(`${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
    });
    if (!info.isFile()) throw new CliError(`${file}: not a regular file`);
    const key = objectKey(file, device);
    const other = byKey.get(key);
    if (other !== undefined)
      throw new CliError(
        `${other} and ${file} would both be uploaded as ${key}; upload them separately with different --device labels`,
      );
    byKey.set(key, file);
    planned.push({ file, key, size: info.size });
  }
  return planned;
}

type Outcome = Uploaded | (Planned & { error: string });

/** One line per file, uploaded on stdout or failed on stderr; what went up, and how many did not. */
function sayOutcomes(
  results: readonly Outcome[],
  bucket: BucketTarget,
  io: Output,
): { uploaded: Uploaded[]; failures: number } {
  const uploaded: Uploaded[] = [];
  let failures = 0;
  for (const r of results) {
    if ('error' in r) {
      failures++;
      io.err(`error: ${r.file}: upload to s3://${bucket.bucket}/${r.key} failed: ${r.error}`);
    } else {
      uploaded.push(r);
      io.out(`uploaded ${r.file} -> s3://${bucket.bucket}/${r.key} (${humanBytes(r.size)})`);
    }
  }
  return { uploaded, failures };
}

/** A progress bar per file on a terminal; none otherwise. */
function progressBars(io: Output): cliProgress.MultiBar | undefined {
  if (io.progress?.isTTY !== true) return undefined;
  return new cliProgress.MultiBar(
    {
      stream: io.progress,
      format: '{bar} {percentage}% | {done} of {size} | {key}',
      hideCursor: true,
      clearOnComplete: false,
      autopadding: true,
    },
    cliProgress.Presets.shades_classic,
  );
}

async function uploadAll(
  s3: S3Client,
  bucket: BucketTarget,
  planned: readonly Planned[],
  metadata: Record<string, string>,
  io: Output,
): Promise<Outcome[]> {
  const bars = progressBars(io);
  const outcomes: Outcome[] = [];
  try {
    for (const p of planned) {
      const bar = bars?.create(Math.max(p.size, 1), 0, { key: p.key, done: humanBytes(0), size: humanBytes(p.size) });
      outcomes.push(await uploadOne(s3, bucket, p, metadata, bar));
    }
  } finally {
    bars?.stop();
  }
  return outcomes;
}

/** One file through lib-storage's Upload (multipart above PART_SIZE), its bar kept up to date. */
async function uploadOne(
  s3: S3Client,
  bucket: BucketTarget,
  p: Planned,
  metadata: Record<string, string>,
  bar: cliProgress.SingleBar | undefined,
): Promise<Outcome> {
  const startedAt = Date.now();
  try {
    const upload = new Upload({
      client: s3,
      queueSize: QUEUE_SIZE,
      partSize: PART_SIZE,
      leavePartsOnError: false,
      params: {
        Bucket: bucket.bucket,
        Key: p.key,
        Body: createReadStream(p.file),
        ContentType: /\.gz$/i.test(p.file) ? 'application/gzip' : 'text/plain',
        ...(Object.keys(metadata).length ? { Metadata: metadata } : {}),
      },
    });
    upload.on('httpUploadProgress', (progress) => {
      const loaded = Math.min(progress.loaded ?? 0, p.size);
      bar?.update(Math.max(loaded, 0), { done: humanBytes(loaded) });
    });
    const result = await upload.done();
    bar?.update(Math.max(p.size, 1), { done: humanBytes(p.size) });
    const eTag = result.ETag?.replace(/"/g, '');
    return {
      ...p,
      bucket: bucket.bucket,
      startedAt,
      ...(result.VersionId ? { versionId: result.VersionId } : {}),
      ...(eTag ? { eTag } : {}),
    };
  } catch (error) {
    return { ...p, error: s3Message(error, bucket) };
  }
}

function s3Message(error: unknown, bucket: BucketTarget): string {
  const e = error as Error & { code?: string; cause?: { code?: string } };
  const code = e.cause?.code ?? e.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND')
    return `could not reach ${bucket.endpoint ?? 'S3'} (${code}); is the lab running?`;
  if (e.name === 'NoSuchBucket') return `bucket ${bucket.bucket} (from ${bucket.source}) does not exist`;
  return `${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e.message}`;
}

/**
 * The newest record of one uploaded object version, if the API lists it yet.
 * Unversioned, a record touched since the upload counts, but not one replaced
 * by another such record: that is the key's older version, settled by this upload.
 */
export function recordFor(
  u: Pick<Uploaded, 'bucket' | 'key' | 'versionId' | 'startedAt'>,
  uploads: readonly UploadListing[],
): UploadListing | undefined {
  const mine = uploads.filter((r) => {
    if (r.bucket !== u.bucket || r.key !== u.key) return false;
    // A versioned bucket names the version; otherwise only records touched since this upload count.
    if (u.versionId !== undefined) return r.version === u.versionId;
    return Date.parse(r.updatedAt) >= u.startedAt - CLOCK_SKEW_MS;
  });
  const replacedByMine = (r: UploadListing) =>
    r.replacedBy !== undefined && mine.some((other) => other.version === r.replacedBy);
  return mine
    .filter((r) => u.versionId !== undefined || !replacedByMine(r))
    .sort((x, y) => Date.parse(y.updatedAt) - Date.parse(x.updatedAt))[0];
}

async function waitForIngest(
  api: ApiClient,
  uploaded: readonly Uploaded[],
  timeoutS: number,
  io: Output,
  pollMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutS * 1000;
  const pending = new Map(uploaded.map((u) => [u.key, u]));
  const lastSeen = new Map<string, string>();
  let failures = 0;
  for (;;) {
    // Every version's record: the one uploaded may not be its key's current state (a newer one
    // replaced it, or it failed).
    const { uploads } = await api.get<{ uploads: UploadListing[] }>('/uploads', { limit: MAX_PAGE, history: 'true' });
    for (const [key, u] of pending) {
      const record = recordFor(u, uploads ?? []);
      if (!record) continue;
      lastSeen.set(key, record.status);
      if (record.status === 'processing') continue;
      io.out(outcomeLine(record));
      if (record.status === 'failed' || record.status === 'deleted') failures++;
      pending.delete(key);
    }
    if (pending.size === 0) return failures;
    const left = deadline - Date.now();
    if (left <= 0) break;
    await new Promise((r) => setTimeout(r, Math.min(pollMs, left)));
  }
  for (const key of pending.keys()) {
    const status = lastSeen.get(key);
    io.out(
      `timed out ${key}: ${status ? `still ${status}` : 'no upload record yet'} after ${timeoutS} s ` +
        '(the pipeline may still finish it; raise --timeout to wait longer)',
    );
    failures++;
  }
  return failures;
}

export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}
