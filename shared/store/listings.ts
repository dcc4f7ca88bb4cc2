/**
 * The paged listings of the API: device labels, runs, upload records. Each
 * answers one page, at most `limit` items and at most MAX_PAGE_BYTES of them,
 * and a `next` cursor (shared/store/cursors.ts) when there may be more; each
 * page is bounded reads, whatever the table holds.
 *
 * - Devices: the DEVICES partition in label order, `limit` + 1 labels from the
 *   cursor's label on (one Query): the one more says whether there is a next page.
 * - Uploads: the byStatus index, newest update first; without a status every
 *   status merged, each read from the cursor's sort key on; each key's current
 *   state (its STATUS# partitions) or, for history, its PAST partitions too.
 * - Runs: one exact label (its runs newest first, as before paging), or, for a
 *   pattern or no device, label after label in label order (the DEVICES
 *   partition, under the pattern's literal prefix), each label's runs newest
 *   first. A page reads at most LIST_LABELS_SCANNED DEVICES entries and
 *   LIST_INDEX_QUERIES byDevice pages, for at most LIST_READ_MS, so it may stop
 *   short (even empty) with a `next` that goes on from the label it reached: no
 *   number of labels is too many. Each run is listed once: a diskperf run
 *   under its label, an iostat run under its upload's label (its META is
 *   indexed there), its series skipped. Only where the request names disk
 *   labels and not the upload's (`x4100/*`, `x4100/sda`) is an iostat run
 *   listed by its series, once per disk named; a series counts only when its
 *   run's META exists (half-written runs are never listed). A listing shows
 *   what the META holds: host, context, tags, the samples' time range.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DeviceEntry, DevicesPage, RunFacts, RunListing, RunSource, RunsPage, UploadListing, UploadsPage } from '../api.ts';
import { FORBIDDEN_IN_LABELS } from '../labels.ts';
import type { Format } from '../model.ts';
import { globMatches, MAX_PATTERN_LENGTH, parsePattern, type Pattern } from '../selectors.ts';
import { INDEXES } from '../table.ts';
import { decodeCursor, encodeCursor, stringField, type ListingQuery } from './cursors.ts';
import { devicePk, DEVICES_PK, MAX_SORT_KEY_BYTES } from './keys.ts';
import { DEFAULT_PAGE, MAX_PAGE, MAX_PAGE_BYTES } from './pages.ts';
import { CURRENT_STATUSES, PAST_STATUSES, statusPartition, UPLOAD_STATUSES, type ObjectRef, type UploadRecord, type UploadStatus } from './records.ts';
import { CONCURRENCY, queryItems, ReadSession, type IndexedItem, type ReadStore, type RunHead } from './session.ts';

/** What a page is asked for: its size, and the cursor of the page before (none: the first page). */
export interface PageRequest {
  limit: number;
  next?: string;
}

/** DEVICES entries one page of GET /runs may read (a pattern's labels are filtered from them). */
export const LIST_LABELS_SCANNED = 10_000;
/** byDevice pages one page of GET /runs may read (labels started together are each read once beyond it). */
export const LIST_INDEX_QUERIES = 160;
/**
 * How long a page of GET /runs across labels goes on starting reads: past it,
 * the page ends where it got to (a busy table makes pages shorter, never slow).
 */
export const LIST_READ_MS = 400;
/** DEVICES entries one Query of them reads while a page of runs looks for labels. */
const LABELS_PER_QUERY = 1000;
/** The largest Limit a later byDevice page of one label is read with (the first asks for just what the page needs). */
const MAX_ENTRIES_PER_QUERY = 1000;

// ---------------------------------------------------------------- pages

/**
 * The items of one page: at most `limit`, and at most MAX_PAGE_BYTES of JSON.
 * The first item always goes in (an item is at most one DynamoDB item, 400 KB),
 * so every page moves on.
 */
class PageFill<T> {
  readonly items: T[] = [];
  private bytes = 0;
  /** Set once an item did not fit: nothing more goes in, even a smaller one (the page keeps the listing's order). */
  private closed = false;

  constructor(readonly limit: number) {}

  /** Adds the item; false, and nothing added, when the page is full by count or size. */
  add(item: T): boolean {
    if (this.full) return false;
    const size = Buffer.byteLength(JSON.stringify(item), 'utf8') + 1;
    if (this.items.length > 0 && this.bytes + size > MAX_PAGE_BYTES) {
      this.closed = true;
      return false;
    }
    this.items.push(item);
    this.bytes += size;
    return true;
  }

