/**
 * GET /uploads: the byStatus index, newest update first; without a status every
 * status merged, each read from the cursor's sort key on; each key's current
 * state (its current-status partitions) or, for history, its past ones too.
 * The records are shown as UploadListing, field by field.
 */
import type { UploadListing, UploadsPage } from '../api.ts';
import { decodeCursor, encodeCursor, stringField, type ListingQuery } from '../store/cursors.ts';
import { CURRENT_STATUSES, PAST_STATUSES, statusPartition, type UploadRecord } from '../store/items.ts';
import { statusRecords } from '../store/reads.ts';
import type { ReadStore } from '../store/store.ts';
import { UPLOAD_STATUSES, type UploadStatus } from '../upload-status.ts';
import { isSortKeyText, limitOf, PageFill, type PageRequest } from './pages.ts';

export interface UploadsRequest extends PageRequest {
  status?: UploadStatus;
  /** Every version's record; without it, each key's current state. */
  history?: boolean;
}

interface UploadsPosition {
  /** The byStatus sort key of the last record of the page before. */
  after: string;
}

const readUploadsPosition = (p: unknown): UploadsPosition | undefined => {
  const after = stringField(p, 'after');
  return isSortKeyText(after) ? { after } : undefined;
};

/**
 * The byStatus partitions a listing reads. A key's current state is the
 * current-status partitions alone, kept so as records change (store/uploads.ts
 * settleVersions): one Query a status, with no per-key reads or filtering.
 */
function uploadPartitions(request: Partial<UploadsRequest>): string[] {
  const statuses = request.status ? [request.status] : [...UPLOAD_STATUSES];
  const current = statuses
    .filter((s) => (CURRENT_STATUSES as readonly string[]).includes(s))
    .map((s) => statusPartition(s, true));
  const past = request.history
    ? statuses.filter((s) => (PAST_STATUSES as readonly string[]).includes(s)).map((s) => statusPartition(s, false))
    : [];
  return [...current, ...past];
}

/** One page of upload records, most recently updated first: each key's current state, or (history) every version. */
export async function pageUploads(store: ReadStore, request: Partial<UploadsRequest> = {}): Promise<UploadsPage> {
  const query: ListingQuery = { status: request.status, ...(request.history ? { history: 'true' } : {}) };
  const from =
    request.next !== undefined ? decodeCursor('uploads', query, request.next, readUploadsPosition) : undefined;
  const limit = limitOf(request);
  const perPartition = await Promise.all(
    uploadPartitions(request).map((partition) => statusRecords(store, partition, limit + 1, from?.after)),
  );
  // In DynamoDB's order (UTF-8 bytes), newest first: the cursor's `gsi2sk < after` goes on in that order.
  const records = perPartition
    .flat()
    .sort((x, y) => Buffer.compare(Buffer.from(y.gsi2sk, 'utf8'), Buffer.from(x.gsi2sk, 'utf8')));
  const fill = new PageFill<UploadListing>(limit);
  let last: string | undefined;
  for (const r of records) {
    if (!fill.add(uploadListing(r))) break;
    last = r.gsi2sk;
  }
  const more = fill.items.length < records.length;
  return {
    uploads: fill.items,
    ...(more ? { next: encodeCursor('uploads', query, { after: last! } satisfies UploadsPosition) } : {}),
  };
}

/** The first page of upload records (tests and tools). */
export async function listUploads(store: ReadStore, request: Partial<UploadsRequest> = {}): Promise<UploadListing[]> {
  return (await pageUploads(store, request)).uploads;
}

function uploadListing(r: UploadRecord): UploadListing {
  return {
    bucket: r.bucket,
    key: r.key,
    version: r.version,
    status: r.status,
    runCount: r.runCount ?? 0,
    runIds: r.runIds ?? [],
    ...(r.message !== undefined ? { message: r.message } : {}),
    ...(r.line !== undefined ? { line: r.line } : {}),
    ...(r.details !== undefined ? { details: r.details } : {}),
    ...(r.replacedBy !== undefined ? { replacedBy: r.replacedBy } : {}),
    ...(r.device !== undefined ? { device: r.device } : {}),
    ...(r.format !== undefined ? { format: r.format } : {}),
    updatedAt: r.updatedAt,
  };
}
