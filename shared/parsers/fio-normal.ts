/**
 * fio's normal (human-readable) output, fio 2.0 to 3.x: the job announcements
 * before a run, then one result block per job (per group with group_reporting),
 * read a line at a time; each job is yielded as its block closes.
 *
 *   randread: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=32
 *   fio-3.33
 *   Starting 4 processes
 *   Jobs: 4 (f=4): [r(4)][100.0%][r=25.8MiB/s][r=6614 IOPS][eta 00m:00s]   <- progress: skipped
 *   randread: (groupid=0, jobs=4): err= 0: pid=1234: Tue Mar  5 10:00:00 2024
 *     read: IOPS=6614, BW=25.8MiB/s (27.1MB/s)(1550MiB/60001msec)
 *       clat (nsec): min=90123, max=4100.5k, avg=120456.78, stdev=20345.61
 *       clat percentiles (usec):
 *        |  1.00th=[   98],  5.00th=[  102], ... 50.00th=[  118], ... 99.00th=[  143], ...
 *   Run status group 0 (all jobs):                                        <- summary, Disk stats: skipped
 *
 * yields FioJob { name: 'randread', groupId: 0, error: 0, options: { rw: 'randread', bs: '4k',
 *   bsBytes: 4096, iodepth: 32, numjobs: 4, ioengine: 'libaio' }, directions: [{ direction: 'read',
 *   iops: 6614, bandwidthBytesPerSec: 27053260.8, ioBytes: 1625292800, runtimeMs: 60001,
 *   clat: { minUs: 90.123, maxUs: 4100.5, ... }, clatPercentilesUs: { p50: 118, p99: 143, ... } }] }
 *
 * fio 2.x prints `read : io=1550.2MB, bw=26456KB/s, iops=6614, runt= 60001msec`, its KB and MB
 * binary. 3.x's BW is binary (KiB/s, MiB/s) unless kb_base=1000 made it decimal (kB/s, MB/s); the
 * other figure in parentheses is never read. IOPS and latencies may carry SI suffixes (`68.4k`).
 * Each latency line and each percentile table names its own unit. `bs` is written the way fio takes
 * it (`4k`, `4k-32k`, `64k,4k`); ioBytes, printed rounded (`26.6MiB`), is rounded to whole bytes.
 * Several runs in one file (the same names again) each yield their jobs. `<host>` prefixes of a
 * `--client` run name the job's client where the host is certain. The job line's date (local time,
 * no zone) dates the output.
 */
import { printable } from '../printable.ts';
import { ParseError } from './errors.ts';
import {
  fioSizeBytes,
  percentileOf,
  type FioDirection,
  type FioDirectionResult,
  type FioHeader,
  type FioJob,
  type FioJobOptions,
  type FioLatency,
  type FioLineParser,
  type FioParserOptions,
} from './fio-record.ts';
import { parseTimestamp } from './timestamps.ts';
import { splitPrefix, stripPrefix, type BlockPrefix } from './wrappers.ts';

