/**
 * fio's `--output-format=json` and `json+` (fio 2.x and 3.x), local and
 * `--client` runs. The document is read a line at a time: each job object is
 * cut out of the `jobs` (or `client_stats`) array as soon as it closes and
 * parsed alone, so a json+ log of thousands of jobs never sits in memory whole.
 *
 *   fio: terminating on signal 2                   <- anything before the document is skipped
 *   {
 *     "fio version" : "fio-3.33",
 *     "global options" : { "ioengine" : "libaio", "direct" : "1" },
 *     "jobs" : [
 *       { "jobname" : "seq", "groupid" : 0, "error" : 0,
 *         "job options" : { "rw" : "read", "bs" : "128k", "iodepth" : "4" },
 *         "read" : { "io_bytes" : 5138, "bw_bytes" : 428172, "iops" : 3266.69, "runtime" : 12,
 *                    "clat_ns" : { "mean" : 1200.5, "percentile" : { "99.000000" : 3719168 } }, ... },
 *
 * yields FioJob { name: 'seq', options: { rw: 'read', bs: '128k', bsBytes: 131072, iodepth: 4,
 *   ioengine: 'libaio', direct: true }, directions: [{ direction: 'read', iops: 3266.69,
 *   clatPercentilesUs: { p99: 3719.168 }, ... }] }
 *
 * fio 2.x prints latencies in µs (`clat`) and io_bytes in KiB; 3.x in ns
 * (`clat_ns`) with io_kbytes beside io_bytes. Duplicate keys (fio's `"0.00" : 0`
 * padding) keep the last value. What follows the closing `}` (a fence, a
 * comment's end) is skipped; a second document starts over.
 */
import { printable } from '../printable.ts';
import { ParseError } from './errors.ts';
import {
  FIO_DIRECTIONS,
  fioSizeBytes,
  percentileOf,
  type FioDirectionResult,
  type FioHeader,
  type FioJob,
  type FioJobOptions,
  type FioLatency,
  type FioLineParser,
  type FioParserOptions,
  type FioPercentile,
} from './fio-record.ts';
import { epochSecondsIso } from './timestamps.ts';

type Json = Record<string, unknown>;

/** The key that opens a fio document (its first), and the arrays that hold the jobs. */
export const FIO_VERSION_KEY = '"fio version"';
const JOB_ARRAYS = new Set(['jobs', 'client_stats']);
/** Lines kept while looking for the document's `{` before its version key (a Go string, a comment opener). */
const LOOKBACK_LINES = 8;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function createFioJsonParser(options: FioParserOptions): FioLineParser & { readonly plus: boolean } {
  return new FioJsonParser(options);
}

/** A piece of the document being cut out: its text and the line it starts on. */
interface Capture {
  parts: string[];
  line: number;
}

class FioJsonParser implements FioLineParser {
  private readonly recent: { text: string; lineNo: number }[] = [];
  private inDocument = false;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The last string closed at depth 1 (a key of the document), and whether a `:` followed it. */
  private stringStart = -1;
  private lastKey = '';
  private keyParts: string[] = [];
  /** Inside a jobs array (depth 2 and deeper). */
  private inJobs = false;
  private job: Capture | undefined;
  private header: Capture | undefined;
  private headers: Json[] = [];
  private jobs = 0;
  private documentLine = 0;
  private globalOptions: Json = {};
  private version: string | undefined;
  plus = false;

  constructor(private readonly options: FioParserOptions) {}

  line(text: string, lineNo: number): void {
    if (!this.inDocument) {
      this.recent.push({ text, lineNo });
      if (this.recent.length > LOOKBACK_LINES) this.recent.shift();
      if (!text.includes(FIO_VERSION_KEY)) return;
      this.startDocument();
      return;
    }
    this.scan(text, 0, lineNo);
  }

