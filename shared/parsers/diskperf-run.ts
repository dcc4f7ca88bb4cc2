/**
 * Builds one diskperf run (diskperf.ts) from the lines of its header block and
 * table: the banner, the `# Key : value` fields, the column header, the units
 * line and the rows, each checked as it comes, bad ones warned about.
 *
 *   # Test date     : Thu APR  3 21:10:13 2020
 *   # req_size  fwd_wt  fwd_rd ...
 *   #  (bytes)  (MB/s)  (MB/s) ...
 *          4096    2.84    5.96 ...
 *
 * yields the run's DiskperfRun { meta: { testDate, startedAt, ... }, columns: ['fwd_wt', 'fwd_rd', ...],
 *   rows: [{ req_size: 4096, line, values: { fwd_wt: 2.84, fwd_rd: 5.96, ... } }], warnings }.
 */
import type { DiskperfMeta, DiskperfRow, DiskperfRun, ParseWarning } from '../model.ts';
import { DISKPERF_METRICS, type DiskperfMetric } from '../metrics.ts';
import { printable } from '../printable.ts';
import { MAX_VALUE, valueProblem } from './numbers.ts';
import { readTimestamp } from './timestamps.ts';
import { MAX_WARNINGS } from './types.ts';

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const INTEGER = /^\d+$/;

/** Header values are cut to this many characters, and at most this many unknown fields are kept. */
const MAX_FIELD_LENGTH = 1024;
const MAX_FIELD_NAME_LENGTH = 64;
const MAX_EXTRA_FIELDS = 50;

export const ROWS_EXPECTED =
  'rows of numbers under the "# req_size ..." header: the request size in bytes, then one MB/s value per column';

type FieldKey = 'name' | 'date' | 'machine' | 'type' | 'path' | 'sizes' | 'parameters' | 'fileSize';

const FIELD_KEYS: Readonly<Record<string, FieldKey>> = {
  'test name': 'name',
  'test date': 'date',
  'test machine': 'machine',
  'test type': 'type',
  'test path': 'path',
  'request sizes': 'sizes',
  parameters: 'parameters',
};

/** The known header field a key names, if it names one. */
export function fieldKey(key: string): FieldKey | undefined {
  const k = key.toLowerCase().replace(/\s+/g, ' ');
  if (Object.hasOwn(FIELD_KEYS, k)) return FIELD_KEYS[k];
  // `XFS file size`, and by analogy `EFS file size`, `File size`.
  return /(?:^|\s)file size$/.test(k) ? 'fileSize' : undefined;
}

export class DiskperfRunBuilder {
  readonly run: DiskperfRun;
  /** Line of the `# req_size` header, or of the banner/first field when there is no table yet. */
  headerLine: number;
  hasTable = false;
  /** Metric for each printed column after req_size; undefined for unknown columns. */
  private layout: (DiskperfMetric | undefined)[] = [];
  unitsChecked = false;
  private readonly seenSizes = new Set<number>();
  /** First reason a row was skipped, for the message when no row is valid. */
  firstProblem: string | undefined;
  /** The last row, when it was too short (it becomes `truncated` if it ends the table). */
  private lastShort: { warning: ParseWarning; have: number; want: number } | undefined;
  lastRowLine = 0;
  /** Warnings beyond MAX_WARNINGS, counted. */
  suppressed = 0;
  /** Unknown header fields beyond MAX_EXTRA_FIELDS were met (warned once). */
  private extraIgnored = false;

  constructor(context: string[], startLine: number, lineNo: number) {
    this.run = {
      format: 'diskperf',
      platform: 'irix',
      dialect: 'diskperf',
      index: -1,
      name: '',
      context,
      startLine,
      endLine: lineNo,
      warnings: [],
      meta: {},
      columns: [],
      rows: [],
    };
    this.headerLine = lineNo;
  }

  warn(line: number, message: string): ParseWarning {
    // Messages quote the file: no control character reaches a terminal or a log.
    const warning = { line, message: printable(message) };
    if (this.run.warnings.length < MAX_WARNINGS) this.run.warnings.push(warning);
    else this.suppressed++;
    return warning;
  }

  /** The table ended: a too-short last row was a truncated one. */
  close(): void {
    const short = this.lastShort;
    if (short && this.lastRowLine === short.warning.line) {
      short.warning.message = `truncated last row: ${short.have} of ${short.want} values; row skipped`;
    }
  }

  setBanner(version: string, lineNo: number): void {
    this.run.meta.version = version;
    this.run.dialect = `diskperf-${version}`;
    this.run.endLine = lineNo;
    if (version !== '1.2') this.warn(lineNo, `Diskperf V${version}: only the V1.2 layout is known; read as V1.2`);
  }