/** `name: (g=0): rw=randread, bs=..., ioengine=libaio, iodepth=32`: a job announced before the run. */
const ANNOUNCE = /^(.+?): \(g=\d+\): (rw=.*)$/;
/** `name: (groupid=0, jobs=8): err= 0: pid=1234: Tue Mar  5 10:00:00 2024`: a result block opens. */
const RESULT = /^(.+?): \(groupid=(\d+), jobs=(\d+)\): err=\s*(\d+)(.*)$/;
/** A progress update (`Jobs: 1 (f=1): [r(1)]...`, `^Cbs: 1 (f=1)...` after an interrupt). */
const PROGRESS = /^(?:\^C)?(?:Jobs|bs): \d+ \(f=\d+\)/;
const VERSION = /^fio[- ](\d+\.\d+\S*)$/;
/** fio 2.0.8 prints its version bare, right after the announcements. */
const BARE_VERSION = /^(\d+\.\d+(?:\.\d+)?(?:-\S+)?)$/;
const STARTING = /^Starting (\d+) (?:process|processes|thread|threads)(?: and (\d+) threads?)?\b/;
const CLIENT_HELLO = /^hostname=([^,\s]+),.*\bfio=(fio-\S+?),/;
/** `<host> ` before a line a `--client` run relayed from its server (a space after it: not an HTML tag). */
const HOST_PREFIX = /^<([\w.:-]+)> (.*)$/;
/** Lines that end a block and start the run's tail. */
const SUMMARY = /^(?:Run status group \d+ \(all jobs\):|Disk stats \(read\/write\):)/;
/** `  read: ...` (lower case: `   READ:` belongs to the summary). */
const DIRECTION = /^\s*(read|write|trim|mixed)\s*:\s*(.*)$/;
const NUM = String.raw`\d+(?:\.\d+)?`;
/** 3.x: `IOPS=68.4k, BW=908MiB/s (952MB/s)(77.6GiB/87485msec); 0 zone resets`. */
const DIRECTION_3 = new RegExp(
  String.raw`^IOPS=(${NUM})([kMG]?), BW=(${NUM})([kKMGTP]?i?)B?(?:/s)?\s*\([^)]*\)` +
    String.raw`\((${NUM})([kKMGTP]?i?)B?/(\d+)msec\)(?:\s*;.*)?$`,
);
/** 2.x: `io=1550.2MB, bw=26456KB/s, iops=6614 , runt= 60001msec`. */
const DIRECTION_2 = new RegExp(
  String.raw`^io=(${NUM})([KMGTP]?)B, bw=(${NUM})\s*([KMGTP]?)B/s, iops=(${NUM})([kKMG]?)\s*, runt=\s*(\d+)msec\s*$`,
);
/** `    clat (nsec): min=1464, max=1495.2k, avg=6098.37, stdev=4963.75` (2.0: `min=560 ,`). */
const LATENCY = new RegExp(
  String.raw`^\s*(slat|clat|lat)\s*\((nsec|usec|msec|sec)\)\s*:\s*min=\s*(\S+?)\s*,\s*max=\s*(\S+?)\s*,\s*` +
    String.raw`avg=\s*(\S+?)\s*,\s*stdev=\s*(\S+?)\s*$`,
);
const PERCENTILES = /^\s*(\w+) percentiles \((nsec|usec|msec|sec)\):/;
const PERCENTILE_ROW = new RegExp(String.raw`^\s*\|((?:\s*${NUM}th=\[\s*${NUM}[kMG]?\s*\],?)+)\s*$`);
const PERCENTILE_ENTRY = new RegExp(String.raw`(${NUM})th=\[\s*(${NUM})([kMG]?)\s*\]`, 'g');
/** Lines every finished block holds, a failed job's too: the block is not cut short. */
const BLOCK_BODY = /^\s*(?:cpu|IO depths)\s*:/;

const US_PER_UNIT: Record<string, number> = { nsec: 1e-3, usec: 1, msec: 1e3, sec: 1e6 };
const SI: Record<string, number> = { '': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9 };
const BINARY: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4, P: 1024 ** 5 };

/** A product or quotient by a power of ten without binary noise: 68.4 × 1000 is 68400, not 68400.00000000001. */
const tidy = (x: number) => Number(x.toPrecision(15));
const scaled = (value: string, factor: number) =>
  factor >= 1 ? tidy(Number(value) * factor) : tidy(Number(value) / Math.round(1 / factor));

/** A 3.x size unit (`Ki`, `Mi`: binary; `k`, `M`: kb_base=1000), as bytes. */
function unit3(unit: string): number {
  const letter = unit.replace('i', '').toUpperCase();
  return unit.endsWith('i') || letter === '' ? BINARY[letter]! : 1000 ** ' KMGTP'.indexOf(letter);
}

/** The way fio takes a size: `4k`, `1m`, `512` (bytes that no binary unit divides). */
function sizeText(bytes: number): string {
  for (const [suffix, factor] of [...Object.entries(BINARY)].reverse())
    if (suffix !== '' && bytes % factor === 0) return `${bytes / factor}${suffix.toLowerCase()}`;
  return String(bytes);
}

/** One direction's block sizes (`4096B-32.0KiB`, `4K-4K`) as fio takes them (`4k-32k`), if they read. */
function rangeText(text: string): string | undefined {
  const [low, high, extra] = text.trim().split('-');
  if (low === undefined || high === undefined || extra !== undefined) return undefined;
  const lo = fioSizeBytes(low);
  const hi = fioSizeBytes(high);
  if (lo === undefined || hi === undefined) return undefined;
  return lo === hi ? sizeText(lo) : `${sizeText(lo)}-${sizeText(hi)}`;
}