  get full(): boolean {
    return this.closed || this.items.length >= this.limit;
  }

  /** How many more items could go in by count. */
  get room(): number {
    return this.full ? 0 : this.limit - this.items.length;
  }
}

const limitOf = (request: Partial<PageRequest>) => request.limit ?? DEFAULT_PAGE;

/** A label a cursor may hold: what a DEVICES entry's sort key can be. */
const isLabelText = (text: string | undefined): text is string => text !== undefined && text.length > 0 && text.length <= MAX_PATTERN_LENGTH && !FORBIDDEN_IN_LABELS.test(text);
/** An index sort key a cursor may hold (only ever compared with, in a partition the code chose). */
const isSortKeyText = (text: string | undefined): text is string => text !== undefined && text.length > 0 && Buffer.byteLength(text, 'utf8') <= MAX_SORT_KEY_BYTES;

// ---------------------------------------------------------------- devices

interface DevicesPosition {
  /** The last label of the page before. */
  after: string;
}

const readDevicesPosition = (p: unknown): DevicesPosition | undefined => {
  const after = stringField(p, 'after');
  return isLabelText(after) ? { after } : undefined;
};

/** One page of device labels, in label order. */
export async function pageDevices(store: ReadStore, request: Partial<PageRequest> = {}): Promise<DevicesPage> {
  const query: ListingQuery = {};
  const from = request.next !== undefined ? decodeCursor('devices', query, request.next, readDevicesPosition) : undefined;
  const limit = limitOf(request);
  const items = await queryItems<{ sk: string; label?: string; format?: string; lastSeen?: string }>(
    store,
    { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': DEVICES_PK }, Limit: limit + 1 },
    limit + 1,
    from ? { pk: DEVICES_PK, sk: from.after } : undefined,
  );
  const fill = new PageFill<DeviceEntry>(limit);
  const labels: string[] = [];
  for (const i of items) {
    if (!fill.add({ label: i.label ?? i.sk, format: i.format ?? 'unknown', lastSeen: i.lastSeen ?? '' })) break;
    labels.push(i.sk);
  }
  const more = labels.length < items.length;
  return { devices: fill.items, ...(more ? { next: encodeCursor('devices', query, { after: labels.at(-1)! } satisfies DevicesPosition) } : {}) };
}

/** Every device label, page after page (tests and tools; the API answers one page). */
export async function listDevices(store: ReadStore): Promise<DeviceEntry[]> {
  const all: DeviceEntry[] = [];
  let next: string | undefined;
  do {
    const page = await pageDevices(store, { limit: MAX_PAGE, ...(next ? { next } : {}) });
    all.push(...page.devices);
    next = page.next;
  } while (next);
  return all;
}

// ---------------------------------------------------------------- uploads

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
 * STATUS#<status> partitions alone, kept so as records change (uploads.ts
 * settleVersions): one Query a status, with no per-key reads or filtering.
 */
function uploadPartitions(request: Partial<UploadsRequest>): string[] {
  const statuses = request.status ? [request.status] : [...UPLOAD_STATUSES];
  const current = statuses.filter((s) => (CURRENT_STATUSES as readonly string[]).includes(s)).map((s) => statusPartition(s, true));
  const past = request.history ? statuses.filter((s) => (PAST_STATUSES as readonly string[]).includes(s)).map((s) => statusPartition(s, false)) : [];
  return [...current, ...past];
}

