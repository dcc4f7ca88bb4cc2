/**
 * Comparison answers kept between requests of one API instance, found two ways:
 *
 * - By the labels' change stamps, when each side is one exact device label
 *   (`a=scsi2sd_redux`, `b=x4100/c0t0d0,context~tunefs`, `b=x4100`): one
 *   strongly consistent BatchGet of the two DEVICES items (labelStamps) says
 *   whether either label's runs changed, without reading them. Writers change a
 *   label's stamp after every change to its runs (shared/store/items.ts
 *   DeviceItem); an iostat upload's label is stamped with its series' labels,
 *   so `x4100` covers every disk of it. Such an answer is kept only when every
 *   stamp is older than SETTLE_MS (a DynamoDB index can lag its table for a
 *   moment after a write: an answer computed in that moment could miss a run the
 *   stamp already counts), and for at most MAX_AGE_MS (a writer that died
 *   between changing a label's runs and stamping the label cannot keep an answer
 *   alive for longer).
 * - By the digest of the data read (comparisonKey), for every selector: the
 *   reads happen, only the statistics and the JSON are reused,
 *   and only when the data read is the same.
 *
 * Least recently used answers go first past MAX_BYTES.
 */
import { createHash } from 'node:crypto';
import { MB } from '../config.ts';
import type { CompareOptions } from '../comparison/answer.ts';
import type { Observation } from '../comparison/observations.ts';
import { planSelector } from '../label-plans.ts';
import type { Selector } from '../selectors.ts';
import { stampTime } from '../store/items.ts';
import { labelStamps } from '../store/reads.ts';
import type { ReadStore } from '../store/store.ts';

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
  /** Every label's runs have been still for SETTLE_MS: an answer computed now may be kept. */
  settled: boolean;
}

/**
 * The stamp key of a comparison whose sides each name one exact device label
 * (their runs are all read from the index entries of that label and of the
 * labels under it): the stamps of every one of those labels, by label, so a new
 * series label is a new key as much as a new stamp. Undefined for any other
 * selector, or a side none of whose labels is listed yet (or has a stamp).
 */
export async function stampedKey(
  store: ReadStore,
  selectors: readonly [Selector, Selector],
  metric: string,
  now: number,
): Promise<StampedKey | undefined> {
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

/**
 * A digest of everything an answer is computed from: both sides' observations in
 * order (ids, formats, every value, sample counts, the facts the warnings read,
 * what the setups side by side show) and the options. Equal digests, equal answers, so a cache of answers keyed by
 * it can never hand out one that its data no longer gives.
 */
export function comparisonKey(
  a: readonly Observation[],
  b: readonly Observation[],
  options: CompareOptions = {},
): string {
  // Names go in as text, every number as its 8 bytes (exact, and far cheaper than
  // printing thousands of them); the text says how many numbers each part holds.
  let text = JSON.stringify([
    options.metric ?? 'all',
    options.labels ?? null,
    options.selectors ?? null,
    options.iterations ?? null,
    options.seed ?? null,
  ]);
  let numbers = new Float64Array(1024);
  let n = 0;
  const push = (value: number) => {
    if (n === numbers.length) {
      const grown = new Float64Array(numbers.length * 2);
      grown.set(numbers);
      numbers = grown;
    }
    numbers[n++] = value;
  };
  for (const [name, obs] of [
    ['A', a],
    ['B', b],
  ] as const) {
    text += `\n${name} ${obs.length}`;
    for (const o of obs) {
      text +=
        `\n${o.runId}\t${o.device}\t${o.label ?? ''}\t${o.native ?? ''}\t${o.format}` +
        `\t${o.platform ?? ''}\t${o.host ?? ''}\t${o.samples ?? ''}\t${o.sinceBootOnly === true}`;
      text += `\t${JSON.stringify([o.context ?? null, o.setup ?? null, o.requestSizes ?? null, o.about ?? null])}`;
      for (const [metric, v] of Object.entries(o.values)) {
        if (typeof v === 'number' || v === null) {
          text += `\t${metric} ${v === null ? 'null' : 1}`;
          if (v !== null) push(v);
        } else {
          text += `\t${metric} ${v.size * 2}`;
          for (const [place, value] of v as ReadonlyMap<number | string, number>) {
            // A fio point key is text: in the text, its value still among the numbers.
            if (typeof place === 'string') text += ` ${place}`;
            else push(place);
            push(value);
          }
        }
      }
    }
  }
  return createHash('sha256')
    .update(text)
    .update(new Uint8Array(numbers.buffer, 0, n * 8))
    .digest('base64url');
}
