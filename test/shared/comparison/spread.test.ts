/**
 * Each side's spread at a point (ComparisonPoint.spread): the runs behind its
 * centre, the smallest and the largest of their values, on constructed data
 * whose answer is known: one device, the disks of one iostat session (a run's
 * value the geometric mean of its disks), a class of labels, a run that lacks
 * a point, an idle disk left out.
 */
import { describe, expect, it } from 'vitest';
import {
  compareObservations,
  diskperfObservation,
  spreadText,
  type Comparison,
  type Observation,
} from '../../../shared/compare.ts';

const iostat = (runId: string, device: string, values: Observation['values']): Observation => ({
  runId,
  device,
  label: device.split('/')[0]!,
  native: device.split('/')[1]!,
  format: 'iostat',
  values,
  samples: 10,
});

/** Runs of one device, one value each, run ids `${prefix}1`, `${prefix}2` ... */
const runsOf = (prefix: string, device: string, values: number[]) =>
  values.map((v, i) => iostat(`${prefix}${i + 1}`, device, { read_iops: v }));

const only = (c: Comparison) => {
  expect(c.rows).toHaveLength(1);
  return c.rows[0]!;
};

describe('a side spread', () => {
  it('one device a side: its runs, the least and the most, beside the median', () => {
    const c = compareObservations(runsOf('a', 'x/sda', [10, 12, 11]), runsOf('b', 'y/sda', [5, 6]), {
      metric: 'read_iops',
    });
    const p = only(c);
    expect(p.a).toBe(11);
    expect(p.b).toBe(5.5);
    expect(p.spread).toEqual({ a: { runs: 3, low: 10, high: 12 }, b: { runs: 2, low: 5, high: 6 } });
    // The farthest run from the centre in percent of it: 1/11 and 0.5/5.5 of the centre.
    expect(spreadText(p.a, p.spread!.a)).toBe('±9.1%');
    expect(spreadText(p.b, p.spread!.b)).toBe('±9.1%');
  });

  it('one run says nothing of spread: runs 1, low = high = the value, printed empty', () => {
    const p = only(
      compareObservations(runsOf('a', 'x/sda', [7]), runsOf('b', 'y/sda', [3.5]), { metric: 'read_iops' }),
    );
    expect(p.spread).toEqual({ a: { runs: 1, low: 7, high: 7 }, b: { runs: 1, low: 3.5, high: 3.5 } });
    expect(spreadText(p.a, p.spread!.a)).toBe('');
  });

  it("the disks of one iostat session: each run's value is the geometric mean of its disks", () => {
    // Run 1: sda 100, sdb 400 -> 200; run 2: sda 400, sdb 100 -> 200; run 3: sda 100, sdb 100 -> 100.
    const session = [
      [100, 400],
      [400, 100],
      [100, 100],
    ].flatMap(([sda, sdb], r) => [
      iostat(`s${r + 1}`, 'x/sda', { read_iops: sda! }),
      iostat(`s${r + 1}`, 'x/sdb', { read_iops: sdb! }),
    ]);
    const other = [
      [50, 50],
      [80, 20],
    ].flatMap(([sda, sdb], r) => [
      iostat(`o${r + 1}`, 'y/sda', { read_iops: sda! }),
      iostat(`o${r + 1}`, 'y/sdb', { read_iops: sdb! }),
    ]);
    const c = compareObservations(session, other, { metric: 'read_iops' });
    expect(c.paired).toBe(true);
    expect(only(c).spread).toEqual({ a: { runs: 3, low: 100, high: 200 }, b: { runs: 2, low: 40, high: 50 } });
  });

  it('a class of labels: every run of every device counts once, each a value of its own', () => {
    const a = [...runsOf('p', 'p/sda', [100, 120]), ...runsOf('q', 'q/sda', [200, 180, 190])];
    const c = compareObservations(a, runsOf('b', 'z/sda', [10, 11]), { metric: 'read_iops' });
    expect(c.ci!.over).toBe('devices');
    expect(only(c).spread!.a).toEqual({ runs: 5, low: 100, high: 200 });
  });

  it('at each request size, only the runs that measured it: a run short of a size is not counted there', () => {
    const table = (scale: number, sizes: number[]) =>
      sizes.map((req_size) => ({ req_size, values: { fwd_wt: (req_size / 1024) * scale } }));
    const a = [
      diskperfObservation('a1', 'disk', table(1, [4096, 8192])),
      diskperfObservation('a2', 'disk', table(1.5, [4096, 8192])),
      diskperfObservation('a3', 'disk', table(2, [4096])),
    ];
    const b = [diskperfObservation('b1', 'other', table(1, [4096, 8192]))];
    const c = compareObservations(a, b, { metric: 'fwd_wt' });
    const at = (size: number) => c.rows.find((r) => r.req_size === size)!;
    expect(at(4096).spread!.a).toEqual({ runs: 3, low: 4, high: 8 });
    expect(at(8192).spread!.a).toEqual({ runs: 2, low: 8, high: 12 });
    expect(at(8192).spread!.b).toEqual({ runs: 1, low: 8, high: 8 });
  });

  it('a disk idle at the point is left out of the runs as it is of the centre', () => {
    const side = (prefix: string, sda: number[], sdc: number[]) =>
      sda.flatMap((v, r) => [
        iostat(`${prefix}${r + 1}`, `${prefix}/sda`, { write_iops: v }),
        iostat(`${prefix}${r + 1}`, `${prefix}/sdc`, { write_iops: sdc[r]! }),
      ]);
    const c = compareObservations(side('a', [30, 60], [0, 0]), side('b', [10, 20], [0, 0]), { metric: 'write_iops' });
    const p = only(c);
    expect(p.notes).toEqual(['sdc measured 0 on both sides: left out of this point']);
    expect(p.spread).toEqual({ a: { runs: 2, low: 30, high: 60 }, b: { runs: 2, low: 10, high: 20 } });
  });

  it('an excluded point has no spread', () => {
    const c = compareObservations(runsOf('a', 'x/sda', [0, 0]), runsOf('b', 'y/sda', [5, 6]), {
      metric: 'read_iops',
    });
    expect(only(c).excluded).toBe('zero on A');
    expect(only(c).spread).toBeUndefined();
  });
});