  /** A `# Key : value` line of the header block. */
  setField(key: string, value: string, lineNo: number): void {
    const kind = fieldKey(key);
    this.run.endLine = lineNo;
    if (kind === undefined) {
      // Bounded, so that no header makes a run too large to store.
      key = key.slice(0, MAX_FIELD_NAME_LENGTH);
      if (!this.roomForExtra(key, lineNo)) return;
    }
    if (value.length > MAX_FIELD_LENGTH) {
      this.warn(
        lineNo,
        `header field "${printable(key, 40)}" is ${value.length} characters long; cut to ${MAX_FIELD_LENGTH}`,
      );
      value = value.slice(0, MAX_FIELD_LENGTH);
    }
    this.setKnownField(kind, key, value, lineNo);
  }

  /** Whether an unknown field may be kept (MAX_EXTRA_FIELDS), warned once when it may not. */
  private roomForExtra(key: string, lineNo: number): boolean {
    const extra = this.run.meta.extra ?? {};
    if (Object.hasOwn(extra, key) || Object.keys(extra).length < MAX_EXTRA_FIELDS) return true;
    if (!this.extraIgnored)
      this.warn(lineNo, `more than ${MAX_EXTRA_FIELDS} unknown header fields; this one and the rest are ignored`);
    this.extraIgnored = true;
    return false;
  }

  private setKnownField(kind: FieldKey | undefined, key: string, value: string, lineNo: number): void {
    const meta: DiskperfMeta = this.run.meta;
    switch (kind) {
      case 'name':
        meta.testName = value;
        return;
      case 'date':
        return this.setDate(value, lineNo);
      case 'machine':
        return setMachine(meta, value);
      case 'type':
        meta.testType = value;
        return;
      case 'path':
        meta.testPath = value;
        return;
      case 'sizes':
        return this.setSizes(value, lineNo);
      case 'parameters':
        return this.setParameters(value, lineNo);
      case 'fileSize':
        return this.setFileSize(key, value, lineNo);
      default:
        (meta.extra ??= {})[key] = value;
    }
  }

  private setDate(value: string, lineNo: number): void {
    const meta = this.run.meta;
    meta.testDate = value;
    const time = readTimestamp(value);
    if (time !== undefined && 'iso' in time) meta.startedAt = time.iso;
    else if (time !== undefined)
      this.warn(
        lineNo,
        `test date "${printable(value, 60)}" is not a valid date (${time.invalid}); kept as printed only`,
      );
    else this.warn(lineNo, `unrecognised test date "${printable(value, 60)}"; kept as printed only`);
  }

  private setSizes(value: string, lineNo: number): void {
    const { min, max } = keyValues(value).values;
    if (min !== undefined && max !== undefined && isByteCount(min) && isByteCount(max)) {
      this.run.meta.requestSizes = { min: Number(min), max: Number(max) };
    } else {
      this.warn(lineNo, `unrecognised request sizes "${printable(value, 60)}" (expected min=<bytes> max=<bytes>)`);
    }
  }

  private setParameters(value: string, lineNo: number): void {
    const pairs = keyValues(value);
    const parameters: Record<string, number | string> = {};
    // A number too large to be a setting stays text, as printed.
    for (const [k, v] of Object.entries(pairs.values))
      parameters[k] = NUMBER.test(v) && Math.abs(Number(v)) < MAX_VALUE ? Number(v) : v;
    this.run.meta.parameters = parameters;
    if (pairs.rest.length > 0)
      this.warn(lineNo, `unrecognised parameters "${printable(pairs.rest.join(' '), 60)}" (expected name=value)`);
  }

  private setFileSize(key: string, value: string, lineNo: number): void {
    const meta = this.run.meta;
    const m = /^(\d+)(?:\s*bytes?)?$/i.exec(value);
    if (m && isByteCount(m[1]!)) meta.fileSizeBytes = Number(m[1]);
    else this.warn(lineNo, `unrecognised file size "${printable(value, 60)}" (expected <n> bytes)`);
    if (!/^xfs file size$/i.test(key.replace(/\s+/g, ' '))) (meta.extra ??= {})[key] = value;
  }

