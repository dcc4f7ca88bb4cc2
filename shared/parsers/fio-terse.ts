/**
 * fio's terse output (`--output-format=terse`, `--minimal`, `--terse-version=2..5`): one line of
 * semicolon-separated figures per job (per group with group_reporting, one per interval with
 * --status-interval), read by position as fio's HOWTO ("Terse output") lays them out.
 *
 *   Jobs: 1 (f=1): [m(1)][100.0%][r=17.1MiB/s]                 <- anything not terse is skipped
 *   3;fio-3.33;mix;0;0;1048576;17476;4369;60001;2;61;4.5;1.2;48;9120;215.3;88.1;1.000000%=96;...
 *     ...;99.000000%=1004;...;0%=0;50;9122;219.8;88.4;15000;19800;100.000000%;17470.2;610.5;   <- read
 *     262144;4369;1092;60001;...                                                                <- write
 *
 * yields FioJob { name: 'mix', groupId: 0, error: 0, options: {}, directions: [{ direction: 'read',
 *   iops: 4369, bandwidthBytesPerSec: 17895424, ioBytes: 1073741824, runtimeMs: 60001,
 *   lat: { minUs: 50, ... }, clat: { minUs: 48, maxUs: 9120, meanUs: 215.3, stddevUs: 88.1 },
 *   clatPercentilesUs: { p99: 1004, ... } }, { direction: 'write', ... }] }
 *
 * The layout (fio's stat.c writes it so from 2.0 on):
 * - the job: `2;job;groupid;error` in version 2 (no fio version), `V;fio-3.33;job;groupid;error` after;
 * - one block per direction: read and write in version 3 and in fio 2.0's version 2; read, write and
 *   trim in 4, 5 and the version 2 of later fio; one `mixed` block alone with unified_rw_reporting,
 *   and one after the others with `=both` (fio 3.27+);
 * - a block: io (KiB), bw (KiB/s), iops, runtime (ms); slat and clat min, max, mean, stddev (µs);
 *   20 clat percentiles `99.000000%=1004` (µs, `0%=0` when unused); lat min, max, mean, stddev (µs);
 *   bw min, max, share of the group (`100.000000%`), mean, stddev (KiB/s); version 5 adds the bw
 *   samples and iops min, max, mean, stddev, samples (41 fields, 47 in version 5);
 * - cpu usr%, sys%, ctx, majf, minf; 7 I/O depths; 10 µs and 12 ms latency buckets (34 fields);
 * - what is not read: 9 fields a disk (version 3 on), continue_on_error's error count and first
 *   error, the job's description.
 *
 * Nothing names a version 2 line as fio's, so one is taken as a record only in its whole shape (see
 * isTerseV2Line): `2;job;groupid;error;`, a `P%=V` percentile where the first block keeps its first,
 * and cpu usr% and sys% right after whole blocks, with the rest of the tail after them:
 *
 *   2;randread-4k;0;0;1200000;20000;5000;60000;3;95;...;1.000000%=330;...;4.123400%;11.876600%;...
 *
 * Terse carries no job options (rw, bs, iodepth) and no host, even from `--client` runs. fio prints
 * iops and bw as whole numbers; an all-zero latency (gtod_reduce, not measured) is left out; with
 * lat_percentiles=1 fio prints total-latency percentiles in the same slots, which the line does not
 * tell. A terse line quoted after other text on its line (`# output version 3;fio-2.1.10;...`) is
 * read too when it is whole, and skipped as an elided example when it is not.
 */
import { printable } from '../printable.ts';
import { ParseError } from './errors.ts';
import {
  percentileOf,
  type FioDirection,
  type FioDirectionResult,
  type FioHeader,
  type FioJob,
  type FioLatency,
  type FioLineParser,
  type FioParserOptions,
  type FioPercentile,
} from './fio-record.ts';