  /** The version key was seen: the document starts at the last `{` before it. */
  private startDocument(): void {
    const lines = this.recent.splice(0);
    const last = lines[lines.length - 1]!;
    const keyAt = last.text.indexOf(FIO_VERSION_KEY);
    let from = -1;
    let at = lines.length - 1;
    for (; at >= 0; at--) {
      const text = at === lines.length - 1 ? last.text.slice(0, keyAt) : lines[at]!.text;
      from = text.lastIndexOf('{');
      if (from >= 0) break;
    }
    if (from < 0) {
      throw new ParseError({
        source: this.options.source,
        line: last.lineNo,
        problem: `fio's version key with no "{" opening its document before it`,
        expected: 'a fio JSON document starting with "{" on this line or the ones just before',
      });
    }
    this.inDocument = true;
    this.depth = 0;
    this.inJobs = false;
    this.documentLine = lines[at]!.lineNo;
    this.header = { parts: [], line: this.documentLine };
    for (let i = at; i < lines.length; i++) this.scan(lines[i]!.text, i === at ? from : 0, lines[i]!.lineNo);
  }

  /** Walks one line from `from`: strings, depth, and where jobs and the header begin and end. */
  private scan(text: string, from: number, lineNo: number): void {
    let segment = from;
    for (let i = from; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) {
          this.inString = false;
          if (this.depth === 1) this.closeKey(text, i);
        }
        continue;
      }
      if (c === 0x22) {
        this.inString = true;
        if (this.depth === 1) this.openKey(i);
      } else if (c === 0x7b || c === 0x5b) {
        if (this.inJobs && this.depth === 2 && c === 0x7b) {
          this.flushHeader(text, segment, i);
          segment = i;
          this.job = { parts: [], line: lineNo };
        }
        this.depth++;
        if (this.depth === 2 && c === 0x5b && JOB_ARRAYS.has(this.lastKey)) {
          this.flushHeader(text, segment, i + 1);
          segment = i + 1;
          this.inJobs = true;
        }
      } else if (c === 0x7d || c === 0x5d) {
        this.depth--;
        if (this.depth < 0) this.fail(lineNo, text, `a "${text[i]}" that closes nothing`);
        if (this.job && this.depth === 2 && c === 0x7d) {
          this.job.parts.push(text.slice(segment, i + 1));
          segment = i + 1;
          this.finishJob(this.job);
          this.job = undefined;
        } else if (this.inJobs && this.depth === 1) {
          this.inJobs = false;
          segment = i;
        } else if (this.depth === 0) {
          this.flushHeader(text, segment, i + 1);
          this.finishDocument();
          return;
        }
      }
    }
    if (this.job) this.job.parts.push(text.slice(segment));
    else this.flushHeader(text, segment, text.length);
  }

  private openKey(at: number): void {
    this.stringStart = at + 1;
    this.keyParts = [];
  }

  private closeKey(text: string, at: number): void {
    this.lastKey = this.keyParts.join('') + text.slice(Math.max(this.stringStart, 0), at);
    this.stringStart = -1;
  }

  /** Header text (the document outside its jobs) from [from, to) of the line. */
  private flushHeader(text: string, from: number, to: number): void {
    if (this.inJobs || this.job) return;
    if (this.inString && this.depth === 1 && this.stringStart >= 0) {
      // A key split over lines (never fio's own, but a re-wrapped paste): keep its first part.
      this.keyParts.push(text.slice(this.stringStart));
      this.stringStart = 0;
    }
    if (to > from) this.header?.parts.push(text.slice(from, to));
  }

  private finishJob(capture: Capture): void {
    const value = this.parsePart(capture, 'a job');
    if (!isObject(value)) this.fail(capture.line, '', 'a job entry that is not an object');
    this.options.onJob(this.readJob(value, capture.line));
    this.jobs++;
  }

  private finishDocument(): void {
    const header = this.parsePart(this.header!, 'the document');
    if (isObject(header)) this.headers.push(header);
    this.inDocument = false;
    this.header = undefined;
    this.version = undefined;
    this.globalOptions = {};
  }

  /** JSON.parse of a cut-out piece; when it is not JSON, an error on the line JSON.parse stopped at. */
  private parsePart(capture: Capture, what: string): unknown {
    const text = capture.parts.join('\n');
    try {
      return JSON.parse(text);
    } catch (error) {
      const message = (error as Error).message;
      const at = /position (\d+)/.exec(message);
      const line = capture.line + (at ? text.slice(0, Number(at[1])).split('\n').length - 1 : 0);
      const where = at ? (text.split('\n')[line - capture.line] ?? '') : '';
      return this.fail(
        line,
        where,
        `${what} that is not valid JSON (${message.replace(/ in JSON at position.*$/, '')})`,
      );
    }
  }

  private fail(line: number, text: string, problem: string): never {
    throw new ParseError({
      source: this.options.source,
      line,
      problem: text ? `${problem} in "${printable(text.trim(), 60)}"` : problem,
      expected: 'fio --output-format=json or json+ output, complete',
    });
  }

  /**
   * A job's options: the document's global options, then its own (a job's override).
   * The global options come before the jobs in fio's document, so they are read from
   * the header text seen so far.
   */
  private optionsOf(job: Json): FioJobOptions {
    if (this.version === undefined) this.readHeaderSoFar();
    const own = isObject(job['job options']) ? job['job options'] : {};
    const all: Json = { ...this.globalOptions, ...own };
    const text = (key: string) => (typeof all[key] === 'string' ? (all[key] as string) : undefined);
    const whole = (key: string) => {
      const v = text(key);
      return v !== undefined && /^\s*\d+\s*$/.test(v) ? Number(v) : undefined;
    };
    const options: FioJobOptions = {};
    const rw = text('rw') ?? text('readwrite');
    if (rw !== undefined) options.rw = rw;
    const bs = text('bs') ?? text('blocksize');
    if (bs !== undefined) {
      options.bs = bs;
      const bytes = fioSizeBytes(bs);
      if (bytes !== undefined) options.bsBytes = bytes;
    }
    const iodepth = whole('iodepth');
    if (iodepth !== undefined) options.iodepth = iodepth;
    const numjobs = whole('numjobs');
    if (numjobs !== undefined) options.numjobs = numjobs;
    const ioengine = text('ioengine');
    if (ioengine !== undefined) options.ioengine = ioengine;
    const direct = text('direct');
    if (direct !== undefined) options.direct = direct.trim() !== '0';
    const size = text('size');
    if (size !== undefined) options.size = size;
    const runtime = text('runtime') ?? text('timeout');
    if (runtime !== undefined) options.runtime = runtime;
    return options;
  }

  /** The processes a job's result sums: its numjobs with group_reporting (a key fio writes when set), else 1. */
  private processesOf(job: Json, options: FioJobOptions): number {
    const own = isObject(job['job options']) ? job['job options'] : {};
    const grouped = 'group_reporting' in own || 'group_reporting' in this.globalOptions;
    return grouped ? (options.numjobs ?? 1) : 1;
  }

  /** The version and global options from the header text read before the first job. */
  private readHeaderSoFar(): void {
    const head = this.header?.parts.join('\n') ?? '';
    const version = /"fio version"\s*:\s*"([^"]*)"/.exec(head);
    this.version = version?.[1] ?? '';
    const start = head.indexOf('"global options"');
    if (start < 0) return;
    const open = head.indexOf('{', start);
    const close = head.indexOf('}', open);
    if (open < 0 || close < 0) return;
    try {
      const parsed: unknown = JSON.parse(head.slice(open, close + 1));
      if (isObject(parsed)) this.globalOptions = parsed;
    } catch {
      // A global options object that does not parse alone is read again with the whole header.
    }
  }

  private readJob(job: Json, line: number): FioJob {
    const name = typeof job['jobname'] === 'string' ? job['jobname'] : '';
    const error = typeof job['error'] === 'number' ? job['error'] : 0;
    const directions: FioDirectionResult[] = [];
    for (const direction of FIO_DIRECTIONS) {
      const section = job[direction];
      if (!isObject(section)) continue;
      if (isObject(section['clat_ns']) && isObject(section['clat_ns']['bins'])) this.plus = true;
      const result = this.readDirection(direction, section, line);
      if (result.ioBytes > 0 || result.iops > 0) directions.push(result);
    }
    const options = this.optionsOf(job);
    const out: FioJob = { name, error, options, directions, line, processes: this.processesOf(job, options) };
    if (typeof job['groupid'] === 'number') out.groupId = job['groupid'];
    if (typeof job['hostname'] === 'string') out.client = job['hostname'];
    return out;
  }

  private readDirection(direction: FioDirectionResult['direction'], s: Json, line: number): FioDirectionResult {
    const num = (key: string): number => {
      const v = s[key];
      if (v === undefined) return 0;
      if (typeof v !== 'number' || !Number.isFinite(v))
        this.fail(line, '', `${direction}.${key} is ${JSON.stringify(v)?.slice(0, 40)}, not a number`);
      return v;
    };
    // 3.x: io_bytes in bytes beside io_kbytes; 2.x: io_bytes alone, in KiB.
    const ioBytes = s['io_kbytes'] !== undefined ? num('io_bytes') : num('io_bytes') * 1024;
    const bandwidthBytesPerSec = s['bw_bytes'] !== undefined ? num('bw_bytes') : num('bw') * 1024;
    const nanoseconds = isObject(s['clat_ns']) || isObject(s['lat_ns']);
    const perUs = nanoseconds ? 1000 : 1;
    const clat = s[nanoseconds ? 'clat_ns' : 'clat'];
    const lat = s[nanoseconds ? 'lat_ns' : 'lat'];
    const result: FioDirectionResult = {
      direction,
      iops: num('iops'),
      bandwidthBytesPerSec,
      ioBytes,
      runtimeMs: num('runtime'),
      clatPercentilesUs: isObject(clat) ? percentiles(clat, perUs) : {},
    };
    if (isObject(lat)) result.lat = latency(lat, perUs);
    if (isObject(clat)) result.clat = latency(clat, perUs);
    return result;
  }

  end(lastLine: number): FioHeader {
    if (this.inDocument) {
      throw new ParseError({
        source: this.options.source,
        line: lastLine,
        problem:
          this.job !== undefined
            ? `the input ends inside the job that starts on line ${this.job.line}`
            : `the input ends inside the fio JSON document that starts on line ${this.documentLine}`,
        expected: 'the whole document, up to its closing "}"',
      });
    }
    if (this.jobs === 0) {
      throw new ParseError({
        source: this.options.source,
        line: 0,
        problem: this.headers.length > 0 ? 'a fio JSON document with no jobs' : 'no fio JSON document',
        expected: 'fio --output-format=json output: a document with a "jobs" or "client_stats" array',
      });
    }
    const first = this.headers[0] ?? {};
    const header: FioHeader = {};
    if (typeof first['fio version'] === 'string') header.version = first['fio version'];
    // A timestamp outside any real date (a damaged document) dates nothing.
    const time = typeof first['timestamp'] === 'number' ? epochSecondsIso(first['timestamp']) : undefined;
    if (time !== undefined) header.time = time;
    return header;
  }
}

const finite = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Divided, not multiplied by 1/1000: 15663104 ns is 15663.104 µs, not 15663.104000000001. */
function latency(s: Json, perUs: number): FioLatency {
  return {
    minUs: finite(s['min']) / perUs,
    maxUs: finite(s['max']) / perUs,
    meanUs: finite(s['mean']) / perUs,
    stddevUs: finite(s['stddev']) / perUs,
  };
}

function percentiles(clat: Json, perUs: number): Partial<Record<FioPercentile, number>> {
  const out: Partial<Record<FioPercentile, number>> = {};
  const table = clat['percentile'];
  if (!isObject(table)) return out;
  for (const [key, value] of Object.entries(table)) {
    const name = percentileOf(Number(key));
    if (name !== undefined && typeof value === 'number') out[name] = value / perUs;
  }
  return out;
}
