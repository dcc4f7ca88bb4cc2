/**
 * Peak resident set size of the calling process, in KiB.
 *
 * process.resourceUsage().maxRSS is getrusage's ru_maxrss, and on Linux that
 * survives fork and exec: a child reports at least what its parent was using when
 * it was spawned, whatever the child uses itself. So
 * where /proc/self/status exists its VmHWM, the high-water mark of this process's
 * own memory since exec, is the figure; maxRSS is returned beside it.
 */
import { readFileSync } from 'node:fs';

export interface PeakRss {
  /** VmHWM from /proc/self/status (Linux), else maxRSS. */
  peakKiB: number;
  /** process.resourceUsage().maxRSS as reported (includes a parent's RSS at fork time on Linux). */
  maxRSSKiB: number;
  source: 'VmHWM' | 'maxRSS';
}

export function peakRss(): PeakRss {
  const maxRSSKiB = process.resourceUsage().maxRSS;
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return { peakKiB: Number(match[1]), maxRSSKiB, source: 'VmHWM' };
  } catch {
    // Not Linux: maxRSS is all there is.
  }
  return { peakKiB: maxRSSKiB, maxRSSKiB, source: 'maxRSS' };
}