/** A line starting with a terse record of any version that names fio's: `3;fio-3.33;`. */
const VERSIONED_START = /^(\d+);fio-[^;]*;/;
/** Version 2 names no fio version: `2;job;groupid;error;` and the read block's io. */
const V2_START = /^2;[^;]*;\d+;\d+;\d/;
/** A clat percentile slot: `99.000000%=1004`, or `0%=0` when unused. */
const PERCENTILE_SLOT = /^(\d+(?:\.\d+)?)%=(\d+(?:\.\d+)?)$/;
/** A record of version 3 to 5 quoted after other text on its line (a comment, a backtick). */
const QUOTED = /[\s`'"]([3-5];fio-[^;\s]*;)/;
const SUPPORTED = 'fio terse versions 2 to 5';

/** Offsets in a direction's block. */
const IO_KIB = 0;
const BW_KIB = 1;
const IOPS = 2;
const RUNTIME_MS = 3;
const CLAT = 8;
const PERCENTILES = 12;
const PERCENTILE_SLOTS = 20;
const LAT = 32;
const BLOCK_FIELDS = 41;
/** Version 5's bw samples and iops min, max, mean, stddev, samples after each block. */
const V5_BLOCK_FIELDS = BLOCK_FIELDS + 6;
/** cpu (5), I/O depths (7), µs (10) and ms (12) latency buckets: after the blocks, always there. */
const TAIL_FIELDS = 34;

const BLOCK_NAMES: readonly string[] = [
  'total I/O (KiB)',
  'bandwidth (KiB/s)',
  'IOPS',
  'runtime (ms)',
  ...['slat', 'clat'].flatMap((l) => ['min', 'max', 'mean', 'stddev'].map((s) => `${l} ${s} (µs)`)),
  ...Array.from({ length: PERCENTILE_SLOTS }, (_, i) => `clat percentile ${i + 1}`),
  ...['min', 'max', 'mean', 'stddev'].map((s) => `lat ${s} (µs)`),
  ...['min', 'max', 'share of the group', 'mean', 'stddev'].map((s) => `bandwidth ${s}`),
  'bandwidth samples',
  ...['min', 'max', 'mean', 'stddev', 'samples'].map((s) => `IOPS ${s}`),
];

/** Where a version keeps the job's fields, and how long its blocks are. */
interface Version {
  version: number;
  /** Indexes (0-based) of the job name, group and error, and of the first block. */
  name: number;
  groupId: number;
  error: number;
  firstBlock: number;
  blockFields: number;
  /** The directions of its blocks without unified_rw_reporting. */
  directions: readonly FioDirection[];
  /** Version 2 as fio 2.0 wrote it, before the trim block came: read and write only. */
  withoutTrim?: readonly FioDirection[];
}

function versionOf(version: number): Version {
  const v2 = version === 2;
  return {
    version,
    name: v2 ? 1 : 2,
    groupId: v2 ? 2 : 3,
    error: v2 ? 3 : 4,
    firstBlock: v2 ? 4 : 5,
    blockFields: version === 5 ? V5_BLOCK_FIELDS : BLOCK_FIELDS,
    directions: version === 3 ? ['read', 'write'] : ['read', 'write', 'trim'],
    ...(v2 ? { withoutTrim: ['read', 'write'] } : {}),
  };
}

const V2 = versionOf(2);

/** A terse record found on a line: where it starts, its version, and whether other text came before it. */
interface Found {
  at: number;
  version: number;
  quoted: boolean;
  /** Its second field is fio's version (`fio-3.33`). */
  named: boolean;
}

function findRecord(text: string): Found | undefined {
  const start = text.length - text.trimStart().length;
  const body = text.slice(start);
  // A line of another shape that starts `2;` is no record; one cut short is, and fails as such.
  if (v2Fields(body) !== undefined) return { at: start, version: 2, quoted: false, named: false };
  const versioned = VERSIONED_START.exec(body);
  if (versioned) return { at: start, version: Number(versioned[1]), quoted: false, named: true };
  const quoted = QUOTED.exec(text);
  if (quoted) return { at: quoted.index + 1, version: Number(quoted[1]![0]), quoted: true, named: true };
  return undefined;
}

/** The record's fields, without a trailing `;`'s empty field and a closing quote or backtick. */
function fieldsOf(text: string, at: number): string[] {
  const fields = text.slice(at).trimEnd().split(';');
  if (fields.length > 1 && fields[fields.length - 1] === '') fields.pop();
  const last = fields.length - 1;
  fields[last] = fields[last]!.replace(/[`'"]+$/, '');
  return fields;
}

const isPercentage = (field: string | undefined) => field !== undefined && /^\d+(?:\.\d+)?%$/.test(field.trim());

/**
 * The directions of the line's blocks: what the version writes (fio 2.0's read and write alone for
 * version 2 when the cpu usr% follows them), `mixed` alone when the cpu usr% comes right after the first
 * block (unified_rw_reporting=1), `mixed` last when one more block comes before it (=both) and the line
 * holds it whole.
 */
