/**
 * Property tests (fast-check) for the parsers through the full driver:
 *  (a) generated Solaris -xn, Linux sysstat -x (12.x) and FreeBSD -x logs parse back
 *      to exactly the printed numbers (raw) and the expected canonical values;
 *  (b) generated diskperf tables parse back to their numbers;
 *  (c) arbitrary bytes and strings never make parseStream throw anything but ParseError.
 * numRuns defaults to a few hundred so the file runs in seconds; set FC_NUM_RUNS for a
 * longer stress run (FC_NUM_RUNS=20000 npx vitest run test/shared/parsers/properties.test.ts).
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DISKPERF_METRICS, type DiskperfMetric, type IostatMetric } from '../../../shared/metrics.ts';
import type { DiskperfRun, IostatRun, Run } from '../../../shared/model.ts';
import { ParseError, parseStream } from '../../../shared/parsers/index.ts';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS) > 0 ? Number(process.env.FC_NUM_RUNS) : 250;
const params = (numRuns = NUM_RUNS) => ({
  numRuns,
  ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
});

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

interface Outcome {
  runs: Run[];
  lines: number;
  runCount: number;
}

async function parse(text: string | Uint8Array, chunkSize = 0): Promise<Outcome> {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : Buffer.from(text);
  const chunks: Buffer[] = [];
  if (chunkSize > 0) for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.subarray(i, i + chunkSize));
  else chunks.push(bytes);
  const runs: Run[] = [];
  const result = await parseStream(chunks, { source: 'prop.txt', onRun: (run) => runs.push(run) });
  return { runs, lines: result.lines, runCount: result.runs };
}

function near(actual: number | undefined, expected: number, what: string): void {
  if (typeof actual !== 'number' || Math.abs(actual - expected) > Math.max(1e-9, Math.abs(expected) * 1e-9)) {
    throw new Error(`${what}: got ${actual}, expected ${expected}`);
  }
}

/** A printed decimal with `decimals` fraction digits from an integer count of its last digit. */
function fixed(units: number, decimals: number): string {
  if (decimals === 0) return String(units);
  const scale = 10 ** decimals;
  return `${Math.floor(units / scale)}.${String(units % scale).padStart(decimals, '0')}`;
}

type Layout = 'aligned' | 'no-leading-spaces' | 'some-leading-spaces-lost' | 'collapsed';
const layoutArb = fc.constantFrom<Layout>('aligned', 'no-leading-spaces', 'some-leading-spaces-lost', 'collapsed');

/** Apply a whitespace mangling as blogs and forums do; `bits` picks lines for the random mode. */
function mangle(lines: string[], layout: Layout, bits: number): string[] {
  switch (layout) {
    case 'aligned':
      return lines;
    case 'no-leading-spaces':
      return lines.map((l) => l.trimStart());
    case 'some-leading-spaces-lost':
      return lines.map((l, i) => ((bits >>> (i % 31)) & 1 ? l.trimStart() : l));
    case 'collapsed':
      return lines.map((l) => l.trim().replace(/[ \t]+/g, ' '));
  }
}

interface ColumnDef {
  name: string;
  /** Fraction digits as the platform prints the column. */
  decimals: number;
  width: number;
  metric?: IostatMetric;
  factor?: number;
  /** Largest value generated, in units of the last printed digit. */
  max: number;
}

const BIG = 100_000_000;

/** A generated table: printed cells and the numbers they stand for. */
interface Cell {
  text: string;
  value: number;
}

function cellArb(column: ColumnDef): fc.Arbitrary<Cell> {
  // Mostly small values, sometimes zero, sometimes wide enough to overflow the column.
  return fc
    .oneof(
      { weight: 1, arbitrary: fc.constant(0) },
      { weight: 4, arbitrary: fc.integer({ min: 0, max: Math.min(column.max, 10 ** (column.decimals + 4)) }) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: column.max }) },
    )
    .map((units) => {
      const text = fixed(units, column.decimals);
      return { text, value: Number(text) };
    });
}

interface Report {
  rows: { device: string; cells: Cell[] }[];
}