  /** The `# req_size ...` header: the columns of the rows to come. */
  setColumns(text: string, lineNo: number): void {
    const names = text.replace(/^#/, '').trim().split(/\s+/).slice(1);
    this.hasTable = true;
    this.headerLine = lineNo;
    this.layout = [];
    this.run.columns = [];
    this.unitsChecked = false;
    this.run.endLine = lineNo;
    for (const name of names) {
      const metric = (DISKPERF_METRICS as readonly string[]).find((m) => m === name.toLowerCase()) as
        DiskperfMetric | undefined;
      if (metric === undefined) {
        this.warn(lineNo, `unknown column "${printable(name, 40)}" ignored`);
        this.layout.push(undefined);
      } else if (this.run.columns.includes(metric)) {
        this.warn(lineNo, `column "${printable(name, 40)}" repeated; the second one is ignored`);
        this.layout.push(undefined);
      } else {
        this.layout.push(metric);
        this.run.columns.push(metric);
      }
    }
    if (this.run.columns.length === 0) {
      this.firstProblem = 'the header names no known column (fwd_wt fwd_rd bwd_wt bwd_rd rnd_wt rnd_rd)';
      this.warn(lineNo, this.firstProblem);
    }
  }

  /** The `#  (bytes)  (MB/s) ...` line under the column header. */
  checkUnits(text: string, lineNo: number): void {
    this.unitsChecked = true;
    this.run.endLine = lineNo;
    const units = text.replace(/^#/, '').trim().split(/\s+/);
    if (units.length !== this.layout.length + 1) {
      this.warn(lineNo, `units line has ${units.length} entries for ${this.layout.length + 1} columns`);
    }
    if (units[0] !== undefined && units[0].toLowerCase() !== '(bytes)') {
      this.warn(lineNo, `req_size unit is ${units[0]}, expected (bytes); read as bytes`);
    }
    this.layout.forEach((metric, i) => {
      const unit = units[i + 1];
      if (metric && unit !== undefined && unit.toLowerCase() !== '(mb/s)') {
        this.warn(lineNo, `${metric} unit is ${unit}, expected (MB/s); values kept as printed`);
      }
    });
  }

  private skipRow(lineNo: number, message: string): ParseWarning {
    this.firstProblem ??= `line ${lineNo}: ${message}`;
    return this.warn(lineNo, `${message}; row skipped`);
  }

  addRow(tokens: string[], lineNo: number): void {
    this.run.endLine = lineNo;
    this.lastRowLine = lineNo;
    if (this.run.columns.length === 0) return; // already reported at the header
    const want = this.layout.length + 1;
    if (tokens.length !== want) {
      const warning = this.skipRow(lineNo, `row has ${tokens.length} values, the header has ${want} columns`);
      if (tokens.length < want) this.lastShort = { warning, have: tokens.length, want };
      return;
    }
    const reqSize = Number(tokens[0]);
    if (!isByteCount(tokens[0]!) || reqSize <= 0) {
      this.skipRow(lineNo, `request size "${printable(tokens[0]!, 40)}" is not a positive whole number of bytes`);
      return;
    }
    const values = this.rowValues(tokens, lineNo);
    if (values === undefined) return;
    if (this.seenSizes.has(reqSize)) {
      this.skipRow(lineNo, `req_size ${reqSize} repeated; the first row is kept`);
      return;
    }
    this.seenSizes.add(reqSize);
    this.run.rows.push({ req_size: reqSize, line: lineNo, values });
  }

  /** The values of a row by metric, or undefined (with the row skipped) if one is not a valid number. */
  private rowValues(tokens: string[], lineNo: number): DiskperfRow['values'] | undefined {
    const values: DiskperfRow['values'] = {};
    for (let i = 1; i < tokens.length; i++) {
      const metric = this.layout[i - 1];
      const token = tokens[i]!;
      if (!NUMBER.test(token)) {
        this.skipRow(lineNo, `non-numeric value "${printable(token, 40)}" in column ${metric ?? i + 1}`);
        return undefined;
      }
      if (metric === undefined) continue;
      const value = Number(token);
      const problem = valueProblem(value, 'throughput');
      if (problem !== undefined) {
        this.skipRow(lineNo, `${metric} ${problem}`);
        return undefined;
      }
      values[metric] = value;
    }
    return values;
  }
}

/** `IRIX IRIS 6.5 10070055 IP22`: the os, host, release and cpu board of the test machine. */
function setMachine(meta: DiskperfMeta, value: string): void {
  meta.machine = value;
  const parts = value.split(/\s+/).filter(Boolean);
  if (parts[0]) meta.os = parts[0];
  if (parts[1]) meta.host = parts[1];
  if (parts[2]) meta.osRelease = parts[2];
  const last = parts[parts.length - 1];
  if (parts.length >= 4 && last && /^IP\d+$/i.test(last)) meta.cpuBoard = last;
}

/** A whole number of bytes that a JavaScript number (and DynamoDB) holds exactly. */
function isByteCount(text: string): boolean {
  return INTEGER.test(text) && Number.isSafeInteger(Number(text));
}

/** A table row: an integer first token and at least half of the tokens numbers. */
export function isRow(tokens: string[]): boolean {
  if (!INTEGER.test(tokens[0] ?? '')) return false;
  const numeric = tokens.filter((t) => NUMBER.test(t)).length;
  return numeric * 2 >= tokens.length;
}

/** `min=4096 max=4194304` -> { min: '4096', max: '4194304' }, plus the tokens that are not name=value. */
function keyValues(text: string): { values: Record<string, string>; rest: string[] } {
  const values: Record<string, string> = {};
  const rest: string[] = [];
  for (const token of text.split(/\s+/).filter(Boolean)) {
    const m = /^([A-Za-z_][\w.-]*)=(.*)$/.exec(token);
    if (m && m[2] !== '') values[m[1]!] = m[2]!;
    else rest.push(token);
  }
  return { values, rest };
}
