/**
 * Comparison answers kept between requests of one API instance, found two ways:
 *
 * - By the labels' change stamps, when each side is one exact device label
 *   (`a=scsi2sd_redux`, `b=x4100/c0t0d0,context~tunefs`): one strongly
 *   consistent BatchGet of the two DEVICES items (labelStamps) says whether
 *   either label's runs changed, without reading them. Writers change a label's
 *   stamp after every change to its runs (shared/store/records.ts DeviceItem).
 *   Such an answer is kept only when both stamps are older than SETTLE_MS (a
 *   DynamoDB index can lag its table for a moment after a write: an answer
 *   computed in that moment could miss a run the stamp already counts), and for
 *   at most MAX_AGE_MS (a writer that died between changing a label's runs and
 *   stamping the label cannot keep an answer alive for longer).
 * - By the digest of the data read (comparisonKey), for every selector: the
 *   reads happen, only the statistics (a few ms of CPU) and the JSON are reused,
 *   and only when the data read is the same.
 *
 * Least recently used answers go first past MAX_BYTES.
 */
import { MB } from '../config.ts';
import { planSelector, type Selector } from '../selectors.ts';
import { stampTime } from '../store/records.ts';
import { labelStamps, type ReadStore } from '../store/read.ts';

/** A label's runs must have been still this long before an answer from its stamp is kept. */
export const SETTLE_MS = 5_000;
/** An answer found by stamps is served for this long at most. */
export const MAX_AGE_MS = 60_000;

interface Kept {
  body: string;
  /** Epoch ms after which it is not served (Infinity: as long as it is the same data). */
  until: number;
}

export class AnswerCache {
  static readonly MAX_BYTES = 8 * MB;
  private readonly answers = new Map<string, Kept>();
  private bytes = 0;

  get(key: string, now: number): string | undefined {
    const kept = this.answers.get(key);
    if (kept === undefined) return undefined;
    this.answers.delete(key);
    if (kept.until < now) {
      this.bytes -= kept.body.length;
      return undefined;
    }
    // Most recently used last.
    this.answers.set(key, kept);
    return kept.body;
  }

  set(key: string, body: string, until = Infinity): void {
    if (body.length > AnswerCache.MAX_BYTES / 8) return;
    const old = this.answers.get(key);
    if (old !== undefined) {
      this.answers.delete(key);
      this.bytes -= old.body.length;
    }
    this.answers.set(key, { body, until });
    this.bytes += body.length;
    for (const [oldest, kept] of this.answers) {
      if (this.bytes <= AnswerCache.MAX_BYTES) break;
      this.answers.delete(oldest);
      this.bytes -= kept.body.length;
    }
  }
}

/** Where an answer found by stamps is kept, and whether it may be. */
export interface StampedKey {
  key: string;
  /** Both labels' runs have been still for SETTLE_MS: an answer computed now may be kept. */
  settled: boolean;
}

/**
 * The stamp key of a comparison whose sides each name one exact device label
 * (their runs are all read from that label's index entries); undefined for any
 * other selector, or a label not listed yet.
 */
export async function stampedKey(store: ReadStore, selectors: readonly [Selector, Selector], metric: string, now: number): Promise<StampedKey | undefined> {
  const labels: string[] = [];
  for (const selector of selectors) {
    const plan = planSelector(selector);
    if (plan.by !== 'device') return undefined;
    labels.push(plan.exact);
  }
  const stamps = await labelStamps(store, [...new Set(labels)]);
  const values = labels.map((label) => stamps.get(label));
  if (values.some((stamp) => stamp === undefined)) return undefined;
  const settled = values.every((stamp) => now - stampTime(stamp!) >= SETTLE_MS);
  return { key: JSON.stringify(['stamps', metric, selectors[0].text, selectors[1].text, ...values]), settled };
}