function reportsArb(
  devices: fc.Arbitrary<string>,
  columns: ColumnDef[],
  maxDevices = 4,
): fc.Arbitrary<{ devices: string[]; reports: Report[] }> {
  return fc.uniqueArray(devices, { minLength: 1, maxLength: maxDevices }).chain((names) =>
    fc
      .array(fc.tuple(...names.map(() => fc.tuple(...columns.map(cellArb)))), { minLength: 1, maxLength: 5 })
      .map((reports) => ({
        devices: names,
        reports: reports.map((rows) => ({ rows: rows.map((cells, i) => ({ device: names[i]!, cells })) })),
      })),
  );
}

/** What a parsed run must hold for a generated iostat table. */
function checkIostatRun(
  run: Run,
  columns: ColumnDef[],
  generated: { devices: string[]; reports: Report[] },
  platform: string,
  times?: string[],
): void {
  if (run.format !== 'iostat') throw new Error(`expected an iostat run, got ${run.format}`);
  const iostat = run as IostatRun;
  expect(iostat.platform).toBe(platform);
  expect(iostat.warnings).toEqual([]);
  expect(iostat.reports).toBe(generated.reports.length);
  expect(iostat.series.map((s) => s.device)).toEqual(generated.devices);
  const n = generated.reports.length;
  const hasTotal = columns.some((c) => c.metric === 'iops');
  for (const [d, device] of generated.devices.entries()) {
    const series = iostat.series[d]!;
    expect(series.sampleCount).toBe(n);
    expect(series.samples!.map((s) => s.report)).toEqual([...Array(n).keys()]);
    const perMetric = new Map<IostatMetric, number[]>();
    generated.reports.forEach((report, r) => {
      const sample = series.samples![r]!;
      const cells = report.rows.find((row) => row.device === device)!.cells;
      expect(sample.sinceBoot).toBe(r === 0);
      if (times) expect(sample.time).toBe(times[r]);
      const raw: Record<string, number> = {};
      const values: Partial<Record<IostatMetric, number>> = {};
      columns.forEach((column, i) => {
        raw[column.name] = cells[i]!.value;
        if (column.metric) values[column.metric] = cells[i]!.value * (column.factor ?? 1);
      });
      if (!hasTotal) values.iops = values.read_iops! + values.write_iops!;
      // Raw numbers are exactly what was printed.
      expect(sample.raw).toEqual(raw);
      expect(Object.keys(sample.values).sort()).toEqual(Object.keys(values).sort());
      for (const [metric, v] of Object.entries(values))
        near(sample.values[metric as IostatMetric], v, `${device} report ${r} ${metric}`);
      if (n === 1 || r > 0)
        for (const [metric, v] of Object.entries(values))
          perMetric.set(metric as IostatMetric, [...(perMetric.get(metric as IostatMetric) ?? []), v]);
    });
    for (const [metric, vs] of perMetric) {
      const summary = series.summary[metric]!;
      expect(summary.count).toBe(vs.length);
      near(summary.mean, vs.reduce((a, b) => a + b, 0) / vs.length, `${device} ${metric} mean`);
      near(summary.min, Math.min(...vs), `${device} ${metric} min`);
      near(summary.max, Math.max(...vs), `${device} ${metric} max`);
    }
  }
}

const pick = <T>(items: readonly T[]) => fc.constantFrom(...items);
const int = (min: number, max: number) => fc.integer({ min, max });

// ---------------------------------------------------------------------------------------------
// (a) iostat tables
// ---------------------------------------------------------------------------------------------

const solarisDevice = fc.oneof(
  fc
    .tuple(int(0, 9), int(0, 15), int(0, 7), fc.option(int(0, 7), { nil: undefined }))
    .map(([c, t, d, s]) => `c${c}t${t}d${d}${s === undefined ? '' : `s${s}`}`),
  fc.tuple(int(0, 9), fc.stringMatching(/^5000[0-9A-F]{12}$/)).map(([c, wwn]) => `c${c}t${wwn}d0`),
  int(0, 99).map((n) => `d${n}`),
  fc.tuple(pick(['nas01', 'filer', 'fs-2']), pick(['/export/home', '/vol/vol0', '/data'])).map(([h, p]) => `${h}:${p}`),
);