/** `(R) 4096B-4096B, (W) 64.0KiB-64.0KiB, (T) ...` (3.x) or `4K-4K/64K-64K/4K-4K` (2.x) as `4k,64k`. */
function blockSizes(text: string): Pick<FioJobOptions, 'bs' | 'bsBytes'> {
  const parts = text.includes('(R)') ? [...text.matchAll(/\(([RWT])\)\s*([^,]+)/g)].map((m) => m[2]!) : text.split('/');
  const sizes = parts.map(rangeText);
  if (sizes.length === 0 || sizes.some((s) => s === undefined)) return { bs: text.trim() };
  const [read, write = read, trim = write] = sizes as string[];
  const bs =
    read === write && write === trim ? read! : write === trim ? `${read},${write}` : `${read},${write},${trim}`;
  const bsBytes = fioSizeBytes(bs);
  return bsBytes === undefined ? { bs } : { bs, bsBytes };
}

/** The options an announcement line gives (`rw=randread, bs=..., ioengine=libaio, iodepth=32`). */
function announcedOptions(text: string): FioJobOptions {
  const options: FioJobOptions = {};
  const rw = /(?:^|, )rw=([^,\s]+)/.exec(text);
  if (rw) options.rw = rw[1]!;
  const bs = /(?:^|, )bs=(.*?)(?=, ioengine=|, iodepth=|$)/.exec(text);
  if (bs) Object.assign(options, blockSizes(bs[1]!));
  const iodepth = /(?:^|, )iodepth=(\d+)/.exec(text);
  if (iodepth) options.iodepth = Number(iodepth[1]);
  const ioengine = /(?:^|, )ioengine=([^,\s]+)/.exec(text);
  if (ioengine) options.ioengine = ioengine[1]!;
  return options;
}

/** A job as announced in the current run. */
interface Announced {
  options: FioJobOptions;
  /** A `...` line followed: numjobs > 1. */
  clones: boolean;
  /** The clients that announced it (`<host>` prefixes). */
  hosts: Set<string>;
}

/** The result block being read. */
interface Block {
  job: FioJob;
  direction?: FioDirectionResult;
  /** µs per unit of the clat percentile table being read, if one is. */
  percentileUnit?: number;
  /** A direction, cpu or IO depths line was read: the block was not cut short after its job line. */
  hasBody: boolean;
}

export function createFioNormalParser(options: FioParserOptions): FioLineParser {
  return new FioNormalParser(options);
}

class FioNormalParser implements FioLineParser {
  private readonly announced = new Map<string, Announced>();
  private lastAnnounced: Announced | undefined;
  private started: number | undefined;
  /** A result was read since the last announcement: the next announcement starts a new run. */
  private resultsInRun = false;
  private readonly clients = new Set<string>();
  private block: Block | undefined;
  private prefix: BlockPrefix | undefined;
  private prefixKnown = false;
  private jobs = 0;
  private version: string | undefined;
  private time: string | undefined;

  constructor(private readonly options: FioParserOptions) {}

  line(text: string, lineNo: number): void {
    // Progress redrawn over itself with carriage returns comes a piece at a time, under its line's number (fio.ts).
    const piece = this.unwrapped(text);
    if (piece.trim() !== '') this.piece(piece, lineNo);
  }

  /**
   * The line without the prefix of the block it sits in (`# ` of a comment): the first job line tells
   * it. The style's detection takes `# name: (g=0): rw=...` as bare (`#` could open a job name), so
   * the prefix is found here.
   */
  private unwrapped(text: string): string {
    if (this.prefix !== undefined) return stripPrefix(text, this.prefix) ?? text;
    if (this.prefixKnown) return text;
    const isJobLine = (line: string) => ANNOUNCE.test(line.trim()) || RESULT.test(line.trim());
    if (!isJobLine(text)) return text;
    this.prefixKnown = true;
    const split = splitPrefix(text).find(({ body }) => isJobLine(body));
    this.prefix = split?.prefix;
    return split?.body ?? text;
  }

  private piece(raw: string, lineNo: number): void {
    let text = raw;
    if (PROGRESS.test(text.trim())) {
      // A progress line may run into the next line fio wrote: keep what follows its last `]`.
      text = text.slice(text.lastIndexOf(']') + 1);
      if (text.trim() === '' || PROGRESS.test(text.trim())) return;
    }
    const prefixed = HOST_PREFIX.exec(text.trim());
    const host = prefixed?.[1];
    const body = prefixed ? prefixed[2]! : text;
    const bare = body.trim();
    const result = RESULT.exec(bare);
    if (result) return this.openBlock(result, host, lineNo);
    const announce = ANNOUNCE.exec(bare);
    if (announce) return this.announce(announce[1]!, announce[2]!, host, lineNo);
    if (SUMMARY.test(bare)) return this.closeBlock(lineNo, false);
    if (this.block) return this.resultLine(body, lineNo);
    this.preamble(bare);
  }

