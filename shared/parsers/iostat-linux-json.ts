/**
 * Linux sysstat `iostat -o JSON` (sysstat 11.5.7+). sysstat prints one disk object
 * per line, so the parser reads it line by line like the text reports; a document
 * squeezed onto one line (`jq -c`) is walked whole.
 *
 *   {"sysstat": {
 *     "hosts": [
 *       { "nodename": "db1", "sysname": "Linux", "release": "5.15.0-91-generic", ...
 *         "statistics": [
 *           { "timestamp": "01/15/2024 10:00:01 AM",
 *             "avg-cpu":  {"user": 0.50, ...},
 *             "disk": [
 *               {"disk_device": "sda", "r/s": 1.50, "rkB/s": 24.00, ... "util": 0.60},
 *
 * yields IostatRun { platform: 'linux', dialect: 'linux-sysstat-json', name: 'db1',
 *   series: [{ device: 'sda', samples: [{ values: { read_iops: 1.5, read_kBps: 24, ... } }] }] }
 */
import type { IostatMeta } from '../model.ts';
import { ParseError } from './errors.ts';
import { columnsFrom } from './iostat-layout.ts';
import { LINUX_COLUMNS } from './iostat-linux.ts';
import { IostatRunBuilder } from './iostat-run.ts';
import { parseIostatNumber, wholeNumber } from './numbers.ts';
import { readTimestamp } from './timestamps.ts';
import type { LineParser, ParserOptions } from './types.ts';

/** JSON keys that differ from the text headers. */
const KEY_TO_HEADER: Record<string, string> = { util: '%util', rrqm: '%rrqm', wrqm: '%wrqm', drqm: '%drqm' };

const DIALECT = 'linux-sysstat-json';

type Json = Record<string, unknown>;

