/** How the page's charts print a measured value: three significant digits, no exponent (20.0, 183, 0.018). */
export function formatValue(v: number): string {
  if (!Number.isFinite(v)) return '-';
  if (v === 0) return '0';
  const magnitude = Math.floor(Math.log10(Math.abs(v)));
  return v.toFixed(Math.max(0, 2 - magnitude));
}
