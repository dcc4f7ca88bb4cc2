/**
 * Row groups encoded one by one, on any thread and in any order, make one
 * valid file once each is placed: the footer's offsets follow the places the
 * writer gives them, so hyparquet reads back every sample of every group.
 */
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import {
  encodeFooter,
  encodeRowGroup,
  type EncodedGroup,
  type SampleGroup,
} from '../../../shared/store/samples-encoding.ts';
import { SAMPLE_METRICS, samplesDecompressors } from '../../../shared/store/samples-schema.ts';

/** A group of `count` samples of one series whose values say which series and sample they are. */
function group(series: string, count: number, seed: number): SampleGroup {
  const metrics = new Float64Array(count * SAMPLE_METRICS.length);
  for (let m = 0; m < SAMPLE_METRICS.length; m++)
    for (let i = 0; i < count; i++) metrics[m * count + i] = m === 3 ? Number.NaN : seed * 1000 + m * 10 + i / 4;
  return {
    series,
    count,
    capacity: count,
    reports: Int32Array.from({ length: count }, (_, i) => i),
    lines: Int32Array.from({ length: count }, (_, i) => 10 + i * 3),
    times: Array.from({ length: count }, (_, i) =>
      i % 5 === 4 ? null : `2026-11-02T10:00:${String(i % 60).padStart(2, '0')}`,
    ),
    sinceBoot: Uint8Array.from({ length: count }, (_, i) => (i === 0 ? 1 : 0)),
    metrics,
  };
}

/** The rows a group should read back as. */
function rowsOf(g: SampleGroup, seed: number): Record<string, unknown>[] {
  return Array.from({ length: g.count }, (_, i) => ({
    series: g.series,
    report: i,
    line: 10 + i * 3,
    time: g.times[i],
    since_boot: i === 0,
    ...Object.fromEntries(
      SAMPLE_METRICS.map((metric, m) => [metric, m === 3 ? Number.NaN : seed * 1000 + m * 10 + i / 4]),
    ),
  }));
}

/** The file made of encoded groups in the given order, each placed where it lands. */
function assemble(groups: EncodedGroup[]): ArrayBuffer {
  const placed = [];
  let at = 0;
  for (const g of groups) {
    placed.push({ rowGroup: g.rowGroup, at });
    at += g.bytes.byteLength;
  }
  const parts = [...groups.map((g) => g.bytes), encodeFooter(placed)];
  const file = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) file.set(part, (offset += part.byteLength) - part.byteLength);
  return file.buffer;
}

describe('samples row groups encoded on their own', () => {
  it('read back whole and in order once placed, though encoded in another order', async () => {
    const sizes = [
      ['sda', 300, 1],
      ['sdb', 7, 2],
      ['sda', 1, 3],
    ] as const;
    const groups = sizes.map(([series, count, seed]) => group(series, count, seed));
    const expected = groups.flatMap((g, k) => rowsOf(g, sizes[k]![2]));
    // Encoded last to first (as a pool's threads may finish them), then placed first to last.
    const encoded = [2, 1, 0].map((k) => encodeRowGroup(groups[k]!, k === 0)).reverse();
    const file = assemble(encoded);

    expect(new TextDecoder().decode(new Uint8Array(file, 0, 4))).toBe('PAR1');
    const metadata = parquetMetadata(file);
    expect(metadata.row_groups.map((rg) => Number(rg.num_rows))).toEqual([300, 7, 1]);
    expect(Number(metadata.num_rows)).toBe(308);
    // The series' statistics find its row groups.
    expect(metadata.row_groups.map((rg) => rg.columns[0]!.meta_data!.statistics?.min_value)).toEqual([
      'sda',
      'sdb',
      'sda',
    ]);
    const rows = await parquetReadObjects({ file, compressors: samplesDecompressors });
    expect(rows).toEqual(expected);
  });

  it('a group of a file but its first carries no magic; its offsets count from its own first byte', () => {
    const first = encodeRowGroup(group('sda', 20, 1), true);
    const later = encodeRowGroup(group('sda', 20, 1), false);
    expect(first.bytes.byteLength - later.bytes.byteLength).toBe(4);
    expect(first.bytes.subarray(4)).toEqual(later.bytes);
    const offsets = (e: EncodedGroup) => e.rowGroup.columns.map((c) => Number(c.meta_data!.data_page_offset));
    expect(offsets(first)).toEqual(offsets(later).map((o) => o + 4));
    expect(
      Math.min(
        ...offsets(later),
        ...later.rowGroup.columns.map((c) => Number(c.meta_data!.dictionary_page_offset ?? 1e9)),
      ),
    ).toBe(0);
  });
});
