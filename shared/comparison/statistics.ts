/**
 * Small statistics the comparison model is built from: centres, a seeded
 * generator, the Holm correction. Values are plain numbers; nothing here knows
 * about disks.
 */

/** The median of some numbers (NaN for none). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function geomean(values: readonly number[]): number {
  if (values.length === 1) return values[0]!;
  let sum = 0;
  for (const v of values) sum += Math.log(v);
  return Math.exp(sum / values.length);
}

/** A small deterministic generator (mulberry32): the same data and seed always give the same interval. */
export function prng(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let x = Math.imul(t ^ (t >>> 15), 1 | t);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mean and sample variance of the finite entries of `values` at `start + k * stride`. */
export function meanVariance(
  values: Float64Array,
  start: number,
  stride: number,
  count: number,
): { mean: number; variance: number; n: number } {
  let n = 0;
  let mean = 0;
  let m2 = 0;
  for (let k = 0; k < count; k++) {
    const v = values[start + k * stride]!;
    if (!Number.isFinite(v)) continue;
    n++;
    const delta = v - mean;
    mean += delta / n;
    m2 += delta * (v - mean);
  }
  return { mean, variance: n > 1 ? m2 / (n - 1) : NaN, n };
}

/**
 * Holm's step-down correction: p-values adjusted so that rejecting every one
 * under alpha keeps the chance of any false rejection under alpha, however
 * many are shown. NaN entries stay NaN and do not count.
 */
export function holm(pValues: readonly number[]): number[] {
  const order = pValues
    .map((p, i) => [p, i] as const)
    .filter(([p]) => !Number.isNaN(p))
    .sort((x, y) => x[0] - y[0]);
  const out = pValues.map(() => NaN);
  let running = 0;
  order.forEach(([p, i], k) => {
    running = Math.max(running, Math.min(1, (order.length - k) * p));
    out[i] = running;
  });
  return out;
}

/** A number rounded to `digits` significant digits, as a number (2.7600000000000002 -> 2.76). */
export function roundTo(value: number, digits = 6): number {
  return Number.isFinite(value) && value !== 0 ? Number(value.toPrecision(digits)) : value;
}
