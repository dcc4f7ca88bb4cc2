/** Plain-text tables for the terminal: right-aligned numbers, left-aligned names. */

export type Cell = string | number | undefined;

export function formatNumber(value: number | undefined, digits = 2): string {
  if (value === undefined || Number.isNaN(value)) return '-';
  if (Number.isInteger(value) && Math.abs(value) >= 1000) return String(value);
  const abs = Math.abs(value);
  if (abs !== 0 && abs < 0.01) return value.toExponential(1);
  return value.toFixed(abs >= 10000 ? 1 : digits);
}

/** Text cut to `width` characters, an ellipsis marking the cut, so one long cell does not widen a whole table. */
export function clip(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, width - 1).join('')}…`;
}

export type Align = 'left' | 'right';

/**
 * Columns are right-aligned when every cell is a number (or a string of digits),
 * unless `align` says otherwise per column.
 */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly Cell[])[],
  indent = '  ',
  align?: readonly Align[],
): string {
  const text = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? formatNumber(cell) : (cell ?? '-'))));
  const widths = header.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)));
  const numeric = header.map((_, i) =>
    align?.[i]
      ? align[i] === 'right'
      : rows.every((r) => typeof r[i] === 'number' || r[i] === undefined || /^\d+$/.test(String(r[i]))),
  );
  const line = (cells: readonly string[]) =>
    indent +
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...text.map(line)].join('\n');
}
