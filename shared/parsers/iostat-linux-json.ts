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
 *
 * A document of the wrong shape (hosts that are not objects, `statistics` or `disk`
 * that are not arrays) is a ParseError naming the place (`sysstat.hosts[0].statistics`)
 * and what stood there; a disk entry that cannot be read, or a value that is not a
 * number, is skipped with a warning, as in the line-by-line form.
 */
import type { IostatMeta } from '../model.ts';
import { printable } from '../printable.ts';
import { ParseError } from './errors.ts';
import { columnsFrom } from './iostat-layout.ts';
import { LINUX_COLUMNS } from './iostat-linux.ts';
import { IostatRunBuilder, MAX_COLUMNS } from './iostat-run.ts';
import { parseIostatNumber, wholeNumber } from './numbers.ts';
import { readTimestamp } from './timestamps.ts';
import type { LineParser, ParserOptions } from './types.ts';

/** JSON keys that differ from the text headers. */
const KEY_TO_HEADER: Record<string, string> = { util: '%util', rrqm: '%rrqm', wrqm: '%wrqm', drqm: '%drqm' };

const DIALECT = 'linux-sysstat-json';

type Json = Record<string, unknown>;

/** A key JSON.parse keeps as data but an assignment (the samples' raw values) would take for the prototype. */
const PROTOTYPE_KEY = '__proto__';

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a JSON value is, for a message: `null`, `a number (5)`, `an array of 2`, `a string ("x")`. */
function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'string') return `a string ("${printable(value, 40)}")`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value === 'boolean' ? 'a boolean' : 'a number'} (${String(value).slice(0, 40)})`;
}

export function createLinuxJsonParser(options: ParserOptions, firstRunIndex = 0): LineParser {
  let nextIndex = firstRunIndex;
  let run: IostatRunBuilder | undefined;
  let meta: IostatMeta = {};
  let runStart = 0;
  let time: string | undefined;
  let emitted = 0;
  /** The line of the first `"sysstat"` key, 0 before it. */
  let sysstatLine = 0;
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

  /** The document is not what iostat -o JSON prints at `where`. */
  function wrongShape(line: number, where: string, value: unknown, expected: string): never {
    throw new ParseError({ source: options.source, line, problem: `sysstat JSON of the wrong shape: ${where} is ${describeJson(value)}`, expected: `${expected} at ${where}, as iostat -o JSON prints it` });
  }

  /** Column ids for the keys of a disk entry, cached per key list (sysstat prints the same keys for every disk). */
  function idsFor(target: IostatRunBuilder, keys: readonly string[], line: number): Int16Array | undefined {
    const signature = keys.join(' ');
    if (idCache.has(signature)) return idCache.get(signature);
    // Raw keys stay as printed in the JSON; their meaning comes from the text header they stand for.
    const ids = target.columnIdsFor(keys.map((key) => ({ ...columnsFrom([KEY_TO_HEADER[key] ?? key], LINUX_COLUMNS)[0]!, name: key })));
    if (ids === undefined) target.warn(line, `disk entries with these ${keys.length} keys ignored: a run holds at most ${MAX_COLUMNS} distinct columns`);
    idCache.set(signature, ids);
    return ids;
  }

  function disk(entry: unknown, line: number, where: string): void {
    if (!isObject(entry)) {
      currentRun(line).skipRow(line, `${where} is ${describeJson(entry)}, not a disk object; ignored`);
      return;
    }
    const device = entry['disk_device'];
    if (typeof device !== 'string') {
      currentRun(line).skipRow(line, `${where} has "disk_device" ${describeJson(device)}, not a device name; ignored`);
      return;
    }
    const target = currentRun(line);
    const keys = Object.keys(entry).filter((k) => k !== 'disk_device' && k !== PROTOTYPE_KEY);
    if (Object.hasOwn(entry, PROTOTYPE_KEY)) target.warn(line, `key "${PROTOTYPE_KEY}" of ${where} ignored: no iostat column is called that`);
    const ids = idsFor(target, keys, line);
    if (ids === undefined) return;
    for (let i = 0; i < keys.length; i++) values[i] = jsonNumber(entry[keys[i]!]);
    target.row(device, undefined, ids, values, 0, line);
  }

  /** The ISO time of a report's "timestamp", or undefined (with a warning when it is not a valid one). */
  function reportTime(stamp: unknown, line: number): string | undefined {
    if (stamp === undefined) return undefined;
    const time = typeof stamp === 'string' ? readTimestamp(stamp) : undefined;
    if (time !== undefined && 'iso' in time) return time.iso;
    const shown = typeof stamp === 'string' ? `"${stamp.slice(0, 40)}"` : describeJson(stamp);
    const why = time === undefined ? 'not a date and time benchdrop reads' : `not a valid date (${time.invalid})`;
    currentRun(line).warn(line, `timestamp ${shown} is ${why}; the report is kept without a time`);
    return undefined;
  }

  /** A host opens a run at `line`; the run before it ended at `previousEnd`. */
  function host(entry: Json, line: number, previousEnd = line - 1): void {
    finishRun(previousEnd);
    meta = {};
    if (typeof entry['nodename'] === 'string') meta.host = entry['nodename'];
    if (typeof entry['sysname'] === 'string') meta.os = entry['sysname'];
    if (typeof entry['release'] === 'string') meta.kernel = entry['release'];
    if (typeof entry['date'] === 'string') meta.date = entry['date'];
    const cpus = entry['number-of-cpus'];
    if (typeof cpus === 'number' && Number.isSafeInteger(cpus) && cpus >= 0) meta.cpus = cpus;
    runStart = line;
  }

  /** The array at `where`; a missing one is empty (a host without reports, a report without disks). */
  function arrayAt(value: unknown, line: number, where: string, expected: string): unknown[] {
    if (value === undefined) return [];
    if (!Array.isArray(value)) wrongShape(line, where, value, expected);
    return value;
  }

  /** A whole document on one line. */
  function walk(doc: Json, line: number): void {
    const sysstat = doc['sysstat'];
    if (!isObject(sysstat)) wrongShape(line, 'sysstat', sysstat, 'an object with "hosts"');
    if (!Array.isArray(sysstat['hosts'])) wrongShape(line, 'sysstat.hosts', sysstat['hosts'], 'an array of hosts');
    sysstat['hosts'].forEach((h, i) => {
      const at = `sysstat.hosts[${i}]`;
      if (!isObject(h)) wrongShape(line, at, h, 'an object with "nodename" and "statistics"');
      // Every host of a one-line document is on this line, the run before it too.
      host(h, line, line);
      arrayAt(h['statistics'], line, `${at}.statistics`, 'an array of reports').forEach((stats, j) => {
        const where = `${at}.statistics[${j}]`;
        if (!isObject(stats)) wrongShape(line, where, stats, 'an object with "timestamp" and "disk"');
        currentRun(line).startReport(reportTime(stats['timestamp'], line));
        arrayAt(stats['disk'], line, `${where}.disk`, 'an array of disk objects').forEach((d, k) => disk(d, line, `${where}.disk[${k}]`));
      });
    });
  }

  /** A line that holds a disk entry, or a whole document squeezed onto one line. */
  function entryLine(t: string, lineNo: number): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(t.replace(/,\s*$/, ''));
    } catch {
      if (t.includes('"sysstat"') || t.includes('"hosts"')) {
        throw new ParseError({ source: options.source, line: lineNo, problem: 'a sysstat JSON document that does not parse', expected: 'complete JSON as printed by iostat -o JSON' });
      }
      currentRun(lineNo).skipRow(lineNo, `disk entry that is not complete JSON ignored: ${t.slice(0, 80)}`);
      return;
    }
    if (isObject(parsed) && Object.hasOwn(parsed, 'sysstat')) walk(parsed, lineNo);
    else disk(parsed, lineNo, 'the disk entry');
  }

  const stringField = (text: string, key: string): string | undefined => new RegExp(`"${key}"\\s*:\\s*"([^"]*)"`).exec(text)?.[1];

  return {
    line(text, lineNo) {
      const t = text.trim();
      if (t.length === 0) return;
      if (t.includes('"sysstat"') && sysstatLine === 0) sysstatLine = lineNo;
      // A disk entry, or a whole document on one line (its shape is checked even when it holds no disk).
      if (t.includes('"disk_device"') || (t.startsWith('{') && t.includes('"sysstat"') && t.endsWith('}'))) {
        entryLine(t, lineNo);
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
          line: sysstatLine,
          problem: sysstatLine > 0 ? 'sysstat JSON with no disk entries' : 'no sysstat JSON found',
          expected: 'iostat -o JSON output with "disk" entries',
        });
      }
    },
  };
}

/** A disk value: a JSON number, or a number printed as a string (`"1.50"`); NaN for anything else. */
function jsonNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return parseIostatNumber(value);
  return NaN;
}
