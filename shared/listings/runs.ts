/**
 * GET /runs: one exact label (its runs newest first), or, for a pattern or no
 * device, label after label in label order (the DEVICES partition, under the
 * pattern's literal prefix), each label's runs newest first. A page reads at
 * most LIST_LABELS_SCANNED DEVICES entries and LIST_INDEX_QUERIES byDevice
 * pages, for at most LIST_READ_MS, so it may stop short (even empty) with a
 * `next` that goes on from the label it reached: no number of labels is too
 * many. Each run is listed once: a diskperf run under its label, an iostat run
 * under its upload's label (its META is indexed there), its series skipped.
 * Only where the request names disk labels and not the upload's (`x4100/*`,
 * `x4100/sda`) is an iostat run listed by its series, once per disk named: the
 * series its META holds (read from the upload label's entries), or its SERIES
 * items (a host of more than 100 devices, runs stored before); a series counts
 * only when its run's META exists (half-written runs are never listed). A
 * listing shows what the META holds: host, context, tags, the samples' time
 * range.
 */
import type { RunListing, RunsPage } from '../api.ts';
import { planLabels, type LabelPlan } from '../label-plans.ts';
import { uploadLabelsOf } from '../labels.ts';
import type { Format } from '../model.ts';
import { globMatches, parsePattern, type Pattern } from '../selectors.ts';
import { decodeCursor, encodeCursor, stringField, type ListingQuery } from '../store/cursors.ts';
import { storedSeriesOf } from '../store/packing.ts';
import { labelEntriesPage, labelsPage } from '../store/reads.ts';
import { CONCURRENCY, ReadSession, type IndexedItem, type RunHead } from '../store/session.ts';
import type { ReadStore } from '../store/store.ts';
import { isLabelText, isSortKeyText, limitOf, PageFill, type PageRequest } from './pages.ts';
import { runFacts } from './run-facts.ts';

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
  const from =
    request.next !== undefined
      ? decodeCursor('runs', query, request.next, runsPositionReader(plan, request.device))
      : undefined;
  const listing = new RunsListing(
    new ReadSession(store),
    plan,
    request.device,
    request.format,
    new PageFill<RunListing>(limitOf(request)),
  );
  const next =
    plan.by === 'device'
      ? await listing.ofLabel(plan.exact, from)
      : await listing.acrossLabels(plan.by === 'devicePrefix' ? plan.prefix : '', from);
  return { runs: listing.fill.items, ...(next ? { next: encodeCursor('runs', query, next) } : {}) };
}

/** The first page of runs (tests and tools; `device` as GET /runs takes it). */
export async function listRuns(
  store: ReadStore,
  options: Partial<Omit<RunsRequest, 'device'>> & { device?: string } = {},
): Promise<RunListing[]> {
  const { device, ...rest } = options;
  return (await pageRuns(store, { ...rest, ...(device !== undefined ? { device: parsePattern(device) } : {}) })).runs;
}

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
        // Read together, taken in label order: a label past where the page fills was read for
        // nothing (at most CONCURRENCY - 1).
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
   * Up to `want` listable entries of a label, newest first, older than `after`:
   * its own, and for a series label named by a pattern, the runs of its upload
   * label whose METAs hold it (such series have no entries of their own).
   */
  private async entries(label: string, after: string | undefined, want: number): Promise<LabelEntries> {
    const own = this.entriesOf(label, undefined, after, want);
    const uploads = this.pattern === undefined ? [] : uploadLabelsOf(label);
    if (uploads.length === 0) return own;
    return mergeEntries(await Promise.all([own, ...uploads.map((u) => this.entriesOf(u, label, after, want))]));
  }

  /**
   * Up to `want` listable entries read from `read`'s byDevice entries (of the
   * series `series` its METAs hold, when given). The first page asks for `want`
   * entries; a page that loses entries (the format filter, half-written series,
   * series of runs listed whole, runs without the series) is followed by
   * larger ones, while the page's budget lasts.
   */
  private async entriesOf(
    read: string,
    series: string | undefined,
    after: string | undefined,
    want: number,
  ): Promise<LabelEntries> {
    const listed: Listed[] = [];
    let start: Record<string, unknown> | undefined;
    let limit = want;
    for (;;) {
      this.queries--;
      const page = await labelEntriesPage(this.session.store, read, {
        ...(after !== undefined ? { before: after } : {}),
        ...(this.format ? { format: this.format } : {}),
        limit,
        ...(start ? { start } : {}),
        ...(series !== undefined ? { withSeries: true } : {}),
      });
      listed.push(...(series === undefined ? await this.listable(page.items) : this.holding(page.items, series)));
      start = page.next;
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
        if (head && !globMatches(pattern.glob, head.label))
          out.push({ run: listing({ ...head, time: item.time }, item.device, false), sk: item.gsi1sk! });
      }
    }
    return out;
  }

  /** The runs among these METAs that hold the series `series`, listed by it (unless the pattern lists them whole). */
  private holding(items: IndexedItem[], series: string): Listed[] {
    const out: Listed[] = [];
    for (const item of items) {
      if (item.type !== 'run' || item.format !== 'iostat' || item.packedSeries === undefined) continue;
      if (globMatches(this.pattern!.glob, item.label)) continue;
      const held = storedSeriesOf(item)!.find((s) => s.device === series);
      if (held) out.push({ run: listing(item, series, false), sk: item.gsi1sk! });
    }
    return out;
  }

  /**
   * The next labels under `prefix` after `reached` (from the start without it),
   * those the pattern matches: one Query of at most LABELS_PER_QUERY DEVICES
   * entries, counted against the page's scan budget.
   */
  private async nextLabels(
    prefix: string,
    reached: string | undefined,
  ): Promise<{ labels: string[]; last?: string; done: boolean }> {
    const max = Math.min(LABELS_PER_QUERY, this.scanned);
    const { labels: all, done } = await labelsPage(this.session.store, prefix, max, reached);
    this.scanned -= Math.max(1, all.length);
    const pattern = this.pattern;
    return {
      labels: pattern ? all.filter((label) => globMatches(pattern.glob, label)) : all,
      ...(all.length > 0 ? { last: all.at(-1)! } : {}),
      done,
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

/**
 * Entries read from several partitions of one byDevice order, as one: newest
 * first, and where a stream stopped short, nothing older than where it stopped
 * (the next page reads every stream on from there).
 */
function mergeEntries(streams: LabelEntries[]): LabelEntries {
  const readTo = streams.reduce<string | undefined>(
    (max, s) => (s.readTo !== undefined && (max === undefined || s.readTo > max) ? s.readTo : max),
    undefined,
  );
  const listed = streams
    .flatMap((s) => s.listed)
    .filter((l) => readTo === undefined || l.sk > readTo)
    .sort((a, b) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0));
  return { listed, ...(readTo !== undefined ? { readTo } : {}) };
}
