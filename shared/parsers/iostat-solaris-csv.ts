/**
 * Solaris `iostat -r`: the `iostat -x` reports with commas between fields (`-xpr`, `-xnr`, `-xnMr`, `-xner`).
 *
 *   extended device statistics
 *   device,r/s,w/s,kr/s,kw/s,wait,actv,svc_t,%w,%b,
 *   dad0,a,0.0,0.7,0.0,5.8,0.0,0.0,4.3,0,0
 *   nfs1,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0,0
 *
 * yields IostatRun { platform: 'solaris', dialect: 'solaris-xr', series: [{ device: 'dad0,a',
 *   samples: [{ sinceBoot: true, values: { read_iops: 0, write_iops: 0.7, write_kBps: 5.8, service_ms: 4.3, ... },
 *   raw: { 'w/s': 0.7, 'kw/s': 5.8, ... } }] }, { device: 'nfs1', ... }] }
 *
 * The header ends in a comma when the device comes first; with -n it comes last
 * (`r/s,w/s,kr/s,kw/s,wait,actv,wsvc_t,asvc_t,%w,%b,device`). A partition's name holds a
 * comma of its own (`dad0,a`), so the device is whatever the value columns leave over.
 * Columns mean what they mean in `iostat -x` (iostat-solaris.ts): r/s, w/s ops/s -> read_iops,
 * write_iops; kr/s, kw/s kB/s (Mr/s, Mw/s MB/s) -> read_kBps, write_kBps; wait, actv requests
 * -> wait_queue, active_queue; wsvc_t, asvc_t, svc_t ms -> wait_ms, service_ms; %b -> util_pct.
 * Every header opens a report; the first report of a run counts since boot.
 */
import type { IostatMeta } from '../model.ts';
import { printable } from '../printable.ts';
import { commandFromLine, MAX_CONTEXT_LINES } from './context.ts';
import { ParseError } from './errors.ts';
import { columnsFrom, type TableLayout } from './iostat-layout.ts';
import { IostatRunBuilder, MAX_COLUMNS, RunSequence } from './iostat-run.ts';
import { isTitle } from './iostat-sessions.ts';
import { COLUMNS } from './iostat-solaris.ts';
import { parseIostatNumber } from './numbers.ts';
import { readTimestamp } from './timestamps.ts';
import type { LineParser, ParserOptions } from './types.ts';

/** The layout a comma-separated header announces, if the line is one. */
function csvLayout(trimmed: string): TableLayout | undefined {
  if (!trimmed.includes(',') || /\s/.test(trimmed)) return undefined;
  const fields = trimmed.split(',');
  if (fields[fields.length - 1] === '') fields.pop();
  let deviceAt: TableLayout['deviceAt'];
  if (fields[0] === 'device') deviceAt = 'first';
  else if (fields[fields.length - 1] === 'device') deviceAt = 'last';
  else return undefined;
  const names = deviceAt === 'first' ? fields.slice(1) : fields.slice(0, -1);
  if (names.length < 3 || !names.includes('actv')) return undefined;
  if (!names.every((n) => Object.hasOwn(COLUMNS, n))) return undefined;
  const flags = [deviceAt === 'last' ? 'xn' : 'x', names.includes('Mr/s') ? 'M' : '', names.includes('s/w') ? 'e' : ''];
  return {
    platform: 'solaris',
    dialect: `solaris-${flags.join('')}r`,
    deviceAt,
    columns: columnsFrom(names, COLUMNS),
    optionalTail: 0,
  };
}

/** Whether a trimmed line is the header of a comma-separated Solaris report. */
export function isSolarisCsvLine(trimmed: string): boolean {
  return csvLayout(trimmed) !== undefined;
}

export function createSolarisCsvParser(options: ParserOptions): LineParser {
  return new SolarisCsvParser(options);
}

interface Active {
  text: string;
  layout: TableLayout;
  ids: Int16Array;
  line: number;
}

class SolarisCsvParser implements LineParser {
  private readonly runs: RunSequence;
  private run: IostatRunBuilder | undefined;
  private active: Active | undefined;
  private context: string[] = [];
  private meta: IostatMeta = {};
  private runStart = 0;
  private pendingTime: string | undefined;
  private lastHeader = 0;
  private readonly values = new Float64Array(MAX_COLUMNS);

  constructor(private readonly options: ParserOptions) {
    this.runs = new RunSequence(options.onRun);
  }