const solarisColumns = (megabytes: boolean): ColumnDef[] => [
  { name: 'r/s', decimals: 1, width: 6, metric: 'read_iops', max: BIG },
  { name: 'w/s', decimals: 1, width: 6, metric: 'write_iops', max: BIG },
  megabytes
    ? { name: 'Mr/s', decimals: 1, width: 6, metric: 'read_kBps', factor: 1024, max: BIG }
    : { name: 'kr/s', decimals: 1, width: 6, metric: 'read_kBps', max: BIG },
  megabytes
    ? { name: 'Mw/s', decimals: 1, width: 6, metric: 'write_kBps', factor: 1024, max: BIG }
    : { name: 'kw/s', decimals: 1, width: 6, metric: 'write_kBps', max: BIG },
  { name: 'wait', decimals: 1, width: 4, metric: 'wait_queue', max: 100_000 },
  { name: 'actv', decimals: 1, width: 4, metric: 'active_queue', max: 100_000 },
  { name: 'wsvc_t', decimals: 1, width: 6, metric: 'wait_ms', max: BIG },
  { name: 'asvc_t', decimals: 1, width: 6, metric: 'service_ms', max: BIG },
  { name: '%w', decimals: 0, width: 3, max: 100 },
  { name: '%b', decimals: 0, width: 3, metric: 'util_pct', max: 100 },
];

function solarisLog(columns: ColumnDef[], generated: { reports: Report[] }, withCommand: boolean): string[] {
  const lines: string[] = [];
  if (withCommand) lines.push(`iostat -xn${columns[2]!.name === 'Mr/s' ? 'M' : ''} 5 ${generated.reports.length}`);
  for (const report of generated.reports) {
    lines.push('                    extended device statistics              ');
    lines.push(`${columns.map((c) => ` ${c.name.padStart(c.width)}`).join('')} device`);
    for (const row of report.rows)
      lines.push(`${row.cells.map((cell, i) => ` ${cell.text.padStart(columns[i]!.width)}`).join('')} ${row.device}`);
  }
  return lines;
}

const linuxDevice = fc.oneof(
  fc.stringMatching(/^sd[a-z]{1,2}$/),
  fc
    .tuple(int(0, 3), int(1, 4), fc.option(int(1, 9), { nil: undefined }))
    .map(([c, n, p]) => `nvme${c}n${n}${p === undefined ? '' : `p${p}`}`),
  int(0, 20).map((n) => `dm-${n}`),
  int(0, 127).map((n) => `md${n}`),
  fc.stringMatching(/^(xvd|vd)[a-z]$/),
  int(0, 9).map((n) => `loop${n}`),
  fc.constantFrom('mmcblk0', 'mmcblk0p1', 'sr0'),
);

