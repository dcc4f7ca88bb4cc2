/**
 * Linux sysstat iostat: every device report layout since sysstat 7, in text form
 * (the JSON form is iostat-linux-json.ts). Each report may be preceded by a time
 * stamp (-t) and an avg-cpu block; a banner opens each invocation.
 *
 *   Linux 5.15.0-91-generic (db1) 	01/15/2024 	_x86_64_	(4 CPU)
 *
 *   Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s ...  aqu-sz  %util
 *   sda              1.50     24.00     0.00   0.00    0.40    16.00    3.00     48.00 ...    0.01   0.60
 *
 * Layouts: -x before 9.1.2 (`Device:` rsec/s avgqu-sz await svctm), 9.1.2-11.5.6
 * (`Device:` r_await w_await), 11.5.7+ (grouped per direction, rareq-sz, aqu-sz),
 * 12.1.2+ (discard d/s..., no svctm), 12.3.1+ (flush f/s f_await); -k/-m units;
 * the basic report (tps kB_read/s kB_wrtn/s [kB_dscd/s] ..., MB_read/s, Blk_read/s);
 * -s, the short basic report (tps kB_read/s kB_w+d/s kB_read kB_w+d, MB_ and Blk_
 * too); -xs (tps kB/s rqm/s await areq-sz aqu-sz %util); POSIXLY_CORRECT without
 * -k/-m prints 512-byte units (Blk_* in the basic reports, rsec/s wsec/s dsec/s and
 * sec/s in -x/-xs); --pretty puts the device last and splits -x into one table per
 * group; --human prints 1.2k / 3.4M / 45.0% (values only: headers keep their names,
 * so G and T appear as suffixes, never as GB_ columns). -g GROUP adds a row per group
 * after its devices, its name indented by one space (` ALL`); -H keeps only that row.
 * sysstat has no -e report.
 *
 * A header yields TableLayout { platform: 'linux', dialect: 'linux-sysstat-x-11.5.7', deviceAt: 'first', columns }
 * (iostat-layout.ts), a banner LinuxBanner { os: 'Linux', kernel: '5.15.0-91-generic', host: 'db1', ... }.
 */
import { columnsFrom, splitDevice, type ColumnSpec, type IostatDialect } from './iostat-layout.ts';
import { wholeNumber } from './numbers.ts';

const ops = (metric?: 'read_iops' | 'write_iops' | 'iops'): ColumnSpec =>
  metric ? { unit: 'ops/s', metric } : { unit: 'ops/s' };

export const LINUX_COLUMNS: Record<string, ColumnSpec> = {
  'r/s': ops('read_iops'),
  'w/s': ops('write_iops'),
  'd/s': ops(),
  'f/s': ops(),
  tps: ops('iops'),
  'rkB/s': { unit: 'kB/s', metric: 'read_kBps' },
  'wkB/s': { unit: 'kB/s', metric: 'write_kBps' },
  'dkB/s': { unit: 'kB/s' },
  'rMB/s': { unit: 'MB/s', metric: 'read_kBps', factor: 1024 },
  'wMB/s': { unit: 'MB/s', metric: 'write_kBps', factor: 1024 },
  'dMB/s': { unit: 'MB/s' },
  // --human prints bytes per second, suffixed.
  'rB/s': { unit: 'B/s', metric: 'read_kBps', factor: 1 / 1024 },
  'wB/s': { unit: 'B/s', metric: 'write_kBps', factor: 1 / 1024 },
  'dB/s': { unit: 'B/s' },
  'rsec/s': { unit: 'sectors/s', metric: 'read_kBps', factor: 0.5 },
  'wsec/s': { unit: 'sectors/s', metric: 'write_kBps', factor: 0.5 },
  'dsec/s': { unit: 'sectors/s' },
  'rrqm/s': { unit: 'merges/s' },
  'wrqm/s': { unit: 'merges/s' },
  'drqm/s': { unit: 'merges/s' },
  'rqm/s': { unit: 'merges/s' },
  '%rrqm': { unit: '%' },
  '%wrqm': { unit: '%' },
  '%drqm': { unit: '%' },
  r_await: { unit: 'ms', metric: 'read_ms' },
  w_await: { unit: 'ms', metric: 'write_ms' },
  d_await: { unit: 'ms' },
  f_await: { unit: 'ms' },
  await: { unit: 'ms', metric: 'wait_ms' },
  svctm: { unit: 'ms', metric: 'service_ms' },
  'avgqu-sz': { unit: 'requests', metric: 'active_queue' },
  'aqu-sz': { unit: 'requests', metric: 'active_queue' },
  'avgrq-sz': { unit: 'sectors' },
  'areq-sz': { unit: 'kB' },
  'rareq-sz': { unit: 'kB' },
  'wareq-sz': { unit: 'kB' },
  'dareq-sz': { unit: 'kB' },
  '%util': { unit: '%', metric: 'util_pct' },
  'kB/s': { unit: 'kB/s' },
  'MB/s': { unit: 'MB/s' },
  'B/s': { unit: 'B/s' },
  // -xs under POSIXLY_CORRECT: sectors read, written and discarded together.
  'sec/s': { unit: 'sectors/s' },
  'kB_read/s': { unit: 'kB/s', metric: 'read_kBps' },
  'kB_wrtn/s': { unit: 'kB/s', metric: 'write_kBps' },
  'kB_dscd/s': { unit: 'kB/s' },
  'MB_read/s': { unit: 'MB/s', metric: 'read_kBps', factor: 1024 },
  'MB_wrtn/s': { unit: 'MB/s', metric: 'write_kBps', factor: 1024 },
  'MB_dscd/s': { unit: 'MB/s' },
  // Blocks are 512-byte sectors (POSIXLY_CORRECT, or sysstat before 9.1.1).
  'Blk_read/s': { unit: 'sectors/s', metric: 'read_kBps', factor: 0.5 },
  'Blk_wrtn/s': { unit: 'sectors/s', metric: 'write_kBps', factor: 0.5 },
  'Blk_dscd/s': { unit: 'sectors/s' },
  // -s prints writes and discards together as one figure: it stands for write_kBps.
  'kB_w+d/s': { unit: 'kB/s', metric: 'write_kBps' },
  'MB_w+d/s': { unit: 'MB/s', metric: 'write_kBps', factor: 1024 },
  'Blk_w+d/s': { unit: 'sectors/s', metric: 'write_kBps', factor: 0.5 },
  kB_read: { unit: 'kB' },
  kB_wrtn: { unit: 'kB' },
  kB_dscd: { unit: 'kB' },
  'kB_w+d': { unit: 'kB' },
  MB_read: { unit: 'MB' },
  MB_wrtn: { unit: 'MB' },
  MB_dscd: { unit: 'MB' },
  'MB_w+d': { unit: 'MB' },
  Blk_read: { unit: 'sectors' },
  Blk_wrtn: { unit: 'sectors' },
  Blk_dscd: { unit: 'sectors' },
  'Blk_w+d': { unit: 'sectors' },
  // --human turns the basic report's totals and rates into bytes.
  'B_read/s': { unit: 'B/s', metric: 'read_kBps', factor: 1 / 1024 },
  'B_wrtn/s': { unit: 'B/s', metric: 'write_kBps', factor: 1 / 1024 },
  'B_dscd/s': { unit: 'B/s' },
  B_read: { unit: 'B' },
  B_wrtn: { unit: 'B' },
  B_dscd: { unit: 'B' },
};

