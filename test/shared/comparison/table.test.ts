/**
 * The comparison table (shared/comparison/table.ts) on constructed data: its
 * columns and rows, `~` where a point is not significant, a footnote for every
 * warning (those of the setups marked), geomean rows per metric; and its three
 * printings: aligned text, CSV parsed back field by field, GitHub Markdown.
 */
import { describe, expect, it } from 'vitest';
import {
  compareObservations,
  comparisonTable,
  diskperfObservation,
  formatTimes,
  tableCsv,
  tableMarkdown,
  tableText,
  type Comparison,
  type ComparisonTable,
  type Observation,
} from '../../../shared/compare.ts';
import { comparabilityWarnings } from '../../../shared/comparison/warnings.ts';

const run = (runId: string, device: string, host: string, values: Observation['values'], extra = {}): Observation => ({
  runId,
  device,
  label: device.split('/')[0]!,
  native: device.split('/')[1]!,
  format: 'iostat',
  platform: 'linux',
  host,
  values,
  samples: 10,
  ...extra,
});

/** A 2x difference in read IOPS, none in write IOPS, read latency near 0 on A; A spans two hosts, B has a since-boot-only series. */
const A = [
  run('a1', 'fast/sda', 'h1', { read_iops: 200, write_iops: 100, read_ms: 0.3 }),
  run('a2', 'fast/sda', 'h2', { read_iops: 210, write_iops: 104, read_ms: 0.32 }),
];
const B = [
  run('b1', 'slow/sda', 'h1', { read_iops: 100, write_iops: 101, read_ms: 2 }),
  run('b2', 'slow/sda', 'h1', { read_iops: 104, write_iops: 99, read_ms: 2.1 }, { sinceBootOnly: true }),
];
const iostat = compareObservations(A, B, { labels: { a: 'fast', b: 'slow' } });

/** Two diskperf metrics at three request sizes, 2 runs a side, A twice B. */
function diskperfSides(): Comparison {
  const table = (scale: number) =>
    [4096, 65536, 1048576].map((req_size, i) => ({
      req_size,
      values: { fwd_wt: (i + 1) * scale, fwd_rd: (i + 2) * scale },
    }));
  const side = (label: string, scales: number[]) =>
    scales.map((s, r) => diskperfObservation(`${label}${r}`, label, table(s)));
  return compareObservations(side('new', [2, 2.1]), side('old', [1, 1.02]), { metric: 'all' });
}

const cellOf = (t: ComparisonTable, row: { cells: string[] }, column: string) => row.cells[t.columns.indexOf(column)]!;

/** RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks; records end with CRLF. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"' && field === '') {
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) throw new Error('unterminated quote');
        field += text.slice(i, q);
        if (text[q + 1] === '"') {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
    } else if (ch === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (ch === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else {
      if (ch === '\n' || ch === '"') throw new Error(`bare ${JSON.stringify(ch)} at ${i}`);
      field += ch;
      i++;
    }
  }
  if (field !== '' || record.length > 0) throw new Error('last record without CRLF');
  return records;
}

describe('the comparison table', () => {
  const t = comparisonTable(iostat);

  it('has a column per figure, units in a column of their own when the metrics have several', () => {
    expect(t.title).toBe('fast (A) vs slow (B) on all');
    expect(t.columns).toEqual([
      'metric',
      'unit',
      'A',
      'A spread',
      'n A',
      'B',
      'B spread',
      'n B',
      'ratio',
      '95% interval',
      'p',
      '~',
      'note',
    ]);
    expect(t.rows.map((r) => [r.kind, r.metric])).toEqual([
      ['point', 'read_iops'],
      ['point', 'write_iops'],
      ['point', 'read_ms'],
      ['summary', 'all'],
    ]);
    for (const r of t.rows) expect(r.cells).toHaveLength(t.columns.length);
  });

  it('says each point as the comparison does: centres, spreads, runs, ratio, interval, p, and ~ where not significant', () => {
    for (const row of t.rows.filter((r) => r.kind === 'point')) {
      const p = iostat.rows.find((r) => r.metric === row.metric)!;
      expect(cellOf(t, row, 'A')).toBe(String(p.a));
      expect(cellOf(t, row, 'B')).toBe(String(p.b));
      expect(cellOf(t, row, 'n A')).toBe('2');
      expect(cellOf(t, row, 'n B')).toBe('2');
      expect(cellOf(t, row, 'ratio')).toBe(formatTimes(p.ratio));
      expect(cellOf(t, row, '95% interval')).toBe(`[${formatTimes(p.ci!.low)}-${formatTimes(p.ci!.high)}]`);
      expect(cellOf(t, row, '~')).toBe(p.significant === false ? '~' : '');
    }
    const rowOf = (metric: string) => t.rows.find((r) => r.metric === metric)!;
    // 200 and 210 around 205: 5/205 of the centre.
    expect(cellOf(t, rowOf('read_iops'), 'A spread')).toBe('±2.4%');
    expect(iostat.rows.find((r) => r.metric === 'write_iops')!.significant).toBe(false);
    expect(cellOf(t, rowOf('write_iops'), '~')).toBe('~');
    expect(iostat.rows.find((r) => r.metric === 'read_iops')!.significant).toBe(true);
    expect(cellOf(t, rowOf('read_iops'), '~')).toBe('');
    const summary = t.rows.at(-1)!;
    expect(cellOf(t, summary, 'ratio')).toBe(formatTimes(iostat.ratio));
    expect(cellOf(t, summary, 'note')).toBe(
      `3 points, ${formatTimes(iostat.min)}-${formatTimes(iostat.max)}; ${iostat.ci!.label}`,
    );
    // No geometric mean of ops/s and ms.
    expect(cellOf(t, summary, 'A')).toBe('');
  });

  it('has a note for every warning, numbered in order, the setups ones marked; a footnote for the point near 0', () => {
    expect(iostat.warnings.length).toBeGreaterThanOrEqual(3);
    const setups = new Set(comparabilityWarnings(A, B));
    expect(setups.size).toBeGreaterThan(0);
    const warnings = t.notes.filter((n) => n.kind === 'warning');
    expect(warnings.map((n) => [n.mark, n.text, n.setups === true])).toEqual(
      iostat.warnings.map((w, i) => [String(i + 1), w, setups.has(w)]),
    );
    expect(iostat.warnings).toContainEqual(expect.stringMatching(/^A spans 2 hosts/));
    expect(iostat.warnings).toContainEqual(expect.stringMatching(/^B: 1 iostat series hold only their since-boot/));
    const readMs = t.rows.find((r) => r.metric === 'read_ms')!;
    expect(readMs.marks).toEqual(['a']);
    expect(t.notes[0]).toEqual({ mark: 'a', kind: 'point', text: expect.stringMatching(/^a side is under 0\.5 ms/) });
    const advice = t.notes.filter((n) => n.kind === 'advice').map((n) => n.text);
    expect(advice.at(-1)).toBe(iostat.sentence);
    expect(advice).toContain(`runs needed: ${iostat.advice!.note}`);
  });

  it('prints as aligned text: the title, the header, a line a row (marks after the note), then the notes', () => {
    const lines = tableText(t).split('\n');
    expect(lines[0]).toBe(t.title);
    const header = lines[2]!;
    expect(header).toMatch(/^metric +unit +A +A spread +n A +B +B spread +n B +ratio +95% interval +p +~ +note$/);
    const body = lines.slice(3, 3 + t.rows.length);
    // Numbers right-aligned: every ratio ends where its header does; words left-aligned under theirs.
    const ratioEnd = header.indexOf('ratio') + 'ratio'.length;
    const intervalAt = header.indexOf('95% interval');
    t.rows.forEach((row, i) => {
      expect(body[i]!.slice(0, ratioEnd).endsWith(` ${cellOf(t, row, 'ratio')}`)).toBe(true);
      expect(body[i]!.slice(intervalAt).startsWith(cellOf(t, row, '95% interval'))).toBe(true);
    });
    expect(body[2]).toMatch(/ \(a\)$/);
    expect(lines).toContain(`(a) ${t.notes[0]!.text}`);
    iostat.warnings.forEach((w, i) => expect(lines).toContain(`  [${i + 1}] ${w}`));
    expect(lines.at(-1)).toBe(iostat.sentence);
  });

  it('prints as RFC 4180 CSV that parses back to the same cells, the notes in the last field', () => {
    const csv = tableCsv(t);
    expect(csv.endsWith('\r\n')).toBe(true);
    const records = parseCsv(csv);
    expect(records[0]).toEqual([...t.columns, 'notes']);
    expect(records).toHaveLength(1 + t.rows.length);
    t.rows.forEach((row, i) => expect(records[i + 1]!.slice(0, -1)).toEqual(row.cells));
    expect(records[3]!.at(-1)).toBe(`(a) ${t.notes[0]!.text}`);
    expect(records[1]!.at(-1)).toBe('');
    const summaryNotes = records.at(-1)!.at(-1)!.split('\n');
    iostat.warnings.forEach((w, i) => expect(summaryNotes).toContain(`[${i + 1}] ${w}`));
    expect(summaryNotes.at(-1)).toBe(iostat.sentence);
  });

  it('prints as a GitHub table with numbered notes, its markup escaped', () => {
    const md = tableMarkdown(t);
    const lines = md.split('\n');
    expect(lines[0]).toBe('### fast (A) vs slow (B) on all');
    const tableLines = lines.filter((l) => l.startsWith('|'));
    expect(tableLines).toHaveLength(2 + t.rows.length);
    for (const l of tableLines) expect(l.split(/(?<!\\)\|/)).toHaveLength(t.columns.length + 2);
    expect(tableLines[1]).toMatch(/^\| --- \| --- \| ---: \|/);
    const writeIops = tableLines.find((l) => l.startsWith('| write\\_iops |'))!;
    expect(writeIops).toContain('| \\~ |');
    expect(tableLines.find((l) => l.startsWith('| read\\_ms |'))).toMatch(/\| \(a\) \|$/);
    expect(lines).toContain(`- **(a)** ${t.notes[0]!.text.replace(/[_*]/g, '\\$&')}`);
    iostat.warnings.forEach((_, i) => expect(lines.some((l) => l.startsWith(`${i + 1}. `))).toBe(true));
    expect(lines.filter((l) => l !== '').at(-1)).toBe(iostat.sentence.replace(/[[\]~]/g, '\\$&'));
  });
});

describe('geomean rows', () => {
  it('close each metric of several points, their centres the geometric means of the points, their ratio the metric one', () => {
    const c = diskperfSides();
    const t = comparisonTable(c);
    expect(t.columns.slice(0, 3)).toEqual(['metric', 'req size (bytes)', 'A MB/s']);
    expect(t.rows.map((r) => `${r.kind} ${r.metric}`)).toEqual([
      ...Array<string>(3).fill('point fwd_wt'),
      'geomean fwd_wt',
      ...Array<string>(3).fill('point fwd_rd'),
      'geomean fwd_rd',
      'summary all',
    ]);
    for (const metric of ['fwd_wt', 'fwd_rd'] as const) {
      const row = t.rows.find((r) => r.kind === 'geomean' && r.metric === metric)!;
      const m = c.byMetric[metric]!;
      expect(cellOf(t, row, 'req size (bytes)')).toBe('geomean');
      expect(cellOf(t, row, 'ratio')).toBe(formatTimes(m.ratio));
      expect(Number(cellOf(t, row, 'A MB/s')) / Number(cellOf(t, row, 'B MB/s'))).toBeCloseTo(m.ratio, 2);
      expect(cellOf(t, row, 'note')).toBe(`3 points, ${formatTimes(m.min)}-${formatTimes(m.max)}`);
      expect(cellOf(t, row, 'n A')).toBe('');
    }
    const summary = t.rows.at(-1)!;
    expect(cellOf(t, summary, 'req size (bytes)')).toBe('geomean');
    expect(cellOf(t, summary, 'ratio')).toBe(formatTimes(c.ratio));
    expect(cellOf(t, summary, 'p')).toBe(c.p! < 0.001 ? '<0.001' : String(c.p));
  });

  it('one metric: the summary is its geomean, no row of its own', () => {
    const one = (label: string, values: number[]) =>
      diskperfObservation(
        label,
        label,
        values.map((fwd_wt, i) => ({ req_size: 4096 << i, values: { fwd_wt } })),
      );
    const c = compareObservations([one('x', [2, 3])], [one('y', [1, 1])], { metric: 'fwd_wt' });
    const t = comparisonTable(c);
    expect(t.rows.map((r) => r.kind)).toEqual(['point', 'point', 'summary']);
    // One run a side: no spread, interval, p or ~ columns; n stays.
    expect(t.columns).toEqual(['metric', 'req size (bytes)', 'A MB/s', 'n A', 'B MB/s', 'n B', 'ratio', 'note']);
    expect(cellOf(t, t.rows.at(-1)!, 'note')).toMatch(/^2 points, 2\.00x-3\.00x; no interval: /);
  });
});
