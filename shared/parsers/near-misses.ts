/**
 * What a file that benchdrop cannot read looks like, for the error it fails with:
 * the output of a tool people paste beside iostat (sar -d, zpool iostat, vmstat, dd,
 * hdparm, HP-UX iostat, ...), or a header one or two words away from a layout it reads.
 *
 *   DEV       tps  rd_sec/s  wr_sec/s  avgrq-sz ...
 *   Device: rrqm/s wrqm/s r/s w/s rkB/s wkB/s avgrq-sz avgqu-sz await svctm %util frob
 *
 * yield NearMiss { line: 1, looksLike: 'sysstat sar -d (not iostat); not supported yet' } and
 * NearMiss { line: 2, looksLike: 'a Linux sysstat iostat header (linux-sysstat-x-pre9.1.2), but "frob" is
 * no column of it' }.
 */
import type { IostatPlatform, TableLayout } from './iostat-layout.ts';
import { exactLayout, looksLikeHeader } from './iostat-sessions.ts';

export interface NearMiss {
  line: number;
  /** The line as it stood, cut short. */
  excerpt: string;
  /** What it looks like, and what benchdrop makes of that. */
  looksLike: string;
}

/** Tools whose output people paste beside iostat, by a line only they print. */
const OTHER_TOOLS: readonly { pattern: RegExp; name: string; read?: true }[] = [
  { pattern: /^(?:\S+\s+(?:[AP]M\s+)?)?DEV\s+tps\s+(?:rd_sec\/s|rkB\/s)/, name: 'sysstat sar -d (not iostat)' },
  { pattern: /^pool\s+alloc\s+free\s+read\s+write/, name: 'zpool iostat' },
  { pattern: /^capacity\s+operations\s+bandwidth/, name: 'zpool iostat' },
  { pattern: /^procs\s+-+memory|^r\s+b\s+swpd\s+free/, name: 'vmstat (memory and cpu, no disk table)' },
  { pattern: /\bbytes\b.*\bcopied\b,/, name: 'dd' },
  { pattern: /Timing (?:buffered|cached) disk reads/, name: 'hdparm -t' },
  { pattern: /^device\s+bps\s+sps\s+msps/, name: 'HP-UX iostat' },
  { pattern: /^Disks:\s+%\s*tm_act\s+Kbps\s+tps/, name: 'AIX iostat -d (the basic report): iostat -D is read' },
  {
    pattern: /^(?:[\w.-]+:\s*\(g=\d+\)|\s*(?:read|write)\s*:\s*IOPS=|fio-\d+\.\d+)/,
    name: 'a piece of fio output without its job results line ("name: (groupid=0, jobs=1): err= 0"): paste all of it',
    read: true,
  },
  { pattern: /^Version\s+\d[\d.]*\s+-+Sequential/, name: 'bonnie++' },
  { pattern: /\\PhysicalDisk\(/, name: 'Windows performance counters (typeperf, perfmon)' },
  { pattern: /CrystalDiskMark/, name: 'CrystalDiskMark' },
  { pattern: /Command Line:\s*diskspd/i, name: 'DiskSpd' },
];

const PLATFORM_NAMES: Readonly<Record<IostatPlatform, string>> = {
  solaris: 'Solaris iostat -x',
  linux: 'Linux sysstat iostat',
  freebsd: 'FreeBSD iostat -x',
  netbsd: 'NetBSD iostat -x',
  openbsd: 'OpenBSD iostat',
  macos: 'macOS iostat',
  aix: 'AIX iostat -D',
};

/** Lines looked at for a header one or two words away: enough for any paste's top. */
const MAX_LINES_LOOKED_AT = 5000;

/** The line among these that tells best what the input is, if any does. */
export function nearMiss(lines: readonly { text: string; no: number }[]): NearMiss | undefined {
  let header: NearMiss | undefined;
  for (const { text, no } of lines.slice(0, MAX_LINES_LOOKED_AT)) {
    const trimmed = text.trim();
    const tool = OTHER_TOOLS.find(({ pattern }) => pattern.test(trimmed));
    if (tool !== undefined) return miss(no, trimmed, tool.read ? tool.name : `${tool.name}; not supported yet`);
    header ??= nearHeader(trimmed, no);
  }
  return header;
}

/** A header that reads as one of the known layouts once one or two of its words are left out. */
function nearHeader(trimmed: string, no: number): NearMiss | undefined {
  const tokens = trimmed.split(/\s+/);
  if (!looksLikeHeader(tokens)) return undefined;
  for (let i = 0; i < tokens.length; i++) {
    const layout = exactLayout(without(tokens, i));
    if (layout !== undefined) return miss(no, trimmed, `${headerName(layout)}, but "${tokens[i]}" is no column of it`);
  }
  for (let i = 0; i < tokens.length; i++) {
    for (let j = i + 1; j < tokens.length; j++) {
      const layout = exactLayout(without(without(tokens, j), i));
      if (layout !== undefined)
        return miss(no, trimmed, `${headerName(layout)}, but "${tokens[i]}" and "${tokens[j]}" are no columns of it`);
    }
  }
  return undefined;
}

function headerName(layout: TableLayout): string {
  return `a ${PLATFORM_NAMES[layout.platform]} header (${layout.dialect})`;
}

function without(tokens: readonly string[], at: number): string[] {
  return [...tokens.slice(0, at), ...tokens.slice(at + 1)];
}

function miss(line: number, trimmed: string, looksLike: string): NearMiss {
  return { line, excerpt: trimmed.length > 80 ? `${trimmed.slice(0, 77)}...` : trimmed, looksLike };
}
