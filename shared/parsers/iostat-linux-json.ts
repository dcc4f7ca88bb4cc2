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
import { IostatRunBuilder, MAX_COLUMNS, RunSequence } from './iostat-run.ts';
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
  return new LinuxJsonParser(options, firstRunIndex);
}

/** `"key": "value"` in a line of a document printed over many lines. */
const stringField = (text: string, key: string): string | undefined =>
  new RegExp(`"${key}"\\s*:\\s*"([^"]*)"`).exec(text)?.[1];

/**
 * Reads the document line by line: host fields and timestamps as they pass,
 * disk entries as rows; a document on one line is walked whole (walk).
 */
class LinuxJsonParser implements LineParser {
  private readonly runs: RunSequence;
  private run: IostatRunBuilder | undefined;
  private meta: IostatMeta = {};
  private runStart = 0;
  private time: string | undefined;
  /** The line of the first `"sysstat"` key, 0 before it. */
  private sysstatLine = 0;
  private readonly idCache = new Map<string, Int16Array | undefined>();
  private readonly values = new Float64Array(128);

  constructor(
    private readonly options: ParserOptions,
    firstRunIndex: number,
  ) {
    this.runs = new RunSequence(options.onRun, firstRunIndex);
  }

  line(text: string, lineNo: number): void {
    const t = text.trim();
    if (t.length === 0) return;
    if (t.includes('"sysstat"') && this.sysstatLine === 0) this.sysstatLine = lineNo;
    // A disk entry, or a whole document on one line (its shape is checked even when it holds no disk).
    if (t.includes('"disk_device"') || (t.startsWith('{') && t.includes('"sysstat"') && t.endsWith('}'))) {
      this.entryLine(t, lineNo);
      return;
    }
    if (t.includes('"nodename"')) {
      this.host({ nodename: stringField(t, 'nodename') }, lineNo);
      return;
    }
    this.fieldLine(t, lineNo);
  }

  end(lastLine: number): void {
    this.finishRun(lastLine);
    if (this.runs.emitted > 0) return;
    const source = this.options.source;
    if (this.runs.firstSkipped !== undefined) {
      throw new ParseError({
        source,
        line: this.runs.firstSkipped.line,
        problem: `no disk entry could be read: ${this.runs.firstSkipped.message}`,
        expected: 'iostat -o JSON output with numbers for every disk field',
      });
    }
    throw new ParseError({
      source,
      line: this.sysstatLine,
      problem: this.sysstatLine > 0 ? 'sysstat JSON with no disk entries' : 'no sysstat JSON found',
      expected: 'iostat -o JSON output with "disk" entries',
    });
  }