export function createLinuxJsonParser(options: ParserOptions, firstRunIndex = 0): LineParser {
  let nextIndex = firstRunIndex;
  let run: IostatRunBuilder | undefined;
  let meta: IostatMeta = {};
  let runStart = 0;
  let time: string | undefined;
  let emitted = 0;
  let sawSysstat = false;
  let firstSkipped: { line: number; message: string } | undefined;
  const idCache = new Map<string, Int16Array | undefined>();
  const values = new Float64Array(128);

  function finishRun(endLine: number): void {
    if (run?.hasRows) {
      options.onRun(run.finish(endLine));
      emitted++;
    } else if (run !== undefined) {
      // Nothing but warnings: no run, and its index goes to the next one.
      nextIndex = run.index;
      firstSkipped ??= run.firstSkipped;
    }
    run = undefined;
    idCache.clear();
  }

  function currentRun(line: number): IostatRunBuilder {
    run ??= new IostatRunBuilder(
      { index: nextIndex++, platform: 'linux', dialect: DIALECT, name: meta.host ?? '', context: [], meta, startLine: runStart || line },
      options,
    );
    return run;
  }

  function disk(entry: Json, line: number): void {
    const device = entry['disk_device'];
    if (typeof device !== 'string') {
      currentRun(line).warn(line, 'disk entry without "disk_device" ignored');
      return;
    }
    const keys = Object.keys(entry).filter((k) => k !== 'disk_device');
    const target = currentRun(line);
    const signature = keys.join(' ');
    let ids = idCache.get(signature);
    if (!idCache.has(signature)) {
      // Raw keys stay as printed in the JSON; their meaning comes from the text header they stand for.
      ids = target.columnIdsFor(keys.map((key) => ({ ...columnsFrom([KEY_TO_HEADER[key] ?? key], LINUX_COLUMNS)[0]!, name: key })));
      idCache.set(signature, ids);
    }
    if (ids === undefined) return;
    for (let i = 0; i < keys.length; i++) {
      const v = entry[keys[i]!];
      values[i] = typeof v === 'number' ? v : typeof v === 'string' ? parseIostatNumber(v) : NaN;
    }
    target.row(device, undefined, ids, values, 0, line);
  }

  /** The ISO time of a report's "timestamp", or undefined (with a warning when it is not a valid one). */
  function reportTime(stamp: string, line: number): string | undefined {
    const time = readTimestamp(stamp);
    if (time !== undefined && 'iso' in time) return time.iso;
    const why = time === undefined ? 'not a date and time benchdrop reads' : `not a valid date (${time.invalid})`;
    currentRun(line).warn(line, `timestamp "${stamp.slice(0, 40)}" is ${why}; the report is kept without a time`);
    return undefined;
  }

  function host(entry: Json, line: number): void {
    finishRun(line - 1);
    meta = {};
    if (typeof entry['nodename'] === 'string') meta.host = entry['nodename'];
    if (typeof entry['sysname'] === 'string') meta.os = entry['sysname'];
    if (typeof entry['release'] === 'string') meta.kernel = entry['release'];
    if (typeof entry['date'] === 'string') meta.date = entry['date'];
    if (Number.isSafeInteger(entry['number-of-cpus'])) meta.cpus = entry['number-of-cpus'] as number;
    runStart = line;
  }

  /** A whole document on one line. */
  function walk(doc: unknown, line: number): void {
    const hosts = ((doc as Json)?.['sysstat'] as Json | undefined)?.['hosts'];
    if (!Array.isArray(hosts)) throw new ParseError({ source: options.source, line, problem: 'JSON without sysstat.hosts', expected: 'the output of sysstat iostat -o JSON' });
    for (const h of hosts as Json[]) {
      host(h, line);
      for (const stats of (h['statistics'] as Json[] | undefined) ?? []) {
        const report = currentRun(line);
        report.startReport(typeof stats['timestamp'] === 'string' ? reportTime(stats['timestamp'], line) : undefined);
        for (const d of (stats['disk'] as Json[] | undefined) ?? []) disk(d, line);
      }
    }
  }

  const stringField = (text: string, key: string): string | undefined => new RegExp(`"${key}"\\s*:\\s*"([^"]*)"`).exec(text)?.[1];

  return {
    line(text, lineNo) {
      const t = text.trim();
      if (t.length === 0) return;
      if (t.includes('"sysstat"')) sawSysstat = true;
      if (t.includes('"disk_device"') && t.includes('"hosts"')) {
        let doc: unknown;
        try {
          doc = JSON.parse(t);
        } catch {
          throw new ParseError({ source: options.source, line: lineNo, problem: 'a sysstat JSON document that does not parse', expected: 'complete JSON as printed by iostat -o JSON' });
        }
        walk(doc, lineNo);
        return;
      }
      if (t.includes('"disk_device"')) {
        let entry: unknown;
        try {
          entry = JSON.parse(t.replace(/,\s*$/, ''));
        } catch {
          currentRun(lineNo).warn(lineNo, `disk entry that is not complete JSON ignored: ${t.slice(0, 80)}`);
          return;
        }
        disk(entry as Json, lineNo);
        return;
      }
      if (t.includes('"nodename"')) {
        host({ nodename: stringField(t, 'nodename') }, lineNo);
        return;
      }
      const release = stringField(t, 'release');
      if (release !== undefined) meta.kernel = release;
      const sysname = stringField(t, 'sysname');
      if (sysname !== undefined) meta.os = sysname;
      const date = stringField(t, 'date');
      if (date !== undefined) meta.date = date;
      const cpus = /"number-of-cpus"\s*:\s*(\d+)\s*(?:,|}|$)/.exec(t);
      const count = cpus ? wholeNumber(cpus[1]!) : undefined;
      if (count !== undefined) meta.cpus = count;
      const stamp = stringField(t, 'timestamp');
      if (stamp !== undefined) time = reportTime(stamp, lineNo);
      if (/^"disk"\s*:\s*\[/.test(t)) {
        currentRun(lineNo).startReport(time);
        time = undefined;
      }
    },
    end(lastLine) {
      finishRun(lastLine);
      if (emitted === 0 && firstSkipped !== undefined) {
        throw new ParseError({ source: options.source, line: firstSkipped.line, problem: `no disk entry could be read: ${firstSkipped.message}`, expected: 'iostat -o JSON output with numbers for every disk field' });
      }
      if (emitted === 0) {
        throw new ParseError({
          source: options.source,
          line: 0,
          problem: sawSysstat ? 'sysstat JSON with no disk entries' : 'no sysstat JSON found',
          expected: 'iostat -o JSON output with "disk" entries',
        });
      }
    },
  };
}
