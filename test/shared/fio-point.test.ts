/**
 * fio points (shared/fio-point.ts): a point's key and fioPointOf are inverses (job-only
 * points and block-size ranges included), points sort in sweep order, and a point and a
 * block size print the way people write them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  blockSizeText,
  compareFioPoints,
  fioPointKey,
  fioPointOf,
  fioPointText,
  type FioPoint,
} from '../../shared/fio-point.ts';

describe('fioPointKey and fioPointOf', () => {
  it('writes a full point as rw then each option as name=value', () => {
    expect(fioPointKey({ rw: 'randread', bs: 4096, iodepth: 32, numjobs: 1 })).toBe(
      'randread bs=4096 iodepth=32 numjobs=1',
    );
    expect(fioPointOf('randread bs=4096 iodepth=32 numjobs=1')).toEqual({
      rw: 'randread',
      bs: 4096,
      iodepth: 32,
      numjobs: 1,
    });
  });

  it('names a point without job options by its job', () => {
    expect(fioPointKey({ job: 'seq-read' })).toBe('job=seq-read');
    expect(fioPointOf('job=seq-read')).toEqual({ job: 'seq-read' });
    // A job name with spaces and `=` in it, as fio allows.
    expect(fioPointOf(fioPointKey({ job: 'All clients' }))).toEqual({ job: 'All clients' });
    expect(fioPointOf(fioPointKey({ job: 'a=b c' }))).toEqual({ job: 'a=b c' });
  });

  it('keeps a block size that names no one size as its text', () => {
    const range: FioPoint = { rw: 'randrw', bs: '4k-32k', iodepth: 8, numjobs: 2 };
    expect(fioPointKey(range)).toBe('randrw bs=4k-32k iodepth=8 numjobs=2');
    expect(fioPointOf(fioPointKey(range))).toEqual(range);
    const perDirection: FioPoint = { rw: 'rw', bs: '64k,4k', iodepth: 1, numjobs: 1 };
    expect(fioPointOf(fioPointKey(perDirection))).toEqual(perDirection);
    expect(typeof fioPointOf('read bs=131072 iodepth=1 numjobs=1').bs).toBe('number');
  });

  it('leaves out the options a key leaves empty', () => {
    expect(fioPointKey({ rw: 'read' })).toBe('read bs= iodepth= numjobs=');
    expect(fioPointOf('read bs= iodepth= numjobs=')).toEqual({ rw: 'read' });
    expect(fioPointOf('write bs=8192 iodepth= numjobs=4')).toEqual({ rw: 'write', bs: 8192, numjobs: 4 });
  });

  it('reads a key of no known shape as a job name', () => {
    expect(fioPointOf('something else')).toEqual({ job: 'something else' });
  });

  it('round-trips every point (property)', () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9_-]{0,11}$/);
    const count = fc.integer({ min: 0, max: 4096 });
    const bs = fc.oneof(fc.integer({ min: 1, max: 2 ** 30 }), fc.constantFrom('4k-32k', '64k,4k', '512-1m', '4k:16k'));
    const full = fc.record(
      {
        rw: fc.constantFrom('read', 'write', 'randread', 'randwrite', 'randrw', 'trimwrite'),
        bs,
        iodepth: count,
        numjobs: count,
      },
      { requiredKeys: ['rw'] },
    );
    const jobOnly = fc.record({ job: fc.oneof(word, fc.constant('All clients')) });
    fc.assert(
      fc.property(fc.oneof(full, jobOnly), (point: FioPoint) => {
        const key = fioPointKey(point);
        expect(fioPointOf(key)).toEqual(point);
        expect(fioPointKey(fioPointOf(key))).toBe(key);
      }),
      { numRuns: 300, seed: 42 },
    );
  });

  it('gives two points one key only when they are the same point', () => {
    const points: FioPoint[] = [
      { rw: 'read', bs: 4096, iodepth: 1, numjobs: 1 },
      { rw: 'read', bs: 4096, iodepth: 1, numjobs: 2 },
      { rw: 'read', bs: 4096, iodepth: 2, numjobs: 1 },
      { rw: 'read', bs: 8192, iodepth: 1, numjobs: 1 },
      { rw: 'randread', bs: 4096, iodepth: 1, numjobs: 1 },
      { rw: 'read', bs: '4k-8k', iodepth: 1, numjobs: 1 },
      { job: 'read' },
    ];
    expect(new Set(points.map(fioPointKey)).size).toBe(points.length);
  });
});

describe('compareFioPoints', () => {
  it('orders a sweep by rw, then numjobs, then iodepth, then block size', () => {
    const p = (rw: string, bs: number | string, iodepth: number, numjobs: number): FioPoint => ({
      rw,
      bs,
      iodepth,
      numjobs,
    });
    const sorted = [
      p('randread', 4096, 1, 1),
      p('randread', 65536, 1, 1),
      p('randread', 4096, 32, 1),
      p('randread', 1048576, 32, 1),
      p('randread', 4096, 1, 4),
      p('read', 512, 1, 1),
      p('read', 131072, 1, 1),
      p('read', '4k-32k', 1, 1),
      p('write', 4096, 1, 1),
    ];
    const shuffled = [sorted[5]!, sorted[8]!, sorted[2]!, sorted[7]!, sorted[0]!, sorted[4]!, sorted[6]!, sorted[1]!];
    shuffled.push(sorted[3]!);
    expect([...shuffled].sort(compareFioPoints)).toEqual(sorted);
  });

  it('sorts block sizes by number, not by their text', () => {
    const sizes = [131072, 4096, 1048576, 512, 65536];
    const points = sizes.map((bs) => ({ rw: 'read', bs, iodepth: 1, numjobs: 1 }));
    expect(points.sort(compareFioPoints).map((x) => x.bs)).toEqual([512, 4096, 65536, 131072, 1048576]);
  });

  it('puts points with job options before job-only points, and those by name', () => {
    const points: FioPoint[] = [{ job: 'seq' }, { rw: 'write', bs: 4096, iodepth: 1, numjobs: 1 }, { job: 'rand' }];
    expect(points.sort(compareFioPoints)).toEqual([
      { rw: 'write', bs: 4096, iodepth: 1, numjobs: 1 },
      { job: 'rand' },
      { job: 'seq' },
    ]);
  });

  it('is 0 for equal points and antisymmetric', () => {
    const a: FioPoint = { rw: 'read', bs: 4096, iodepth: 4, numjobs: 1 };
    const b: FioPoint = { rw: 'read', bs: 8192, iodepth: 4, numjobs: 1 };
    expect(compareFioPoints(a, { ...a })).toBe(0);
    expect(Math.sign(compareFioPoints(a, b))).toBe(-1);
    expect(Math.sign(compareFioPoints(b, a))).toBe(1);
    expect(compareFioPoints({ job: 'x' }, { job: 'x' })).toBe(0);
  });
});

describe('blockSizeText', () => {
  it.each([
    [512, '512'],
    [1024, '1k'],
    [1536, '1536'],
    [4096, '4k'],
    [131072, '128k'],
    [1048576, '1m'],
    [1572864, '1536k'],
    [4194304, '4m'],
    [1073741824, '1024m'],
  ])('writes %d bytes as %s (1024 bases)', (bytes, text) => {
    expect(blockSizeText(bytes)).toBe(text);
  });

  it('keeps a text as it is, and writes ? for none', () => {
    expect(blockSizeText('4k-32k')).toBe('4k-32k');
    expect(blockSizeText(undefined)).toBe('?');
  });
});

describe('fioPointText', () => {
  it('prints rw, block size, queue depth and jobs', () => {
    expect(fioPointText({ rw: 'randread', bs: 4096, iodepth: 32, numjobs: 1 })).toBe('randread 4k qd32 nj1');
    expect(fioPointText({ rw: 'write', bs: 1048576, iodepth: 4, numjobs: 8 })).toBe('write 1m qd4 nj8');
    expect(fioPointText({ rw: 'randrw', bs: '4k-32k', iodepth: 1, numjobs: 1 })).toBe('randrw 4k-32k qd1 nj1');
  });

  it('prints ? for options a point lacks, and a job-only point by its name', () => {
    expect(fioPointText({ rw: 'read' })).toBe('read ? qd? nj?');
    expect(fioPointText({ job: 'seq-read' })).toBe('job seq-read');
    expect(fioPointText(fioPointOf('job=randread-4k'))).toBe('job randread-4k');
  });
});