  /** A job announced: a new run when results came since the last one. */
  private announce(name: string, text: string, host: string | undefined, lineNo: number): void {
    this.closeBlock(lineNo, false);
    if (this.resultsInRun) {
      this.announced.clear();
      this.started = undefined;
      this.resultsInRun = false;
    }
    const entry: Announced = this.announced.get(name) ?? { options: {}, clones: false, hosts: new Set() };
    entry.options = announcedOptions(text);
    if (host !== undefined) {
      entry.hosts.add(host);
      this.clients.add(host);
    }
    this.announced.set(name, entry);
    this.lastAnnounced = entry;
  }

  /** Lines between announcements and results: `...`, the version, `Starting N processes`, client hellos. */
  private preamble(text: string): void {
    const afterAnnounce = this.lastAnnounced;
    this.lastAnnounced = undefined;
    if (text === '...') {
      if (afterAnnounce) afterAnnounce.clones = true;
      this.lastAnnounced = afterAnnounce;
      return;
    }
    const version = VERSION.exec(text) ?? (afterAnnounce ? BARE_VERSION.exec(text) : null);
    if (version) {
      this.version ??= `fio-${version[1]}`;
      return;
    }
    const starting = STARTING.exec(text);
    if (starting) {
      this.started = Number(starting[1]) + Number(starting[2] ?? 0);
      return;
    }
    const hello = CLIENT_HELLO.exec(text);
    if (hello) {
      this.clients.add(hello[1]!);
      this.version ??= hello[2]!;
    }
  }

  private openBlock(m: RegExpExecArray, host: string | undefined, lineNo: number): void {
    this.closeBlock(lineNo, false);
    const [, name, groupId, members, error, rest] = m as unknown as [string, string, string, string, string, string];
    const job: FioJob = {
      name,
      error: Number(error),
      options: this.optionsFor(name, Number(members)),
      directions: [],
      line: lineNo,
      groupId: Number(groupId),
      processes: Number(members),
    };
    const errorText = /^\s*\((.*)\)(?=:\s*pid=|\s*$)/.exec(rest);
    if (errorText && job.error !== 0) job.errorText = errorText[1]!;
    const client = host ?? this.clientOf(name);
    if (client !== undefined) job.client = client;
    const date = /pid=\d+:\s*(.+)$/.exec(rest);
    if (date && this.time === undefined) this.time = parseTimestamp(date[1]!.trim());
    this.block = { job, hasBody: false };
    this.resultsInRun = true;
  }

  /**
   * The announced options, and numjobs: `jobs=N` when the block sums N processes; else `Starting N`
   * when the run announced one job; else 1 when its announcement had no `...` (no clones).
   */
  private optionsFor(name: string, members: number): FioJobOptions {
    const announced = this.announced.get(name);
    const options: FioJobOptions = { ...announced?.options };
    if (members > 1) options.numjobs = members;
    else if (this.announced.size === 1 && announced && this.started !== undefined) options.numjobs = this.started;
    else if (announced && !announced.clones) options.numjobs = 1;
    return options;
  }

  /** The client a block without a `<host>` prefix came from, when only one can have sent it. */
  private clientOf(name: string): string | undefined {
    if (name === 'All clients') return undefined;
    const hosts = this.announced.get(name)?.hosts;
    if (hosts !== undefined && hosts.size === 1) return [...hosts][0];
    return this.clients.size === 1 ? [...this.clients][0] : undefined;
  }

  /** A line inside a result block: a direction, its latencies and clat percentiles; the rest is skipped. */
  private resultLine(text: string, lineNo: number): void {
    const block = this.block!;
    const direction = DIRECTION.exec(text);
    if (direction) {
      block.direction = this.readDirection(direction[1] as FioDirection, direction[2]!.trim(), text, lineNo);
      block.job.directions.push(block.direction);
      block.percentileUnit = undefined;
      block.hasBody = true;
      return;
    }
    if (PERCENTILE_ROW.test(text)) {
      if (block.percentileUnit !== undefined && block.direction)
        readPercentiles(text, block.percentileUnit, block.direction);
      return;
    }
    block.percentileUnit = undefined;
    const latency = LATENCY.exec(text);
    if (latency) return this.readLatency(latency, text, lineNo);
    const table = PERCENTILES.exec(text);
    if (table && table[1] === 'clat') block.percentileUnit = US_PER_UNIT[table[2]!];
    if (BLOCK_BODY.test(text)) block.hasBody = true;
  }

