/**
 * count/mean/min/max/stddev accumulated in constant memory while a series streams
 * past. Sums are taken of values shifted by the first value seen, which keeps the
 * variance exact enough for iostat numbers without Welford's division per value;
 * many summaries live side by side in one Float64Array (no object per metric).
 */
import type { MetricSummary } from '../model.ts';

const COUNT = 0;
const SHIFT = 1;
const SUM = 2;
const SUM_SQ = 3;
const MIN = 4;
const MAX = 5;
/** Slots one summary takes in a SummaryBank. */
export const SUMMARY_SLOTS = 6;

/** `size` independent summaries, addressed by index. */
export class SummaryBank {
  readonly data: Float64Array;

  constructor(readonly size: number) {
    this.data = new Float64Array(size * SUMMARY_SLOTS);
  }

  add(index: number, value: number): void {
    const d = this.data;
    const o = index * SUMMARY_SLOTS;
    if (d[o + COUNT] === 0) {
      d[o + SHIFT] = value;
      d[o + MIN] = value;
      d[o + MAX] = value;
    } else {
      if (value < d[o + MIN]!) d[o + MIN] = value;
      if (value > d[o + MAX]!) d[o + MAX] = value;
    }
    const x = value - d[o + SHIFT]!;
    d[o + COUNT]!++;
    d[o + SUM] += x;
    d[o + SUM_SQ] += x * x;
  }

  count(index: number): number {
    return this.data[index * SUMMARY_SLOTS + COUNT]!;
  }

  summary(index: number): MetricSummary | undefined {
    const d = this.data;
    const o = index * SUMMARY_SLOTS;
    const n = d[o + COUNT]!;
    if (n === 0) return undefined;
    const sum = d[o + SUM]!;
    const variance = n > 1 ? Math.max(0, (d[o + SUM_SQ]! - (sum * sum) / n) / (n - 1)) : 0;
    return { count: n, mean: d[o + SHIFT]! + sum / n, min: d[o + MIN]!, max: d[o + MAX]!, stddev: Math.sqrt(variance) };
  }
}
