/**
 * count/mean/min/max/stddev accumulated in constant memory while a series streams
 * past. Sums are taken of values shifted by the first value seen, which keeps the
 * variance exact enough for iostat numbers without Welford's division per value;
 * many summaries live side by side in one Float64Array (no object per metric).
 *
 *   bank.add(0, 1.5); bank.add(0, 2.5)
 *
 * yields bank.summary(0) = { count: 2, mean: 2, min: 1.5, max: 2.5, stddev: 0.707... }.
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

/** A summary of values multiplied by a positive factor (a unit conversion). */
export function scaleSummary(summary: MetricSummary, factor: number): MetricSummary {
  if (factor === 1) return summary;
  return {
    count: summary.count,
    mean: summary.mean * factor,
    min: summary.min * factor,
    max: summary.max * factor,
    stddev: summary.stddev * factor,
  };
}

/** One summary of the union of several (Chan et al.'s parallel combination of means and variances). */
export function mergeSummaries(parts: readonly MetricSummary[]): MetricSummary {
  let merged = parts[0];
  const rest = parts.slice(1);
  if (merged === undefined) throw new Error('mergeSummaries needs at least one summary');
  for (const next of rest) {
    const n = merged.count + next.count;
    const delta = next.mean - merged.mean;
    const m2 =
      merged.stddev ** 2 * (merged.count - 1) +
      next.stddev ** 2 * (next.count - 1) +
      (delta * delta * merged.count * next.count) / n;
    merged = {
      count: n,
      mean: merged.mean + (delta * next.count) / n,
      min: Math.min(merged.min, next.min),
      max: Math.max(merged.max, next.max),
      stddev: n > 1 ? Math.sqrt(m2 / (n - 1)) : 0,
    };
  }
  return merged;
}