/** One page of upload records, most recently updated first: each key's current state, or (history) every version. */
export async function pageUploads(store: ReadStore, request: Partial<UploadsRequest> = {}): Promise<UploadsPage> {
  const query: ListingQuery = { status: request.status, ...(request.history ? { history: 'true' } : {}) };
  const from = request.next !== undefined ? decodeCursor('uploads', query, request.next, readUploadsPosition) : undefined;
  const limit = limitOf(request);
  const perPartition = await Promise.all(
    uploadPartitions(request).map((partition) =>
      queryItems<UploadRecord>(
        store,
        {
          IndexName: INDEXES.byStatus.name,
          KeyConditionExpression: from ? 'gsi2pk = :pk AND gsi2sk < :after' : 'gsi2pk = :pk',
          ExpressionAttributeValues: { ':pk': partition, ...(from ? { ':after': from.after } : {}) },
          ScanIndexForward: false,
          Limit: limit + 1,
        },
        limit + 1,
      ),
    ),
  );
  // In DynamoDB's order (UTF-8 bytes), newest first: the cursor's `gsi2sk < after` goes on in that order.
  const records = perPartition.flat().sort((x, y) => Buffer.compare(Buffer.from(y.gsi2sk, 'utf8'), Buffer.from(x.gsi2sk, 'utf8')));
  const fill = new PageFill<UploadListing>(limit);
  let last: string | undefined;
  for (const r of records) {
    if (!fill.add(uploadListing(r))) break;
    last = r.gsi2sk;
  }
  const more = fill.items.length < records.length;
  return { uploads: fill.items, ...(more ? { next: encodeCursor('uploads', query, { after: last! } satisfies UploadsPosition) } : {}) };
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

// ---------------------------------------------------------------- runs

export interface RunsRequest extends PageRequest {
  /** A label or pattern (shared/selectors.ts parsePattern); none: every label. */
  device?: Pattern;
  format?: Format;
}

/**
 * Where a page of runs stopped: in `label` after the entry whose byDevice sort
 * key is `after` (that label has more), or, without `after`, after the whole of
 * `label` (the next label goes on).
 */
interface RunsPosition {
  label: string;
  after?: string;
}

/** Where a device pattern's labels are: itself, under its literal prefix, or anywhere. */
export type LabelPlan = { by: 'device'; exact: string } | { by: 'devicePrefix'; prefix: string } | { by: 'allDevices' };

export function planLabels(pattern: Pattern | undefined): LabelPlan {
  if (pattern === undefined) return { by: 'allDevices' };
  if (pattern.exact !== undefined) return { by: 'device', exact: pattern.exact };
  return pattern.prefix ? { by: 'devicePrefix', prefix: pattern.prefix } : { by: 'allDevices' };
}

/**
 * A runs cursor's position, checked against the request: its label must be the
 * exact label asked for, or start with the pattern's literal prefix (the DEVICES
 * query goes on from it) and, to be read on within, match the pattern.
 */
function runsPositionReader(plan: LabelPlan, pattern: Pattern | undefined) {
  return (p: unknown): RunsPosition | undefined => {
    const label = stringField(p, 'label');
    const after = stringField(p, 'after');
    if (!isLabelText(label) || (after !== undefined && !isSortKeyText(after))) return undefined;
    if (plan.by === 'device' && (label !== plan.exact || after === undefined)) return undefined;
    if (plan.by === 'devicePrefix' && !label.startsWith(plan.prefix)) return undefined;
    if (after !== undefined && pattern !== undefined && !globMatches(pattern.glob, label)) return undefined;
    return after !== undefined ? { label, after } : { label };
  };
}

/** One page of runs (module comment): an exact label's newest first, or label after label. */
export async function pageRuns(store: ReadStore, request: Partial<RunsRequest> = {}): Promise<RunsPage> {
  const plan = planLabels(request.device);
  const query: ListingQuery = { device: request.device?.glob, format: request.format };
  const from = request.next !== undefined ? decodeCursor('runs', query, request.next, runsPositionReader(plan, request.device)) : undefined;
  const listing = new RunsListing(new ReadSession(store), plan, request.device, request.format, new PageFill<RunListing>(limitOf(request)));
  const next = plan.by === 'device' ? await listing.ofLabel(plan.exact, from) : await listing.acrossLabels(plan.by === 'devicePrefix' ? plan.prefix : '', from);
  return { runs: listing.fill.items, ...(next ? { next: encodeCursor('runs', query, next) } : {}) };
}

/** The first page of runs (tests and tools; `device` as GET /runs takes it). */
export async function listRuns(store: ReadStore, options: Partial<Omit<RunsRequest, 'device'>> & { device?: string } = {}): Promise<RunListing[]> {
  const { device, ...rest } = options;
  return (await pageRuns(store, { ...rest, ...(device !== undefined ? { device: parsePattern(device) } : {}) })).runs;
}

/** What a listing reads of an index entry (#l3 is format, used by the filter). */
const LISTING_ATTRIBUTES = ['type', 'runId', 'label', 'format', 'device', 'name', 'host', 'tags', 'context', 'source', 'time', 'from', 'to', 'reports', 'seriesCount', 'gsi1sk'] as const;

/** A run listed, and its entry's byDevice sort key (where a cursor goes on from). */
interface Listed {
  run: RunListing;
  sk: string;
}

/** What one label gave: its listable entries newest first (one more than the page has room for, when it has them). */
interface LabelEntries {
  listed: Listed[];
  /** Set when the page's budget ran out before the label did: its unread entries are older than this sort key. */
  readTo?: string;
}

/** One page of runs being filled, and what it may still read. */
class RunsListing {
  private queries = LIST_INDEX_QUERIES;
  private scanned = LIST_LABELS_SCANNED;
  private readonly deadline = performance.now() + LIST_READ_MS;

  constructor(
    private readonly session: ReadSession,
    private readonly plan: LabelPlan,
    private readonly pattern: Pattern | undefined,
    private readonly format: Format | undefined,
    readonly fill: PageFill<RunListing>,
  ) {}

  /** An exact label's runs, newest first, from the cursor on; the position to go on from, if it has more. */
  async ofLabel(label: string, from: RunsPosition | undefined): Promise<RunsPosition | undefined> {
    return this.take(label, await this.entries(label, from?.after, this.fill.room + 1), from);
  }

  /**
   * Labels under `prefix` in label order, from the cursor on, each label's runs
   * newest first, until the page is full or its reads are spent. Whatever is
   * spent, the page reads its first labels and moves past them: every page goes on.
   */
  async acrossLabels(prefix: string, from: RunsPosition | undefined): Promise<RunsPosition | undefined> {
    if (from?.after !== undefined) {
      const stopped = await this.ofLabel(from.label, from);
      if (stopped !== undefined) return stopped;
    }
    let reached = from?.label;
    let moved = from?.after !== undefined;
    for (;;) {
      const { labels, last, done } = await this.nextLabels(prefix, reached);
      for (let i = 0; i < labels.length; i += CONCURRENCY) {
        if (this.fill.full || (moved && this.spent())) return { label: reached! };
        const chunk = labels.slice(i, i + CONCURRENCY);
        const want = this.fill.room + 1;
        // Read together, taken in label order: a label past where the page fills was read for nothing (at most CONCURRENCY - 1).
        const read = await Promise.all(chunk.map((label) => this.entries(label, undefined, want)));
        for (const [j, label] of chunk.entries()) {
          const stopped = this.take(label, read[j]!, reached !== undefined ? { label: reached } : undefined);
          if (stopped !== undefined) return stopped;
          reached = label;
          moved = true;
        }
      }
      if (done || last === undefined) return undefined;
      reached = last;
      moved = true;
      if (this.spent()) return { label: reached };
    }
  }

  /** The page has read what it may: byDevice pages, DEVICES entries, or time. */
  private spent(): boolean {
    return this.queries <= 0 || this.scanned <= 0 || performance.now() > this.deadline;
  }

  /**
   * A label's entries go into the page, in order; where the listing goes on if
   * it stops within the label: after the last entry taken, or at the label's
   * start (`before`, the position it began from) when not even its first fit.
   * Undefined: the label is done.
   */
  private take(label: string, entries: LabelEntries, before: RunsPosition | undefined): RunsPosition | undefined {
    let last: string | undefined;
    for (const { run, sk } of entries.listed) {
      if (!this.fill.add(run)) {
        // The first item of a page always goes in: a label whose first entry did not fit has a position before it.
        return last !== undefined ? { label, after: last } : before!;
      }
      last = sk;
    }
    return entries.readTo !== undefined ? { label, after: entries.readTo } : undefined;
  }

  /**
   * Up to `want` listable entries of a label, newest first, older than `after`.
   * The first page asks for `want` entries; a page that loses entries (the
   * format filter, half-written series, series of runs listed whole)
   * is followed by larger ones, while the page's budget lasts.
   */
  private async entries(label: string, after: string | undefined, want: number): Promise<LabelEntries> {
    const listed: Listed[] = [];
    let start: Record<string, unknown> | undefined;
    let limit = want;
    for (;;) {
      this.queries--;
      const page = await this.session.store.db.send(
        new QueryCommand({
          TableName: this.session.store.tableName,
          IndexName: INDEXES.byDevice.name,
          KeyConditionExpression: after !== undefined ? 'gsi1pk = :pk AND gsi1sk < :after' : 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': devicePk(label), ...(after !== undefined ? { ':after': after } : {}), ...(this.format ? { ':format': this.format } : {}) },
          // A listing needs neither rows nor summaries.
          ProjectionExpression: LISTING_ATTRIBUTES.map((_, i) => `#l${i}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(LISTING_ATTRIBUTES.map((a, i) => [`#l${i}`, a])),
          ...(this.format ? { FilterExpression: '#l3 = :format' } : {}),
          ScanIndexForward: false,
          Limit: limit,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      listed.push(...(await this.listable((page.Items ?? []) as IndexedItem[])));
      start = page.LastEvaluatedKey;
      if (listed.length >= want || start === undefined) return { listed };
      if (this.spent()) return { listed, readTo: String(start['gsi1sk']) };
      limit = Math.min(limit * 2, MAX_ENTRIES_PER_QUERY);
    }
  }

  /**
   * The entries a listing shows, as listings (module comment): every run META
   * (its label was asked for), and the series whose run's META exists and is
   * not listed by this request under the upload's label (one BatchGet per 100
   * runs not read yet in this request). Without a pattern every label is
   * listed, so no series is read for.
   */
  private async listable(items: IndexedItem[]): Promise<Listed[]> {
    const pattern = this.pattern;
    const series = pattern === undefined ? [] : items.filter((i) => i.type === 'series');
    const heads = await this.session.runHeads(series.map((i) => i.runId));
    const out: Listed[] = [];
    for (const item of items) {
      // Read from byDevice, so every entry has its sort key.
      if (item.type === 'run') out.push({ run: listing(item, item.label, true), sk: item.gsi1sk! });
      else if (pattern !== undefined) {
        const head = heads.get(item.runId);
        // No META: the run is half-written (or half-deleted) and must not count.
        if (head && !globMatches(pattern.glob, head.label)) out.push({ run: listing({ ...head, time: item.time }, item.device, false), sk: item.gsi1sk! });
      }
    }
    return out;
  }

  /**
   * The next labels under `prefix` after `reached` (from the start without it),
   * those the pattern matches: one Query of at most LABELS_PER_QUERY DEVICES
   * entries, counted against the page's scan budget.
   */
  private async nextLabels(prefix: string, reached: string | undefined): Promise<{ labels: string[]; last?: string; done: boolean }> {
    const max = Math.min(LABELS_PER_QUERY, this.scanned);
    const page = await this.session.store.db.send(
      new QueryCommand({
        TableName: this.session.store.tableName,
        KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
        ExpressionAttributeValues: { ':pk': DEVICES_PK, ...(prefix ? { ':prefix': prefix } : {}) },
        ProjectionExpression: 'sk',
        Limit: max,
        ...(reached !== undefined ? { ExclusiveStartKey: { pk: DEVICES_PK, sk: reached } } : {}),
      }),
    );
    const all = ((page.Items ?? []) as { sk: string }[]).map((i) => i.sk);
    this.scanned -= Math.max(1, all.length);
    const pattern = this.pattern;
    return {
      labels: pattern ? all.filter((label) => globMatches(pattern.glob, label)) : all,
      ...(all.length > 0 ? { last: all.at(-1)! } : {}),
      done: page.LastEvaluatedKey === undefined,
    };
  }
}

/** What a listing is made from: a run's META as the index holds it, or its head beside one of its series. */
type ListedRun = RunHead & { seriesCount?: number };

/** A run listed under `device`; `whole`: the entry is the run, not one of its disks. */
function listing(run: ListedRun, device: string, whole: boolean): RunListing {
  return {
    ...runFacts(run),
    device,
    ...(run.reports !== undefined ? { reports: run.reports } : {}),
    ...(whole && run.seriesCount !== undefined ? { disks: run.seriesCount } : {}),
  };
}

/** What a run says of itself, listed (RunListing) or read whole (RunInfo), copied field by field. */
export function runFacts(run: Pick<RunHead, 'runId' | 'format' | 'name' | 'host' | 'time' | 'from' | 'to' | 'tags' | 'context' | 'source'>): RunFacts {
  return {
    runId: run.runId,
    format: run.format,
    name: run.name,
    ...(run.host !== undefined ? { host: run.host } : {}),
    time: run.time,
    ...(run.from !== undefined ? { from: run.from } : {}),
    ...(run.to !== undefined ? { to: run.to } : {}),
    tags: run.tags ?? {},
    context: run.context ?? [],
    source: runSource(run.source),
  };
}

/** The part of an object version a client is shown: the store's event bookkeeping (sequencer, eTag) stays behind. */
export function runSource(ref: ObjectRef): RunSource {
  return { bucket: ref.bucket, key: ref.key, version: ref.version };
}