  private readDirection(direction: FioDirection, body: string, text: string, lineNo: number): FioDirectionResult {
    const v3 = DIRECTION_3.exec(body);
    if (v3) {
      const [, iops, iopsUnit, bw, bwUnit, io, ioUnit, runtime] = v3 as unknown as string[];
      return {
        direction,
        iops: scaled(iops!, SI[iopsUnit!]!),
        bandwidthBytesPerSec: scaled(bw!, unit3(bwUnit!)),
        ioBytes: Math.round(scaled(io!, unit3(ioUnit!))),
        runtimeMs: Number(runtime),
        clatPercentilesUs: {},
      };
    }
    const v2 = DIRECTION_2.exec(body);
    if (v2) {
      const [, io, ioUnit, bw, bwUnit, iops, iopsUnit, runtime] = v2 as unknown as string[];
      return {
        direction,
        iops: scaled(iops!, SI[iopsUnit!]!),
        bandwidthBytesPerSec: scaled(bw!, BINARY[bwUnit!]!),
        ioBytes: Math.round(scaled(io!, BINARY[ioUnit!]!)),
        runtimeMs: Number(runtime),
        clatPercentilesUs: {},
      };
    }
    return this.fail(lineNo, text, `a ${direction} line whose figures do not read`, DIRECTION_EXPECTED);
  }

  private readLatency(m: RegExpExecArray, text: string, lineNo: number): void {
    const [, kind, unit, ...figures] = m as unknown as string[];
    const perUnit = US_PER_UNIT[unit!]!;
    const values = figures.map((f) => {
      const figure = /^(\d+(?:\.\d+)?)([kMG]?)$/.exec(f);
      if (!figure) return this.fail(lineNo, text, `a ${kind} latency "${printable(f, 20)}" that is not a number`, LAT);
      return scaled(figure[1]!, SI[figure[2]!]! * perUnit);
    });
    const direction = this.block!.direction;
    if (direction === undefined || kind === 'slat') return;
    const [minUs, maxUs, meanUs, stddevUs] = values as [number, number, number, number];
    const latency: FioLatency = { minUs, maxUs, meanUs, stddevUs };
    if (kind === 'clat') direction.clat = latency;
    else direction.lat = latency;
  }

  /** The block is over: its job goes out, unless nothing but its job line was read. */
  private closeBlock(lineNo: number, atEnd: boolean): void {
    const block = this.block;
    if (block === undefined) return;
    this.block = undefined;
    if (!block.hasBody) {
      throw new ParseError({
        source: this.options.source,
        line: lineNo,
        problem: atEnd
          ? `the input ends inside the job result that starts on line ${block.job.line}`
          : `the job result that starts on line ${block.job.line} has no figures before this line`,
        expected: DIRECTION_EXPECTED,
      });
    }
    // Like the JSON parser: the directions that did I/O.
    block.job.directions = block.job.directions.filter((d) => d.ioBytes > 0 || d.iops > 0);
    this.options.onJob(block.job);
    this.jobs++;
  }

  private fail(line: number, text: string, problem: string, expected: string): never {
    throw new ParseError({
      source: this.options.source,
      line,
      problem: `${problem} in "${printable(text.trim(), 80)}"`,
      expected,
    });
  }

  end(lastLine: number): FioHeader {
    this.closeBlock(lastLine, true);
    if (this.jobs === 0) {
      throw new ParseError({
        source: this.options.source,
        line: 0,
        problem: 'fio normal output with no job result',
        expected: 'a result block such as "job: (groupid=0, jobs=1): err= 0: pid=1234: ..." and its direction lines',
      });
    }
    const header: FioHeader = {};
    if (this.version !== undefined) header.version = this.version;
    if (this.time !== undefined) header.time = this.time;
    return header;
  }
}

const DIRECTION_EXPECTED =
  'direction lines such as "  read: IOPS=6614, BW=25.8MiB/s (27.1MB/s)(1550MiB/60001msec)" (fio 3.x) or ' +
  '"  read : io=1550.2MB, bw=26456KB/s, iops=6614, runt= 60001msec" (fio 2.x) after the job line';
const LAT = 'latencies such as "    clat (usec): min=98, max=4100, avg=120.45, stdev=20.34"';

/** A percentile row (`|  1.00th=[   98],  5.00th=[  102], ...`): the kept ones, in µs. */
function readPercentiles(text: string, usPerUnit: number, direction: FioDirectionResult): void {
  for (const m of text.matchAll(PERCENTILE_ENTRY)) {
    const name = percentileOf(Number(m[1]));
    if (name !== undefined) direction.clatPercentilesUs[name] = scaled(m[2]!, SI[m[3]!]! * usPerUnit);
  }
}
