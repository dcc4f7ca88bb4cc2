/**
 * Running count/mean/min/max/stddev (Welford), so a series of any length is
 * summarised in constant memory while it streams past.
 */
import type { MetricSummary } from '../model.ts';

export class RunningSummary {
  count = 0;
  private mean = 0;
  private m2 = 0;
  private min = Infinity;
  private max = -Infinity;

  add(value: number): void {
    this.count++;
    const delta = value - this.mean;
    this.mean += delta / this.count;
    this.m2 += delta * (value - this.mean);
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }

  toJSON(): MetricSummary {
    return {
      count: this.count,
      mean: this.mean,
      min: this.min,
      max: this.max,
      stddev: this.count > 1 ? Math.sqrt(this.m2 / (this.count - 1)) : 0,
    };
  }
}