function blockDirections(fields: readonly string[], v: Version): readonly FioDirection[] {
  if (isPercentage(fields[v.firstBlock + v.blockFields])) return ['mixed'];
  // Where a trim block would start its io figure, fio 2.0 wrote the cpu usr%.
  const older = v.withoutTrim;
  if (older !== undefined && isPercentage(fields[v.firstBlock + older.length * v.blockFields])) return older;
  const afterUsual = v.firstBlock + v.directions.length * v.blockFields;
  const mixedLast = afterUsual + v.blockFields;
  if (!isPercentage(fields[afterUsual]) && isPercentage(fields[mixedLast]) && fields.length >= mixedLast + TAIL_FIELDS)
    return [...v.directions, 'mixed'];
  return v.directions;
}

/**
 * The fields of the version 2 record the body starts with, if it does: `2;job;groupid;error;` and a
 * percentile where the first block keeps its first, what no other list of figures has there.
 */
function v2Fields(body: string): string[] | undefined {
  if (!V2_START.test(body)) return undefined;
  const fields = fieldsOf(body, 0);
  return PERCENTILE_SLOT.test(fields[V2.firstBlock + PERCENTILES]?.trim() ?? '') ? fields : undefined;
}

/**
 * Whether the line is a whole terse version 2 record, told by its shape alone (no fio version names
 * it): the start v2Fields looks for, then cpu usr% and sys% right after whole blocks, and the rest of
 * the tail after them.
 */
export function isTerseV2Line(text: string): boolean {
  const fields = v2Fields(text.trimStart());
  if (fields === undefined) return false;
  const usr = V2.firstBlock + blockDirections(fields, V2).length * V2.blockFields;
  return isPercentage(fields[usr]) && isPercentage(fields[usr + 1]) && fields.length >= usr + TAIL_FIELDS;
}

export function createFioTerseParser(options: FioParserOptions): FioLineParser {
  return new FioTerseParser(options);
}

class FioTerseParser implements FioLineParser {
  private jobs = 0;
  private version: string | undefined;

  constructor(private readonly options: FioParserOptions) {}

  line(text: string, lineNo: number): void {
    const found = findRecord(text);
    if (found === undefined) return;
    if (found.version < 2 || found.version > 5) {
      this.fail(lineNo, `a terse line of version ${found.version}`, `one of ${SUPPORTED}`);
    }
    if (found.version === 2 && found.named) {
      this.fail(
        lineNo,
        'a terse version 2 line with a fio version in field 2',
        'version 2 as fio writes it, "2;job;groupid;error;...", or version 3 to 5, "3;fio-3.33;job;groupid;error;..."',
      );
    }
    const job = new TerseLine(this.options.source, lineNo, fieldsOf(text, found.at), versionOf(found.version));
    if (found.quoted && !job.whole()) return;
    this.options.onJob(job.read());
    this.jobs++;
    if (this.version === undefined && found.version > 2) this.version = job.fioVersion();
  }

  end(): FioHeader {
    if (this.jobs === 0) this.fail(0, 'no fio terse line', `lines such as "3;fio-3.33;job;0;0;..." (${SUPPORTED})`);
    return this.version !== undefined ? { version: this.version } : {};
  }

  private fail(line: number, problem: string, expected: string): never {
    throw new ParseError({ source: this.options.source, line, problem, expected });
  }
}

/** One terse line's fields, read by the layout of its version. */
class TerseLine {
  private readonly directions: readonly FioDirection[];
  private readonly needed: number;

  constructor(
    private readonly source: string,
    private readonly lineNo: number,
    private readonly fields: readonly string[],
    private readonly v: Version,
  ) {
    this.directions = blockDirections(fields, v);
    this.needed = v.firstBlock + this.directions.length * v.blockFields + TAIL_FIELDS;
  }

  whole(): boolean {
    return this.fields.length >= this.needed;
  }

  fioVersion(): string {
    return this.fields[1]!;
  }

  read(): FioJob {
    this.checkLength();
    const directions: FioDirectionResult[] = [];
    this.directions.forEach((direction, i) => {
      const result = this.readBlock(direction, this.v.firstBlock + i * this.v.blockFields);
      if (result !== undefined) directions.push(result);
    });
    return {
      name: this.fields[this.v.name]!,
      groupId: this.wholeNumber(this.v.groupId, 'group id'),
      error: this.wholeNumber(this.v.error, 'error'),
      options: {},
      directions,
      line: this.lineNo,
    };
  }