  /** A line of host fields, a report's timestamp or the start of its "disk" array. */
  private fieldLine(t: string, lineNo: number): void {
    const meta = this.meta;
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
    if (stamp !== undefined) this.time = this.reportTime(stamp, lineNo);
    if (/^"disk"\s*:\s*\[/.test(t)) {
      this.currentRun(lineNo).startReport(this.time);
      this.time = undefined;
    }
  }

  private finishRun(endLine: number): void {
    if (this.run !== undefined) this.runs.finish(this.run, endLine);
    this.run = undefined;
    this.idCache.clear();
  }

  private currentRun(line: number): IostatRunBuilder {
    const meta = this.meta;
    this.run ??= new IostatRunBuilder(
      {
        index: this.runs.nextIndex(),
        platform: 'linux',
        dialect: DIALECT,
        name: meta.host ?? '',
        context: [],
        meta,
        startLine: this.runStart || line,
      },
      this.options,
    );
    return this.run;
  }

  /** The document is not what iostat -o JSON prints at `where`. */
  private wrongShape(line: number, where: string, value: unknown, expected: string): never {
    throw new ParseError({
      source: this.options.source,
      line,
      problem: `sysstat JSON of the wrong shape: ${where} is ${describeJson(value)}`,
      expected: `${expected} at ${where}, as iostat -o JSON prints it`,
    });
  }

  /** Column ids for the keys of a disk entry, cached per key list (sysstat prints the same keys for every disk). */
  private idsFor(target: IostatRunBuilder, keys: readonly string[], line: number): Int16Array | undefined {
    const signature = keys.join(' ');
    if (this.idCache.has(signature)) return this.idCache.get(signature);
    // Raw keys stay as printed in the JSON; their meaning comes from the text header they stand for.
    const ids = target.columnIdsFor(
      keys.map((key) => ({ ...columnsFrom([KEY_TO_HEADER[key] ?? key], LINUX_COLUMNS)[0]!, name: key })),
    );
    if (ids === undefined)
      target.warn(
        line,
        `disk entries with these ${keys.length} keys ignored: a run holds at most ${MAX_COLUMNS} distinct columns`,
      );
    this.idCache.set(signature, ids);
    return ids;
  }

  private disk(entry: unknown, line: number, where: string): void {
    if (!isObject(entry)) {
      this.currentRun(line).skipRow(line, `${where} is ${describeJson(entry)}, not a disk object; ignored`);
      return;
    }
    const device = entry['disk_device'];
    if (typeof device !== 'string') {
      this.currentRun(line).skipRow(
        line,
        `${where} has "disk_device" ${describeJson(device)}, not a device name; ignored`,
      );
      return;
    }
    const target = this.currentRun(line);
    const keys = Object.keys(entry).filter((k) => k !== 'disk_device' && k !== PROTOTYPE_KEY);
    if (Object.hasOwn(entry, PROTOTYPE_KEY))
      target.warn(line, `key "${PROTOTYPE_KEY}" of ${where} ignored: no iostat column is called that`);
    const ids = this.idsFor(target, keys, line);
    if (ids === undefined) return;
    for (let i = 0; i < keys.length; i++) this.values[i] = jsonNumber(entry[keys[i]!]);
    target.row(device, undefined, ids, this.values, 0, line);
  }

  /** The ISO time of a report's "timestamp", or undefined (with a warning when it is not a valid one). */
  private reportTime(stamp: unknown, line: number): string | undefined {
    if (stamp === undefined) return undefined;
    const time = typeof stamp === 'string' ? readTimestamp(stamp) : undefined;
    if (time !== undefined && 'iso' in time) return time.iso;
    const shown = typeof stamp === 'string' ? `"${stamp.slice(0, 40)}"` : describeJson(stamp);
    const why = time === undefined ? 'not a date and time benchdrop reads' : `not a valid date (${time.invalid})`;
    this.currentRun(line).warn(line, `timestamp ${shown} is ${why}; the report is kept without a time`);
    return undefined;
  }

  /** A host opens a run at `line`; the run before it ended at `previousEnd`. */
  private host(entry: Json, line: number, previousEnd = line - 1): void {
    this.finishRun(previousEnd);
    const meta: IostatMeta = {};
    this.meta = meta;
    if (typeof entry['nodename'] === 'string') meta.host = entry['nodename'];
    if (typeof entry['sysname'] === 'string') meta.os = entry['sysname'];
    if (typeof entry['release'] === 'string') meta.kernel = entry['release'];
    if (typeof entry['date'] === 'string') meta.date = entry['date'];
    const cpus = entry['number-of-cpus'];
    if (typeof cpus === 'number' && Number.isSafeInteger(cpus) && cpus >= 0) meta.cpus = cpus;
    this.runStart = line;
  }

  /** The array at `where`; a missing one is empty (a host without reports, a report without disks). */
  private arrayAt(value: unknown, line: number, where: string, expected: string): unknown[] {
    if (value === undefined) return [];
    if (!Array.isArray(value)) this.wrongShape(line, where, value, expected);
    return value;
  }

  /** A whole document on one line. */
  private walk(doc: Json, line: number): void {
    const sysstat = doc['sysstat'];
    if (!isObject(sysstat)) this.wrongShape(line, 'sysstat', sysstat, 'an object with "hosts"');
    if (!Array.isArray(sysstat['hosts'])) this.wrongShape(line, 'sysstat.hosts', sysstat['hosts'], 'an array of hosts');
    sysstat['hosts'].forEach((h, i) => {
      const at = `sysstat.hosts[${i}]`;
      if (!isObject(h)) this.wrongShape(line, at, h, 'an object with "nodename" and "statistics"');
      // Every host of a one-line document is on this line, the run before it too.
      this.host(h, line, line);
      this.arrayAt(h['statistics'], line, `${at}.statistics`, 'an array of reports').forEach((stats, j) =>
        this.walkReport(stats, line, `${at}.statistics[${j}]`),
      );
    });
  }

  /** One report of a one-line document: its timestamp and disks. */
  private walkReport(stats: unknown, line: number, where: string): void {
    if (!isObject(stats)) this.wrongShape(line, where, stats, 'an object with "timestamp" and "disk"');
    this.currentRun(line).startReport(this.reportTime(stats['timestamp'], line));
    this.arrayAt(stats['disk'], line, `${where}.disk`, 'an array of disk objects').forEach((d, k) =>
      this.disk(d, line, `${where}.disk[${k}]`),
    );
  }

  /** A line that holds a disk entry, or a whole document squeezed onto one line. */
  private entryLine(t: string, lineNo: number): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(t.replace(/,\s*$/, ''));
    } catch {
      if (t.includes('"sysstat"') || t.includes('"hosts"')) {
        throw new ParseError({
          source: this.options.source,
          line: lineNo,
          problem: 'a sysstat JSON document that does not parse',
          expected: 'complete JSON as printed by iostat -o JSON',
        });
      }
      this.currentRun(lineNo).skipRow(lineNo, `disk entry that is not complete JSON ignored: ${t.slice(0, 80)}`);
      return;
    }
    if (isObject(parsed) && Object.hasOwn(parsed, 'sysstat')) this.walk(parsed, lineNo);
    else this.disk(parsed, lineNo, 'the disk entry');
  }
}

/** A disk value: a JSON number, or a number printed as a string (`"1.50"`); NaN for anything else. */
function jsonNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return parseIostatNumber(value);
  return NaN;
}