  line(text: string, lineNo: number): void {
    const t = text.trim();
    if (t.length === 0 || isTitle(t)) return;
    if (this.active !== undefined && t === this.active.text) return this.header(this.active.layout, t, lineNo);
    const layout = csvLayout(t);
    if (layout !== undefined) return this.header(layout, t, lineNo);
    if (this.active !== undefined && t.includes(',') && !/\s/.test(t)) return this.row(t, lineNo);
    this.otherLine(t, lineNo);
  }

  end(lastLine: number): void {
    this.finishRun(lastLine);
    if (this.runs.emitted > 0) return;
    const source = this.options.source;
    if (this.runs.firstSkipped !== undefined)
      throw new ParseError({
        source,
        line: this.runs.firstSkipped.line,
        problem: `no device row fits the comma-separated iostat header: ${this.runs.firstSkipped.message}`,
        expected: 'rows such as "sd0,0.0,1.2,..." with a number for every column of the header',
      });
    if (this.lastHeader > 0)
      throw new ParseError({
        source,
        line: this.lastHeader,
        problem: 'a comma-separated iostat header with no device rows under it',
        expected: 'device rows such as "sd0,0.0,1.2,0.0,9.6,0.0,0.0,4.3,0,1" after the header',
      });
    throw new ParseError({
      source,
      line: 0,
      problem: 'no comma-separated iostat header found',
      expected: 'an iostat -xr header such as "device,r/s,w/s,kr/s,kw/s,wait,actv,svc_t,%w,%b,"',
    });
  }

  /** Each header opens a report (a new header layout after rows: a new run). */
  private header(layout: TableLayout, text: string, lineNo: number): void {
    if (this.run?.hasRows && this.active !== undefined && this.active.text !== text) this.finishRun(lineNo - 1);
    const run = this.builder(lineNo, layout);
    const ids = run.columnIdsFor(layout.columns);
    if (ids === undefined) {
      run.warn(lineNo, `more than ${MAX_COLUMNS} distinct columns in one run: header ignored`);
      return;
    }
    run.startReport(this.pendingTime);
    this.pendingTime = undefined;
    this.active = { text, layout, ids, line: lineNo };
    this.lastHeader = lineNo;
  }

  /** A device row: the value columns at one end, the device (commas and all) the rest. */
  private row(t: string, lineNo: number): void {
    const a = this.active!;
    const run = this.run!;
    const fields = t.split(',');
    if (fields[fields.length - 1] === '') fields.pop();
    const width = a.ids.length;
    if (fields.length <= width) {
      run.skipRow(
        lineNo,
        `row "${printable(t, 60)}" has ${fields.length} fields, ` +
          `fewer than the ${width} values and the device the header of line ${a.line} announces; row skipped`,
      );
      return;
    }
    const first = a.layout.deviceAt === 'first' ? fields.length - width : 0;
    for (let i = 0; i < width; i++) this.values[i] = parseIostatNumber(fields[first + i]!);
    const device = (a.layout.deviceAt === 'first' ? fields.slice(0, first) : fields.slice(width)).join(',');
    if (!Number.isNaN(Number(device))) {
      run.skipRow(lineNo, `row "${printable(t, 60)}" has no device name; row skipped`);
      return;
    }
    run.row(device, undefined, a.ids, this.values, 0, lineNo);
  }

  /** Timestamps (-T) time the next report; commands are the context of the next run. */
  private otherLine(t: string, lineNo: number): void {
    const time = readTimestamp(t);
    if (time !== undefined) {
      if ('iso' in time) this.pendingTime = time.iso;
      else this.builder(lineNo).warn(lineNo, `timestamp "${printable(t, 40)}" is not a valid date; ignored`);
      return;
    }
    const command = commandFromLine(t);
    if (command === undefined) return;
    if (this.run?.hasRows) this.finishRun(lineNo - 1);
    this.context.push(command);
    if (this.context.length > MAX_CONTEXT_LINES) this.context.shift();
    if (/\biostat\b/.test(command)) this.meta.command = command;
    this.runStart ||= lineNo;
  }

  private builder(line: number, layout?: TableLayout): IostatRunBuilder {
    if (this.run === undefined) {
      this.run = new IostatRunBuilder(
        {
          index: this.runs.nextIndex(),
          platform: 'solaris',
          dialect: layout?.dialect ?? 'solaris-xr',
          name: '',
          context: this.context,
          meta: this.meta,
          startLine: this.runStart || line,
        },
        this.options,
      );
      this.context = [];
      this.meta = {};
      this.runStart = 0;
    } else if (layout !== undefined && !this.run.hasRows) this.run.dialect = layout.dialect;
    return this.run;
  }

  private finishRun(endLine: number): void {
    const run = this.run;
    this.run = undefined;
    this.active = undefined;
    if (run === undefined) return;
    this.runs.finish(run, endLine);
  }
}