function linuxColumns(flush: boolean, megabytes: boolean): ColumnDef[] {
  const d2 = (name: string, metric?: IostatMetric, factor?: number, max = BIG, width = 8): ColumnDef => ({
    name,
    decimals: 2,
    width,
    max,
    ...(metric ? { metric } : {}),
    ...(factor ? { factor } : {}),
  });
  const u = megabytes ? 'MB' : 'kB';
  const f = megabytes ? 1024 : undefined;
  return [
    d2('r/s', 'read_iops'),
    d2(`r${u}/s`, 'read_kBps', f, BIG, 9),
    d2('rrqm/s'),
    d2('%rrqm', undefined, undefined, 10_000, 6),
    d2('r_await', 'read_ms', undefined, BIG, 7),
    d2('rareq-sz'),
    d2('w/s', 'write_iops'),
    d2(`w${u}/s`, 'write_kBps', f, BIG, 9),
    d2('wrqm/s'),
    d2('%wrqm', undefined, undefined, 10_000, 6),
    d2('w_await', 'write_ms', undefined, BIG, 7),
    d2('wareq-sz'),
    d2('d/s'),
    d2(`d${u}/s`, undefined, undefined, BIG, 9),
    d2('drqm/s'),
    d2('%drqm', undefined, undefined, 10_000, 6),
    d2('d_await', undefined, undefined, BIG, 7),
    d2('dareq-sz'),
    ...(flush ? [d2('f/s'), d2('f_await', undefined, undefined, BIG, 7)] : []),
    d2('aqu-sz', 'active_queue', undefined, BIG, 7),
    d2('%util', 'util_pct', undefined, 10_000, 6),
  ];
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** sysstat's C-locale -t time stamp (`01/15/2024 10:00:01 AM`) and its ISO form. */
function timestamp(epochSeconds: number): { printed: string; iso: string } {
  const d = new Date(epochSeconds * 1000);
  const [y, mo, da, h, mi, s] = [
    d.getUTCFullYear(),
    d.getUTCMonth() + 1,
    d.getUTCDate(),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
  ];
  const h12 = h % 12 === 0 ? 12 : h % 12;
  return {
    printed: `${pad2(mo)}/${pad2(da)}/${y} ${pad2(h12)}:${pad2(mi)}:${pad2(s)} ${h < 12 ? 'AM' : 'PM'}`,
    iso: `${y}-${pad2(mo)}-${pad2(da)}T${pad2(h)}:${pad2(mi)}:${pad2(s)}`,
  };
}

interface LinuxOptions {
  host: string;
  cpus: number;
  avgCpu: boolean;
  start?: number;
  interval: number;
}

function linuxLog(
  columns: ColumnDef[],
  generated: { reports: Report[] },
  o: LinuxOptions,
): { lines: string[]; times?: string[] } {
  const lines = [`Linux 5.15.0-91-generic (${o.host}) \t01/15/2024 \t_x86_64_\t(${o.cpus} CPU)`, ''];
  const times: string[] = [];
  generated.reports.forEach((report, r) => {
    if (o.start !== undefined) {
      const t = timestamp(o.start + r * o.interval);
      lines.push(t.printed);
      times.push(t.iso);
    }
    if (o.avgCpu)
      lines.push(
        'avg-cpu:  %user   %nice %system %iowait  %steal   %idle',
        '           3.49    0.01    1.09    0.38    0.00   95.03',
        '',
      );
    lines.push(`${'Device'.padEnd(12)}${columns.map((c) => ` ${c.name.padStart(c.width)}`).join('')}`);
    for (const row of report.rows)
      lines.push(
        `${row.device.padEnd(12)}${row.cells.map((cell, i) => ` ${cell.text.padStart(columns[i]!.width)}`).join('')}`,
      );
    lines.push('', '');
  });
  return o.start === undefined ? { lines } : { lines, times };
}

const freebsdDevice = fc.oneof(
  fc
    .tuple(pick(['ada', 'da', 'nvd', 'nda', 'mfid', 'vtbd', 'xbd', 'md', 'pass', 'cd']), int(0, 31))
    .map(([p, n]) => `${p}${n}`),
);

const FREEBSD_COLUMNS: ColumnDef[] = [
  { name: 'r/s', decimals: 0, width: 7, metric: 'read_iops', max: 10_000_000 },
  { name: 'w/s', decimals: 0, width: 7, metric: 'write_iops', max: 10_000_000 },
  { name: 'kr/s', decimals: 1, width: 8, metric: 'read_kBps', max: BIG },
  { name: 'kw/s', decimals: 1, width: 8, metric: 'write_kBps', max: BIG },
  { name: 'ms/r', decimals: 0, width: 5, metric: 'read_ms', max: 1_000_000 },
  { name: 'ms/w', decimals: 0, width: 5, metric: 'write_ms', max: 1_000_000 },
  { name: 'ms/o', decimals: 0, width: 5, max: 1_000_000 },
  { name: 'ms/t', decimals: 0, width: 5, metric: 'wait_ms', max: 1_000_000 },
  { name: 'qlen', decimals: 0, width: 4, metric: 'active_queue', max: 100_000 },
  { name: '%b', decimals: 0, width: 3, metric: 'util_pct', max: 100 },
];

function freebsdLog(generated: { reports: Report[] }, withCommand: boolean): string[] {
  const lines: string[] = [];
  if (withCommand) lines.push(`iostat -x -w 1 -c ${generated.reports.length}`);
  for (const report of generated.reports) {
    lines.push('                        extended device statistics  ');
    lines.push(`${'device'.padEnd(8)}${FREEBSD_COLUMNS.map((c) => ` ${c.name.padStart(c.width)}`).join('')}  `);
    for (const row of report.rows)
      lines.push(
        `${row.device.padEnd(8)}${row.cells.map((cell, i) => ` ${cell.text.padStart(FREEBSD_COLUMNS[i]!.width)}`).join('')} `,
      );
  }
  return lines;
}

describe('(a) generated iostat tables parse back to their numbers', () => {
  it('Solaris -xn (and -xnM)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.boolean().chain((megabytes) =>
          fc.record({
            megabytes: fc.constant(megabytes),
            generated: reportsArb(solarisDevice, solarisColumns(megabytes)),
          }),
        ),
        fc.boolean(),
        layoutArb,
        fc.nat(),
        async ({ megabytes, generated }, withCommand, layout, bits) => {
          const columns = solarisColumns(megabytes);
          const lines = mangle(solarisLog(columns, generated, withCommand), layout, bits);
          const { runs } = await parse(`${lines.join('\n')}\n`);
          expect(runs).toHaveLength(1);
          expect(runs[0]!.dialect).toBe(megabytes ? 'solaris-xnM' : 'solaris-xn');
          checkIostatRun(runs[0]!, columns, generated, 'solaris');
          if (withCommand) expect((runs[0] as IostatRun).meta.command).toBe(lines[0]!.trim());
        },
      ),
      params(),
    );
  });

  it('Linux sysstat -x 12.x (with and without flush columns, -k and -m, -t, avg-cpu)', async () => {
    const options = fc.record({
      host: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
      cpus: int(1, 256),
      avgCpu: fc.boolean(),
      start: fc.option(int(946_684_800, 2_000_000_000), { nil: undefined }),
      interval: int(1, 3600),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(fc.boolean(), fc.boolean()).chain(([flush, megabytes]) =>
          fc.record({
            flush: fc.constant(flush),
            megabytes: fc.constant(megabytes),
            generated: reportsArb(linuxDevice, linuxColumns(flush, megabytes)),
          }),
        ),
        options,
        layoutArb,
        fc.nat(),
        async ({ flush, megabytes, generated }, o, layout, bits) => {
          const columns = linuxColumns(flush, megabytes);
          const { lines, times } = linuxLog(columns, generated, o);
          const { runs } = await parse(mangle(lines, layout, bits).join('\n'));
          expect(runs).toHaveLength(1);
          const run = runs[0] as IostatRun;
          expect(run.dialect).toBe(flush ? 'linux-sysstat-x-12.3.1' : 'linux-sysstat-x-12.1.2');
          expect(run.name).toBe(o.host);
          expect(run.meta).toMatchObject({ os: 'Linux', host: o.host, cpus: o.cpus, kernel: '5.15.0-91-generic' });
          checkIostatRun(run, columns, generated, 'linux', times);
        },
      ),
      params(),
    );
  });

  it('FreeBSD -x', async () => {
    await fc.assert(
      fc.asyncProperty(
        reportsArb(freebsdDevice, FREEBSD_COLUMNS),
        fc.boolean(),
        layoutArb,
        fc.nat(),
        async (generated, withCommand, layout, bits) => {
          const lines = mangle(freebsdLog(generated, withCommand), layout, bits);
          const { runs } = await parse(`${lines.join('\n')}\n`);
          expect(runs).toHaveLength(1);
          expect(runs[0]!.dialect).toBe('freebsd-x');
          checkIostatRun(runs[0]!, FREEBSD_COLUMNS, generated, 'freebsd');
        },
      ),
      params(),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// (b) diskperf tables
// ---------------------------------------------------------------------------------------------

interface DiskperfTable {
  columns: DiskperfMetric[];
  rows: { size: number; cells: Cell[] }[];
  header: boolean;
  name: string;
}

// `%8.2f`: up to 9999.99 MB/s keeps a blank before every value (IRIX disks stay far below).
const diskperfCell: fc.Arbitrary<Cell> = fc.oneof(int(0, 99_999), int(0, 999_999)).map((units) => {
  const text = fixed(units, 2);
  return { text, value: Number(text) };
});

const diskperfTable: fc.Arbitrary<DiskperfTable> = fc
  .tuple(
    fc.subarray([...DISKPERF_METRICS], { minLength: 1 }),
    fc.uniqueArray(
      fc.oneof(
        int(0, 24).map((e) => 2 ** e),
        int(1, 1 << 28),
      ),
      { minLength: 1, maxLength: 14 },
    ),
    fc.boolean(),
    fc.stringMatching(/^[A-Za-z][\w.-]{0,15}$/),
    fc.boolean(),
  )
  .chain(([columns, sizes, header, name, sorted]) =>
    fc.tuple(...sizes.map(() => fc.tuple(...columns.map(() => diskperfCell)))).map((cells) => {
      const rows = sizes.map((size, i) => ({ size, cells: cells[i]! }));
      if (sorted) rows.sort((a, b) => a.size - b.size);
      return { columns, rows, header, name };
    }),
  );

function diskperfLines(t: DiskperfTable): string[] {
  const lines: string[] = [];
  lines.push('#---------------------------------------------------------');
  if (t.header) {
    lines.push(
      '# Disk Performance Test Results Generated By Diskperf V1.2',
      '#',
      `# Test name     : ${t.name}`,
      '# Test date     : Sat Dec 14 13:53:04 2019',
      '# Test machine  : IRIX octane 6.5 10070055 IP30',
      '# Test type     : XFS data subvolume',
      '# Test path     : /d/test',
      `# Request sizes : min=${Math.min(...t.rows.map((r) => r.size))} max=${Math.max(...t.rows.map((r) => r.size))}`,
      '# Parameters    : direct=1 time=10 scale=1.000 delay=0.000',
      '# XFS file size : 134217728 bytes',
      '#---------------------------------------------------------',
    );
  }
  lines.push(`# req_size${t.columns.map((c) => `  ${c}`).join('')}`);
  lines.push(`#  (bytes)${t.columns.map(() => '  (MB/s)').join('')}`);
  lines.push('#---------------------------------------------------------');
  for (const row of t.rows)
    lines.push(`${String(row.size).padStart(11)}${row.cells.map((c) => c.text.padStart(8)).join('')}`);
  return lines;
}

describe('(b) generated diskperf tables parse back to their numbers', () => {
  it('any subset of columns, any request sizes', async () => {
    await fc.assert(
      fc.asyncProperty(diskperfTable, layoutArb, fc.nat(), fc.boolean(), async (table, layout, bits, withCommand) => {
        const lines = diskperfLines(table);
        if (withCommand) lines.unshift(`% diskperf -W -D -n ${table.name} -r4k -m4m /d/test`);
        const { runs } = await parse(`${mangle(lines, layout, bits).join('\n')}\n`);
        expect(runs).toHaveLength(1);
        const run = runs[0] as DiskperfRun;
        expect(run.format).toBe('diskperf');
        expect(run.warnings).toEqual([]);
        expect(run.columns).toEqual(table.columns);
        expect(run.rows.map((r) => r.req_size)).toEqual(table.rows.map((r) => r.size));
        run.rows.forEach((row, i) => {
          const expected: Partial<Record<DiskperfMetric, number>> = {};
          table.columns.forEach((c, j) => (expected[c] = table.rows[i]!.cells[j]!.value));
          expect(row.values).toEqual(expected);
        });
        if (table.header || withCommand) expect(run.name).toBe(table.name);
        if (table.header) expect(run.meta.testName).toBe(table.name);
      }),
      params(),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// (c) arbitrary input
// ---------------------------------------------------------------------------------------------

/** Parse; anything but a ParseError fails. A successful parse must describe a sane file. */
async function survives(input: string | Uint8Array, chunkSize: number): Promise<void> {
  let outcome: Outcome;
  try {
    outcome = await parse(input, chunkSize);
  } catch (error) {
    if (error instanceof ParseError) {
      expect(error.line).toBeGreaterThanOrEqual(0);
      expect(error.message.length).toBeGreaterThan(0);
      return;
    }
    throw error;
  }
  const { runs, lines, runCount } = outcome;
  expect(runs.length).toBeGreaterThan(0);
  expect(runCount).toBe(runs.length);
  runs.forEach((run, i) => {
    // Indexes are exactly 0..n-1, also when a header without rows is dropped.
    expect(run.index).toBe(i);
    expect(run.startLine).toBeGreaterThanOrEqual(1);
    expect(run.startLine).toBeLessThanOrEqual(run.endLine);
    expect(run.endLine).toBeLessThanOrEqual(lines);
    if (run.format === 'iostat') {
      expect(run.reports).toBeGreaterThanOrEqual(1);
      for (const s of run.series) {
        expect(s.sampleCount).toBeGreaterThanOrEqual(1);
        expect(s.samples).toHaveLength(s.sampleCount);
        for (const sample of s.samples!) {
          expect(sample.report).toBeGreaterThanOrEqual(0);
          expect(sample.report).toBeLessThan(run.reports);
          expect(sample.sinceBoot).toBe(sample.report === 0);
          for (const v of [...Object.values(sample.values), ...Object.values(sample.raw)])
            expect(Number.isNaN(v)).toBe(false);
        }
        for (const summary of Object.values(s.summary)) expect(summary.count).toBeLessThanOrEqual(s.sampleCount);
      }
    } else if (run.format === 'diskperf') {
      expect(run.rows.length).toBeGreaterThan(0);
      expect(new Set(run.rows.map((r) => r.req_size)).size).toBe(run.rows.length);
    }
  });
}

const chunkSizeArb = fc.oneof(fc.constant(0), int(1, 16), int(17, 5000));

const IOSTAT_TOKENS = [
  'extended device statistics',
  'r/s',
  'w/s',
  'kr/s',
  'kw/s',
  'Mr/s',
  'Mw/s',
  'wait',
  'actv',
  'wsvc_t',
  'asvc_t',
  'svc_t',
  '%w',
  '%b',
  'device',
  's/w',
  'h/w',
  'trn',
  'tot',
  'Device',
  'Device:',
  'DEV',
  'rkB/s',
  'wkB/s',
  'rMB/s',
  'rsec/s',
  'r_await',
  'w_await',
  'await',
  'svctm',
  'aqu-sz',
  'avgqu-sz',
  '%util',
  'tps',
  'kB_read/s',
  'kB_read',
  'rrqm/s',
  'rareq-sz',
  'f/s',
  'd/s',
  'kB/s',
  'rB/s',
  'ms/r',
  'ms/w',
  'ms/o',
  'ms/t',
  'qlen',
  'tin',
  'tout',
  'us',
  'sy',
  'id',
  'tty',
  'cpu',
  'avg-cpu:',
  '%user',
  '%idle',
  'Linux 5.15.0-91-generic (db1) \t01/15/2024 \t_x86_64_\t(4 CPU)',
  'Linux 2.6.32 (x)',
  '01/15/2024 10:00:01 AM',
  'Mon Jan 15 10:00:01 2024',
  '2024-01-15T10:00:01+0100',
  '1705309201',
  'iostat -xn 5 3',
  '$ iostat -x 1',
  'tunefs -a 16 /opt',
  '# diskperf -W -n t /d',
  '> ',
  '>> ',
  '# Disk Performance Test Results Generated By Diskperf V1.2',
  '#---------------------------------------------------------',
  '# req_size  fwd_wt  fwd_rd  bwd_wt',
  '#  (bytes)  (MB/s)  (MB/s)',
  '# Test name     : x',
  '# Request sizes : min=4096 max=8192',
  '# Parameters    : direct=1 time=x',
  '# XFS file size : 12 bytes',
  '{"sysstat": {"hosts": [{"nodename": "h", "statistics": [{"disk": [{"disk_device": "sda", "r/s": 1.5}]}]}]}}',
  '"disk_device":',
  '{',
  '}',
  '[',
  ']',
  '"r/s":',
  ',',
  '0',
  '0.0',
  '1.5',
  '12,5',
  '-1',
  '1.2k',
  '3.4M',
  '45.0%',
  '1e308',
  '99999999999999999999',
  '12345.6123456.7',
  'NaN',
  'Infinity',
  '-0',
  'c0t0d0',
  'sda',
  'ada0',
  'nas01:/export/home',
  '(/)',
  '/opt',
  'd10',
  '4096',
  '8192',
];

const tokenText = fc
  .array(
    fc.tuple(
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...IOSTAT_TOKENS) },
        { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
        { weight: 1, arbitrary: fc.double({ noNaN: false }).map(String) },
      ),
      fc.constantFrom(' ', ' ', '   ', '\t', '\n', '\n', '\r\n', '\r', '\n\n'),
    ),
    { maxLength: 300 },
  )
  .map((parts) => parts.map(([t, sep]) => t + sep).join(''));

/** Real-looking logs with lines dropped, duplicated or cut: the inputs most likely to reach deep code. */
const damagedLog = fc
  .tuple(
    fc.oneof(
      reportsArb(solarisDevice, solarisColumns(false)).map((g) => solarisLog(solarisColumns(false), g, true)),
      reportsArb(freebsdDevice, FREEBSD_COLUMNS).map((g) => freebsdLog(g, true)),
      reportsArb(linuxDevice, linuxColumns(true, false)).map(
        (g) => linuxLog(linuxColumns(true, false), g, { host: 'h', cpus: 2, avgCpu: true, interval: 5 }).lines,
      ),
      diskperfTable.map(diskperfLines),
    ),
    fc.array(
      fc.tuple(
        fc.constantFrom('drop', 'dup', 'cut', 'insert', 'swap'),
        fc.nat(),
        fc.nat(),
        fc.constantFrom(...IOSTAT_TOKENS),
      ),
      { maxLength: 8 },
    ),
  )
  .map(([lines, edits]) => {
    const out = [...lines];
    for (const [kind, a, b, token] of edits) {
      if (out.length === 0) break;
      const i = a % out.length;
      const j = b % out.length;
      if (kind === 'drop') out.splice(i, 1);
      else if (kind === 'dup') out.splice(i, 0, out[i]!);
      else if (kind === 'cut') out[i] = out[i]!.slice(0, b % (out[i]!.length + 1));
      else if (kind === 'insert') out.splice(i, 0, token);
      else [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out.join('\n');
  });

describe('(c) arbitrary input throws nothing but ParseError', () => {
  it('arbitrary bytes, plain or gzip-compressed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 4000 }),
        fc.boolean(),
        chunkSizeArb,
        async (bytes, gzip, chunkSize) => {
          await survives(gzip ? gzipSync(bytes) : bytes, chunkSize);
        },
      ),
      params(),
    );
  });

  it('arbitrary strings (any code points, lone surrogates included)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 2000 }),
          fc.string({ unit: 'grapheme', maxLength: 500 }),
          fc.string({ maxLength: 2000 }),
        ),
        chunkSizeArb,
        async (text, chunkSize) => {
          await survives(text, chunkSize);
        },
      ),
      params(),
    );
  });

  it('strings built from iostat and diskperf tokens', async () => {
    await fc.assert(
      fc.asyncProperty(tokenText, chunkSizeArb, async (text, chunkSize) => {
        await survives(text, chunkSize);
      }),
      params(),
    );
  });

  it('generated logs with lines dropped, duplicated, cut, inserted or swapped', async () => {
    await fc.assert(
      fc.asyncProperty(damagedLog, chunkSizeArb, async (text, chunkSize) => {
        await survives(text, chunkSize);
      }),
      params(),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// (d) chunk boundaries
// ---------------------------------------------------------------------------------------------

/** The parse result, or the ParseError's line and problem: what must not depend on chunking. */
async function outcomeOf(input: string, chunkSize: number): Promise<unknown> {
  try {
    return await parse(input, chunkSize);
  } catch (error) {
    if (error instanceof ParseError) return { line: error.line, problem: error.problem };
    throw error;
  }
}

describe('(d) chunk boundaries never change the result', () => {
  it('generated and damaged logs, with LF, CRLF or CR line ends, in chunks of any size', async () => {
    await fc.assert(
      fc.asyncProperty(damagedLog, int(1, 300), fc.constantFrom('\n', '\r\n', '\r'), async (text, chunkSize, eol) => {
        const input = text.replace(/\n/g, eol);
        expect(await outcomeOf(input, chunkSize)).toEqual(await outcomeOf(input, 0));
      }),
      params(Math.max(1, Math.round(NUM_RUNS / 2))),
    );
  });

  it('token soup and arbitrary strings in chunks of any size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(tokenText, fc.string({ unit: 'binary', maxLength: 2000 })),
        int(1, 300),
        async (text, chunkSize) => {
          expect(await outcomeOf(text, chunkSize)).toEqual(await outcomeOf(text, 0));
        },
      ),
      params(Math.max(1, Math.round(NUM_RUNS / 2))),
    );
  });
});
