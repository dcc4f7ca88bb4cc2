/**
 * The small statistics under the comparison model: Student's t against
 * published quantiles and probabilities, Holm's correction by hand, medians.
 */
import { describe, expect, it } from 'vitest';
import { holm, median, roundTo } from '../../../shared/comparison/statistics.ts';
import { logGamma, tCdf, tQuantile, tTwoSided } from '../../../shared/comparison/student-t.ts';

describe("Student's t", () => {
  it('gives the tabled 97.5% quantiles, fractional degrees of freedom included', () => {
    const table: [number, number, number][] = [
      [0.975, 1, 12.706204736174694],
      [0.975, 2, 4.302652729749462],
      [0.975, 3, 3.182446305283708],
      [0.975, 4.5, 2.658912347204403],
      [0.975, 6, 2.4469118511449692],
      [0.975, 30, 2.0422724563012378],
      [0.975, 1000, 1.9623390808264078],
      [0.995, 2.3, 8.003745266871087],
      [0.9, 7, 1.414923927650509],
    ];
    for (const [p, df, t] of table) expect(tQuantile(p, df)).toBeCloseTo(t, 9);
    expect(tQuantile(0.025, 3)).toBeCloseTo(-3.182446305283708, 9);
  });

  it('gives the tabled probabilities, and two-sided p-values from them', () => {
    expect(tCdf(2, 5)).toBeCloseTo(0.9490302605850708, 12);
    expect(tCdf(0.5, 1.5)).toBeCloseTo(0.65971644466503, 12);
    expect(tCdf(10, 3)).toBeCloseTo(0.9989358004707929, 12);
    expect(tCdf(-1.2, 8)).toBeCloseTo(0.13223355260090797, 12);
    expect(tTwoSided(2.4469118511449692, 6)).toBeCloseTo(0.05, 10);
    expect(tTwoSided(0, 4)).toBe(1);
  });

  it('ln Γ matches factorials', () => {
    expect(logGamma(5)).toBeCloseTo(Math.log(24), 12);
    expect(logGamma(0.5)).toBeCloseTo(Math.log(Math.sqrt(Math.PI)), 12);
  });
});

describe('Holm', () => {
  it('multiplies the k-th smallest p by (m - k + 1), keeps the order, caps at 1, skips NaN', () => {
    expect(holm([0.01, 0.04, 0.03, NaN, 0.5]).map((p) => roundTo(p, 6))).toEqual([0.04, 0.09, 0.09, NaN, 0.5]);
    expect(holm([0.6, 0.7])).toEqual([1, 1]);
  });
});

describe('median', () => {
  it('takes the middle value, or the mean of the middle two', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});