// The basic report: -s (writes and discards in one column), 512-byte blocks with the
// discard columns (POSIXLY_CORRECT, 12.1.2+), blocks without them (before 9.1.1), kB/MB.
function basicLayout(names: readonly string[]): string {
  if (names.some((n) => n.endsWith('_w+d/s'))) return 's';
  if (names.includes('Blk_read/s')) return names.includes('Blk_dscd/s') ? 'basic-blk' : 'basic-old';
  return 'basic';
}

function dialectOf(names: readonly string[], deviceAt: 'first' | 'last'): string {
  const has = (n: string) => names.includes(n);
  let layout: string;
  if (has('kB/s') || has('MB/s') || has('B/s') || has('sec/s') || has('rqm/s')) layout = 'xs';
  else if (has('tps')) layout = basicLayout(names);
  else if (has('f/s') || has('f_await')) layout = 'x-12.3.1';
  else if (has('d/s') || has('d_await')) layout = 'x-12.1.2';
  else if (has('rareq-sz') || has('wareq-sz') || has('aqu-sz')) layout = 'x-11.5.7';
  else if (has('r_await') || has('w_await')) layout = 'x-9.1.2';
  else layout = 'x-pre9.1.2';
  return `linux-sysstat-${layout}${deviceAt === 'last' ? '-pretty' : ''}`;
}

export const linuxIostat: IostatDialect = {
  platform: 'linux',
  matchHeader(tokens) {
    const split = splitDevice(tokens, ['Device:', 'Device', 'DEV']);
    if (!split) return undefined;
    if (!split.names.every((n) => Object.hasOwn(LINUX_COLUMNS, n))) return undefined;
    return {
      platform: 'linux',
      dialect: dialectOf(split.names, split.deviceAt),
      deviceAt: split.deviceAt,
      columns: columnsFrom(split.names, LINUX_COLUMNS),
      optionalTail: 0,
    };
  },
};

export interface LinuxBanner {
  os: string;
  kernel: string;
  host: string;
  date?: string;
  arch?: string;
  cpus?: number;
}

// Linux 5.15.0-91-generic (db1) 	01/15/2024 	_x86_64_	(4 CPU)
const BANNER = /^(Linux)\s+(\S+)\s+\(([^)\s]+)\)\s+(?!_)(\S+)?\s*(?:_(\S+?)_)?\s*(?:\((\d+)\s+CPU\))?\s*$/;

/** The banner sysstat prints at the start of each invocation, or undefined. */
export function parseLinuxBanner(line: string): LinuxBanner | undefined {
  const m = BANNER.exec(line.trim());
  if (!m) return undefined;
  const banner: LinuxBanner = { os: m[1]!, kernel: m[2]!, host: m[3]! };
  if (m[4]) banner.date = m[4].trim();
  if (m[5]) banner.arch = m[5];
  const cpus = m[6] === undefined ? undefined : wholeNumber(m[6]);
  if (cpus !== undefined) banner.cpus = cpus;
  return banner;
}