  /** The whole line is there, and the cpu usr% sits where the layout puts it. */
  private checkLength(): void {
    const { version } = this.v;
    const blocks = this.directions.join(', ');
    if (!this.whole()) {
      this.fail(
        `a terse version ${version} line cut short: ${this.fields.length} fields, ` +
          `where its layout needs ${this.needed}`,
        `the whole line: ${this.needed} fields or more (the job, ${blocks} blocks of ${this.v.blockFields}, ` +
          `cpu and latency buckets)`,
      );
    }
    const usr = this.v.firstBlock + this.directions.length * this.v.blockFields;
    if (!isPercentage(this.fields[usr])) {
      this.fail(
        `field ${usr + 1} (cpu usr) is "${printable(this.fields[usr]!, 40)}", not a percentage`,
        `the terse version ${version} layout: the job, ${blocks} blocks of ${this.v.blockFields} fields, then cpu usr%`,
      );
    }
  }

  /** A direction's block from index `at`; undefined when it did no I/O (a randread job's write block). */
  private readBlock(direction: FioDirection, at: number): FioDirectionResult | undefined {
    const figure = (offset: number) => this.number(at + offset, `${direction} ${BLOCK_NAMES[offset]!}`);
    const ioKiB = figure(IO_KIB);
    const runtimeMs = figure(RUNTIME_MS);
    const result: FioDirectionResult = {
      direction,
      iops: figure(IOPS),
      bandwidthBytesPerSec: figure(BW_KIB) * 1024,
      ioBytes: ioKiB * 1024,
      runtimeMs,
      clatPercentilesUs: this.percentiles(direction, at + PERCENTILES),
    };
    const lat = this.latency(direction, at + LAT, LAT);
    if (lat !== undefined) result.lat = lat;
    const clat = this.latency(direction, at + CLAT, CLAT);
    if (clat !== undefined) result.clat = clat;
    return ioKiB > 0 || runtimeMs > 0 ? result : undefined;
  }

  /** min, max, mean, stddev from index `at` (block offset `offset`); undefined when all are 0 (not measured). */
  private latency(direction: FioDirection, at: number, offset: number): FioLatency | undefined {
    const [minUs, maxUs, meanUs, stddevUs] = [0, 1, 2, 3].map((k) =>
      this.number(at + k, `${direction} ${BLOCK_NAMES[offset + k]!}`),
    ) as [number, number, number, number];
    if (minUs === 0 && maxUs === 0 && meanUs === 0 && stddevUs === 0) return undefined;
    return { minUs, maxUs, meanUs, stddevUs };
  }

  /** The kept percentiles among the 20 `P%=V` slots from index `at`. */
  private percentiles(direction: FioDirection, at: number): Partial<Record<FioPercentile, number>> {
    const out: Partial<Record<FioPercentile, number>> = {};
    for (let k = 0; k < PERCENTILE_SLOTS; k++) {
      const field = this.fields[at + k]!.trim();
      const m = PERCENTILE_SLOT.exec(field);
      if (!m) {
        this.fail(
          `field ${at + k + 1} (${direction} clat percentile ${k + 1}) is "${printable(field, 40)}"`,
          'a percentile and its latency in µs, such as "99.000000%=1004" or "0%=0"',
        );
      }
      const name = percentileOf(Number(m[1]));
      if (name !== undefined) out[name] = Number(m[2]);
    }
    return out;
  }

  private number(index: number, what: string): number {
    const field = this.fields[index]!.trim();
    if (!/^\d+(?:\.\d+)?$/.test(field)) {
      this.fail(
        `field ${index + 1} (${what}) is "${printable(field, 40)}", not a number`,
        'a number there, as fio writes it ("4369", "215.301234")',
      );
    }
    return Number(field);
  }

  private wholeNumber(index: number, what: string): number {
    const value = this.number(index, what);
    if (!Number.isInteger(value))
      this.fail(`field ${index + 1} (${what}) is ${value}, not a whole number`, 'a whole number');
    return value;
  }

  private fail(problem: string, expected: string): never {
    throw new ParseError({ source: this.source, line: this.lineNo, problem, expected });
  }
}
