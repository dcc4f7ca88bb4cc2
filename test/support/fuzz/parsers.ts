/**
 * Fuzzing every parser entry (shared/parsers/index.ts) per format: diskperf,
 * iostat from Solaris, Linux (text), FreeBSD and Linux sysstat JSON, and fio
 * (json, json+, terse, normal). Inputs are
 * real logs of the format (test/fixtures) damaged as logs get damaged (lines
 * dropped, repeated, swapped, cut, split or joined; fields cut short, columns
 * swapped; numbers replaced with extremes; indentation lost; bytes flipped; the
 * file truncated, gzipped, or re-encoded), the format's header followed by
 * garbage (random bytes, any string, tokens of the format's own vocabulary), and
 * pure garbage. Each input goes through parseText or parseStream the way a caller
 * uses it (all samples kept; summaries only with samples streamed, as ingestion
 * does, sometimes under a size limit; a continuation part), in chunks of any size.
 *
 * Two more targets: the sysstat JSON documents of the fixtures (and generated
 * ones) with values anywhere in them replaced by JSON of any shape
 * (jsonStructureTarget), and damaged iostat logs cut into parts and stitched
 * again (parallel.ts, in this thread), which must give what one pass gives.
 *
 * The property: a ParseError with a line and a message, or runs that hold up
 * (checkParse): finite numbers everywhere, counts that add up, lines inside the
 * file; and within CASE_TIME_LIMIT_MS. Anything else thrown (an
 * InternalParseError, a TypeError) is a crash.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { DISKPERF_METRICS, IOSTAT_METRICS } from '../../../shared/metrics.ts';
import type { IostatMetric } from '../../../shared/metrics.ts';
import type { IostatRun, IostatSample, MetricSummary, ParsedFile, Run } from '../../../shared/model.ts';
import { ParseError, parseStream, parseText, type StreamResult } from '../../../shared/parsers/index.ts';
import { parseFileInParallel } from '../../../shared/parsers/parallel.ts';
import { MAX_WARNINGS } from '../../../shared/parsers/types.ts';
import { printsBootReport } from '../../../shared/parsers/context.ts';
import { explain, run as runProcess } from '../../../harness/processes.ts';
import { FIXTURES_DIR, fixtureLogs } from '../fixtures.ts';
import { fuzzCases, type FuzzFinding, type FuzzRun, type FuzzTarget } from './cases.ts';

// ---------------------------------------------------------------- targets

export interface ParserTarget {
  /** `diskperf`, `iostat solaris`, ... */
  name: string;
  /** The inputs it is fuzzed with. */
  cases(): fc.Arbitrary<ParserCase>;
  /** Which count of cases.ts applies. */
  budget: Extract<FuzzTarget, 'parser' | 'parallel'>;
}

/** Real logs of a format, as lines, and their whitespace-separated tokens (the format's own vocabulary). */
export interface Seeds {
  name: string;
  seeds: string[][];
  vocabulary: string[];
}

function seedsOf(name: string, files: string[]): Seeds {
  const texts = files.map((f) => readFileSync(f, 'utf8'));
  const vocabulary = [
    ...new Set(texts.flatMap((s) => s.split(/\s+/)).filter((t) => t.length > 0 && t.length < 40)),
  ].sort();
  return { name, seeds: texts.map((s) => s.split(/\r\n|\r|\n/)), vocabulary };
}

function fixturesOf(platform: string, json?: boolean): string[] {
  return fixtureLogs()
    .filter((l) => l.platform === platform && (json === undefined || l.name.endsWith('.json') === json))
    .map((l) => l.log);
}

const JSON_FIXTURES = () => fixturesOf('linux', true);

/** The fio outputs of test/fixtures/fio (their expected records are FioJob lists, not runs). */
const FIO_FIXTURES = () =>
  readdirSync(join(FIXTURES_DIR, 'fio'))
    .filter((f) => !f.endsWith('.expected.json'))
    .sort()
    .map((f) => join(FIXTURES_DIR, 'fio', f));

/** One target per format the parsers read, seeded with every fixture log of it; then the JSON structure and the parallel cuts. */
export function parserTargets(): ParserTarget[] {
  const damaged = (seeds: Seeds): ParserTarget => ({
    name: seeds.name,
    cases: () => parserCaseArb(seeds),
    budget: 'parser',
  });
  const iostatText = seedsOf(PARALLEL_CUTS, [
    ...fixturesOf('solaris'),
    ...fixturesOf('linux', false),
    ...fixturesOf('freebsd'),
  ]);
  return [
    damaged(seedsOf('diskperf', fixturesOf('irix'))),
    damaged(seedsOf('iostat solaris', fixturesOf('solaris'))),
    damaged(seedsOf('iostat linux', fixturesOf('linux', false))),
    damaged(seedsOf('iostat freebsd', fixturesOf('freebsd'))),
    damaged(seedsOf('iostat netbsd', fixturesOf('netbsd'))),
    damaged(seedsOf('iostat openbsd and macos', [...fixturesOf('openbsd'), ...fixturesOf('macos')])),
    damaged(seedsOf('iostat aix', fixturesOf('aix'))),
    damaged(seedsOf('iostat linux-json', JSON_FIXTURES())),
    damaged(seedsOf('fio', FIO_FIXTURES())),
    {
      name: JSON_STRUCTURE,
      cases: () => jsonStructureCaseArb(JSON_FIXTURES().map((f) => JSON.parse(readFileSync(f, 'utf8')) as unknown)),
      budget: 'parser',
    },
    { name: PARALLEL_CUTS, cases: () => parallelCaseArb(iostatText), budget: 'parallel' },
  ];
}

/** The target whose inputs are sysstat JSON documents of any shape. */
export const JSON_STRUCTURE = 'iostat json structure';
/** The target whose inputs are iostat logs parsed in parts (parallel.ts). */
export const PARALLEL_CUTS = 'iostat parallel';

// ---------------------------------------------------------------- inputs

/** Numbers a damaged or hostile log may hold where a value belongs. */
export const EXTREME_NUMBERS = [
  '0',
  '-0',
  '-1',
  '-12.5',
  '1e308',
  '-1e308',
  '1e309',
  '1.7976931348623157e308',
  '5e-324',
  '1e-400',
  '2.5e+300',
  '99999999999999999999999999',
  '9007199254740993',
  '4294967296',
  `1${'0'.repeat(400)}`,
  '0.000000000000000000001',
  'NaN',
  'nan',
  'Infinity',
  '-Infinity',
  'inf',
  '-',
  '--',
  '',
  '1,5',
  '1.2.3',
  '0x10',
  '1e',
  '.',
  ',',
  '+',
  '١٢٣',
  '１２',
  '1.2k',
  '3.4M',
  '9E',
  '99999P',
  '45.0%',
  '-3%',
  '12345.6123456.7',
  '1.0e+06',
  '00000001',
  '1_000',
];

const LINE_ENDS = ['\n', '\r\n', '\r'] as const;

type LineEdit =
  | ['drop', number]
  | ['dup', number, number]
  | ['swap', number, number]
  | ['cut', number, number]
  | ['insert', number, string]
  | ['repeat', number, number, number]
  | ['split', number, number]
  | ['join', number]
  | ['number', number, string]
  | ['reindent', number, number]
  | ['case', number, boolean]
  | ['field-cut', number, number, number]
  | ['columns', number, number, number, boolean];

type ByteEdit = ['flip', number, number] | ['set', number, number] | ['delete', number] | ['truncate', number];

type Wrapping = 'plain' | 'gzip' | 'gzip-cut' | 'utf8-bom' | 'utf16le-bom' | 'latin1';

export interface ParserCase {
  /** What the bytes are, for a counterexample a person can read. */
  how: string;
  bytes: Uint8Array;
  mode: 'text' | 'samples' | 'ingest' | 'continuation' | 'parallel';
  /** 0: one chunk. */
  chunkSize: number;
  /** A size limit (ingest mode only). */
  maxBytes?: number;
  /** Parts to cut the file into (parallel mode only). */
  workers?: number;
}

const NUMBER_TOKEN = /[-+]?\d+(?:[.,]\d+)?(?:[eE][-+]?\d+)?%?/g;

function applyLineEdit(lines: string[], edit: LineEdit): void {
  if (lines.length === 0) return;
  const at = (n: number) => n % lines.length;
  switch (edit[0]) {
    case 'drop':
      lines.splice(at(edit[1]), 1);
      return;
    case 'dup':
      lines.splice(at(edit[1]), 0, ...Array<string>(1 + (edit[2] % 3)).fill(lines[at(edit[1])]!));
      return;
    case 'swap': {
      const [i, j] = [at(edit[1]), at(edit[2])];
      [lines[i], lines[j]] = [lines[j]!, lines[i]!];
      return;
    }
    case 'cut': {
      const line = lines[at(edit[1])]!;
      lines[at(edit[1])] = line.slice(0, edit[2] % (line.length + 1));
      return;
    }
    case 'insert':
      lines.splice(at(edit[1]), 0, edit[2]);
      return;
    case 'repeat': {
      // A block of lines repeated: many reports, many tables, many devices.
      const from = at(edit[1]);
      const block = lines.slice(from, from + 1 + (edit[2] % 12));
      const times = 1 + (edit[3] % 40);
      lines.splice(from, 0, ...Array.from({ length: times }, () => block).flat());
      return;
    }
    case 'split': {
      const i = at(edit[1]);
      const line = lines[i]!;
      const cut = edit[2] % (line.length + 1);
      lines.splice(i, 1, line.slice(0, cut), line.slice(cut));
      return;
    }
    case 'join': {
      const i = at(edit[1]);
      if (i + 1 < lines.length) lines.splice(i, 2, `${lines[i]} ${lines[i + 1]}`);
      return;
    }
    case 'number': {
      // The n-th number of a line (any line with one) becomes an extreme.
      const i = at(edit[1]);
      for (let k = 0; k < lines.length; k++) {
        const line = lines[(i + k) % lines.length]!;
        const found = [...line.matchAll(NUMBER_TOKEN)];
        if (found.length === 0) continue;
        const m = found[edit[1] % found.length]!;
        lines[(i + k) % lines.length] = line.slice(0, m.index) + edit[2] + line.slice(m.index + m[0].length);
        return;
      }
      return;
    }
    case 'reindent': {
      const i = at(edit[1]);
      const line = lines[i]!;
      const how = edit[2] % 5;
      lines[i] =
        how === 0
          ? line.trimStart()
          : how === 1
            ? line.trim().replace(/[ \t]+/g, ' ')
            : how === 2
              ? line.replace(/ {2,}/g, '\t')
              : how === 3
                ? `> ${line}`
                : line.replace(/ /g, '\u00a0');
      return;
    }
    case 'case': {
      const i = at(edit[1]);
      lines[i] = edit[2] ? lines[i]!.toUpperCase() : lines[i]!.toLowerCase();
      return;
    }
    case 'field-cut': {
      // One field of a line cut short (`1249.6` -> `12`, `c1t0d0` -> `c1`), the rest of the line kept.
      const i = at(edit[1]);
      const fields = lines[i]!.split(/(\s+)/);
      const words = fields.flatMap((f, k) => (/\S/.test(f) ? [k] : []));
      if (words.length === 0) return;
      const k = words[edit[2] % words.length]!;
      fields[k] = fields[k]!.slice(0, edit[3] % fields[k]!.length);
      lines[i] = fields.join('');
      return;
    }
    case 'columns': {
      // Two fields swapped in one line, or in every line (a header and its rows alike).
      const swap = (line: string) => {
        const fields = line.split(/(\s+)/);
        const words = fields.flatMap((f, k) => (/\S/.test(f) ? [k] : []));
        if (words.length < 2) return line;
        const [a, b] = [words[edit[2] % words.length]!, words[edit[3] % words.length]!];
        [fields[a], fields[b]] = [fields[b]!, fields[a]!];
        return fields.join('');
      };
      if (edit[4]) lines.forEach((line, k) => (lines[k] = swap(line)));
      else lines[at(edit[1])] = swap(lines[at(edit[1])]!);
      return;
    }
  }
}

function applyByteEdit(bytes: Buffer, edit: ByteEdit): Buffer {
  if (bytes.length === 0) return bytes;
  const at = edit[1] % bytes.length;
  switch (edit[0]) {
    case 'flip':
      bytes[at] = bytes[at]! ^ (1 << (edit[2] % 8));
      return bytes;
    case 'set':
      bytes[at] = edit[2] % 256;
      return bytes;
    case 'delete':
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
    case 'truncate':
      return bytes.subarray(0, at);
  }
}

function wrap(text: string, wrapping: Wrapping, cut: number): Buffer {
  switch (wrapping) {
    case 'plain':
      return Buffer.from(text, 'utf8');
    case 'gzip':
      return gzipSync(text);
    case 'gzip-cut': {
      const zipped = gzipSync(text);
      return zipped.subarray(0, cut % (zipped.length + 1));
    }
    case 'utf8-bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
    case 'utf16le-bom':
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    case 'latin1':
      return Buffer.from(text, 'latin1');
  }
}

const nat = (max = 0x7fffffff) => fc.nat({ max });

function lineEditArb(insertable: fc.Arbitrary<string>): fc.Arbitrary<LineEdit> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.tuple(fc.constant('drop' as const), nat()) },
    { weight: 2, arbitrary: fc.tuple(fc.constant('dup' as const), nat(), nat()) },
    { weight: 2, arbitrary: fc.tuple(fc.constant('swap' as const), nat(), nat()) },
    { weight: 2, arbitrary: fc.tuple(fc.constant('cut' as const), nat(), nat()) },
    { weight: 2, arbitrary: fc.tuple(fc.constant('insert' as const), nat(), insertable) },
    { weight: 1, arbitrary: fc.tuple(fc.constant('repeat' as const), nat(), nat(), nat()) },
    { weight: 1, arbitrary: fc.tuple(fc.constant('split' as const), nat(), nat()) },
    { weight: 1, arbitrary: fc.tuple(fc.constant('join' as const), nat()) },
    { weight: 4, arbitrary: fc.tuple(fc.constant('number' as const), nat(), fc.constantFrom(...EXTREME_NUMBERS)) },
    { weight: 1, arbitrary: fc.tuple(fc.constant('reindent' as const), nat(), nat()) },
    { weight: 1, arbitrary: fc.tuple(fc.constant('case' as const), nat(), fc.boolean()) },
    { weight: 2, arbitrary: fc.tuple(fc.constant('field-cut' as const), nat(), nat(), nat()) },
    { weight: 2, arbitrary: fc.tuple(fc.constant('columns' as const), nat(), nat(), nat(), fc.boolean()) },
  ) as fc.Arbitrary<LineEdit>;
}

const byteEditArb: fc.Arbitrary<ByteEdit> = fc.oneof(
  fc.tuple(fc.constant('flip' as const), nat(), nat(7)),
  fc.tuple(
    fc.constant('set' as const),
    nat(),
    fc.constantFrom(0, 0x0a, 0x0d, 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xfe, 0xff),
  ),
  fc.tuple(fc.constant('delete' as const), nat()),
  fc.tuple(fc.constant('truncate' as const), nat()),
) as fc.Arbitrary<ByteEdit>;

/** A line of the format's own tokens (and extremes, and some noise) in any order. */
function tokenLineArb(t: Seeds): fc.Arbitrary<string> {
  const token = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...t.vocabulary) },
    { weight: 2, arbitrary: fc.constantFrom(...EXTREME_NUMBERS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  );
  return fc
    .array(fc.tuple(token, fc.constantFrom(' ', '  ', '    ', '\t', ': ', ', ')), { maxLength: 24 })
    .map((parts) => parts.map(([a, b]) => a + b).join(''));
}

// Mostly whole or in a few pieces; byte-sized pieces now and then (each piece is an async step: they cost).
const chunkSizeArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 16 }) },
  { weight: 4, arbitrary: fc.integer({ min: 64, max: 4096 }) },
);

const modeArb = fc.constantFrom<ParserCase['mode']>('text', 'samples', 'ingest', 'ingest', 'continuation');

interface Input {
  how: string;
  bytes: Buffer;
}

/** A real log of the format, damaged by up to `maxEdits` line edits, a wrapping and byte edits. */
function damagedLogArb(t: Seeds, maxEdits = 12): fc.Arbitrary<Input> {
  const line = tokenLineArb(t);
  const insertable = fc.oneof(
    { weight: 4, arbitrary: line },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  );
  const seed = fc.nat({ max: t.seeds.length - 1 });
  return fc
    .record({
      seed,
      edits: fc.array(lineEditArb(insertable), { maxLength: maxEdits }),
      eol: fc.constantFrom(...LINE_ENDS),
      // gzip costs ten times a plain parse (zlib streams): it comes now and then.
      wrapping: fc.oneof(
        { weight: 24, arbitrary: fc.constant<Wrapping>('plain') },
        { weight: 1, arbitrary: fc.constantFrom<Wrapping>('gzip', 'gzip-cut') },
        { weight: 2, arbitrary: fc.constantFrom<Wrapping>('utf8-bom', 'utf16le-bom', 'latin1') },
      ),
      cut: nat(),
      bytes: fc.array(byteEditArb, { maxLength: 3 }),
    })
    .map(({ seed: s, edits, eol, wrapping, cut, bytes }) => {
      const lines = t.seeds[s]!.slice();
      for (const edit of edits) applyLineEdit(lines, edit);
      let buf = wrap(lines.join(eol), wrapping, cut);
      if (bytes.length > 0) buf = Buffer.from(buf);
      for (const edit of bytes) buf = applyByteEdit(buf, edit);
      return {
        // Worked out only for a counterexample.
        get how() {
          return `fixture ${s} of ${t.name}, edits ${JSON.stringify(edits)}, ${JSON.stringify(eol)} line ends, ${wrapping}${bytes.length ? `, bytes ${JSON.stringify(bytes)}` : ''}`;
        },
        bytes: buf,
      };
    });
}

/** Inputs for one format: damaged real logs, its header over garbage, and garbage. */
export function parserCaseArb(t: Seeds): fc.Arbitrary<ParserCase> {
  const line = tokenLineArb(t);
  const seed = fc.nat({ max: t.seeds.length - 1 });
  const damaged = damagedLogArb(t);

  const headerOverGarbage = fc
    .record({
      seed,
      keep: fc.integer({ min: 1, max: 12 }),
      garbage: fc.oneof(
        fc.array(line, { maxLength: 30 }).map((ls) => Buffer.from(ls.join('\n'))),
        fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
        fc.string({ unit: 'binary', maxLength: 1000 }).map((s) => Buffer.from(s)),
      ),
    })
    .map(({ seed: s, keep, garbage }) => {
      const head = t.seeds[s]!.slice(0, keep).join('\n');
      return {
        how: `the first ${keep} lines of fixture ${s} of ${t.name}, then garbage`,
        bytes: Buffer.concat([Buffer.from(`${head}\n`), garbage]),
      };
    });

  const garbage = fc.oneof(
    fc.array(line, { maxLength: 40 }).map((ls) => ({ how: `${t.name} tokens`, bytes: Buffer.from(ls.join('\n')) })),
    fc.uint8Array({ maxLength: 2000 }).map((b) => ({ how: 'random bytes', bytes: Buffer.from(b) })),
  );

  return fc
    .record({
      input: fc.oneof(
        { weight: 6, arbitrary: damaged },
        { weight: 2, arbitrary: headerOverGarbage },
        { weight: 1, arbitrary: garbage },
      ),
      mode: modeArb,
      chunkSize: chunkSizeArb,
      limit: fc.option(fc.integer({ min: 1, max: 8000 }), { freq: 4, nil: undefined }),
    })
    .map(({ input, mode, chunkSize, limit }) => ({
      get how() {
        return input.how;
      },
      bytes: input.bytes,
      mode,
      chunkSize,
      ...(mode === 'ingest' && limit !== undefined ? { maxBytes: limit } : {}),
    }));
}

// ---------------------------------------------------------------- sysstat JSON of any shape

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
type JsonObject = { [key: string]: JsonValue };

/** Numbers JSON.stringify cannot write (1e400, -0, 30 digits): strings marked to stand in the text as they are. */
const RAW = '\ue000';
const rawNumber = (text: string) => `${RAW}${text}${RAW}`;
const RAW_IN_TEXT = new RegExp(`"${RAW}([^"${RAW}]*)${RAW}"`, 'g');
const RAW_NUMBERS = [
  '1e400',
  '-1e400',
  '1e308',
  '-0',
  '-0.0',
  '0e0',
  '1E+2',
  '5e-324',
  '1e-400',
  '123456789012345678901234567890',
  '9007199254740993',
  '-1',
  '-12.5',
  '0.000000000000000000001',
];

/** Keys sysstat prints, and keys that mean something to JavaScript. */
const JSON_KEYS = [
  'sysstat',
  'hosts',
  'nodename',
  'sysname',
  'release',
  'machine',
  'number-of-cpus',
  'date',
  'statistics',
  'timestamp',
  'avg-cpu',
  'disk',
  'disk_device',
  'r/s',
  'w/s',
  'rkB/s',
  'wkB/s',
  'util',
  'aqu-sz',
  'r_await',
  '__proto__',
  'constructor',
  'toString',
  'length',
  '',
];

/** Sets a key as data, `__proto__` included (an assignment would set the prototype). */
function setKey(object: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

function objectOf(entries: readonly (readonly [string, JsonValue])[]): JsonObject {
  const object: JsonObject = {};
  for (const [key, value] of entries) setKey(object, key, value);
  return object;
}

const jsonKeyArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...JSON_KEYS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);

const jsonScalarArb: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(...RAW_NUMBERS).map(rawNumber),
  fc.constantFrom(...EXTREME_NUMBERS),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom(
    '01/15/2024 10:00:01 AM',
    '2024-01-15T10:00:01+0100',
    '15.01.2024 25:00:01',
    'sda',
    'c1#t1d0',
    's\u200bda',
    '\u001b[2J',
  ),
);

/** JSON of any shape: scalars, arrays and objects nested a few levels. */
const jsonValueArb: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue; array: JsonValue[]; object: JsonObject }>(
  (tie) => ({
    value: fc.oneof({ depthSize: 'small' }, jsonScalarArb, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }),
    object: fc.array(fc.tuple(jsonKeyArb, tie('value')), { maxLength: 4 }).map(objectOf),
  }),
).value;

/** A small, valid document: hosts of reports of disks, with the fixtures' disk keys. */
function generatedDocArb(diskKeys: readonly string[]): fc.Arbitrary<JsonValue> {
  const disk = fc
    .record({
      device: fc.constantFrom('sda', 'sdb', 'nvme0n1', 'dm-0', 'md127'),
      keys: fc.subarray([...diskKeys], { minLength: 1 }),
      value: fc.double({ min: 0, max: 1e6, noNaN: true }),
    })
    .map(({ device, keys, value }) =>
      objectOf([['disk_device', device], ...keys.map((k, i) => [k, value + i] as const)]),
    );
  const report = fc.record({
    timestamp: fc.constantFrom('01/15/2024 10:00:01 AM', '2024-01-15T10:00:06+0100'),
    disk: fc.array(disk, { maxLength: 4 }),
  });
  const host = fc.record({
    nodename: fc.constantFrom('db1', 'h'),
    sysname: fc.constant('Linux'),
    'number-of-cpus': fc.nat(64),
    statistics: fc.array(report, { maxLength: 4 }),
  });
  return fc.array(host, { minLength: 1, maxLength: 3 }).map((hosts) => ({ sysstat: { hosts } }) as JsonValue);
}

type JsonEditOp = 'replace' | 'delete' | 'wrap' | 'unwrap' | 'duplicate' | 'retype' | 'add-key';
interface JsonEdit {
  /** Child picks from the root down: each goes one level deeper while there are children. */
  path: number[];
  op: JsonEditOp;
  value: JsonValue;
  key: string;
}

const jsonEditArb: fc.Arbitrary<JsonEdit> = fc.record({
  path: fc.array(nat(), { maxLength: 10 }),
  op: fc.constantFrom<JsonEditOp>(
    'replace',
    'replace',
    'replace',
    'delete',
    'wrap',
    'unwrap',
    'duplicate',
    'retype',
    'add-key',
  ),
  value: jsonValueArb,
  key: jsonKeyArb,
});

type Holder = JsonValue[] | JsonObject;

function childKeys(node: JsonValue): (string | number)[] {
  if (Array.isArray(node)) return node.map((_, i) => i);
  if (node !== null && typeof node === 'object') return Object.keys(node);
  return [];
}

function childOf(holder: Holder, key: string | number): JsonValue {
  return (holder as Record<string | number, JsonValue>)[key]!;
}

function setChild(holder: Holder, key: string | number, value: JsonValue): void {
  if (Array.isArray(holder)) holder[key as number] = value;
  else setKey(holder, key as string, value);
}

/** A number as a string, a numeric string as a number, and so on: the same value, the wrong JSON type. */
function retyped(node: JsonValue): JsonValue {
  if (typeof node === 'number') return String(node);
  if (typeof node === 'string') return /^-?\d+(?:\.\d+)?$/.test(node) ? rawNumber(node) : node.length;
  if (typeof node === 'boolean') return node ? 1 : 0;
  if (node === null) return 0;
  return Array.isArray(node) ? objectOf(node.map((v, i) => [String(i), v] as const)) : Object.values(node);
}

function applyJsonEdit(root: { doc: JsonValue }, edit: JsonEdit): void {
  let holder: Holder = root as unknown as JsonObject;
  let key: string | number = 'doc';
  for (const pick of edit.path) {
    const node = childOf(holder, key);
    const children = childKeys(node);
    if (children.length === 0) break;
    holder = node as Holder;
    key = children[pick % children.length]!;
  }
  const node = childOf(holder, key);
  const isRoot = holder === (root as unknown);
  switch (edit.op) {
    case 'replace':
      return setChild(holder, key, edit.value);
    case 'delete':
      if (isRoot) return;
      if (Array.isArray(holder)) holder.splice(key as number, 1);
      else delete holder[key as string];
      return;
    case 'wrap':
      return setChild(holder, key, edit.path.length % 2 === 0 ? [node] : objectOf([[edit.key, node]]));
    case 'unwrap': {
      const first = childKeys(node)[0];
      if (first !== undefined) setChild(holder, key, childOf(node as Holder, first));
      return;
    }
    case 'duplicate':
      if (Array.isArray(holder)) holder.splice(key as number, 0, structuredClone(node));
      else if (!isRoot) setKey(holder, edit.key, structuredClone(node));
      return;
    case 'retype':
      return setChild(holder, key, retyped(node));
    case 'add-key':
      if (Array.isArray(node)) node.push(edit.value);
      else if (node !== null && typeof node === 'object') setKey(node, edit.key, edit.value);
      return;
  }
}

/** As sysstat prints it: one line per key, a disk object (anything with "disk_device") whole on its line. */
function sysstatLayout(value: JsonValue, depth = 0): string {
  const pad = '\t'.repeat(depth + 1);
  const end = '\t'.repeat(depth);
  if (value === null || typeof value !== 'object' || (!Array.isArray(value) && Object.hasOwn(value, 'disk_device')))
    return JSON.stringify(value);
  if (Array.isArray(value)) return `[\n${value.map((v) => pad + sysstatLayout(v, depth + 1)).join(',\n')}\n${end}]`;
  return `{\n${Object.keys(value)
    .map((k) => `${pad}${JSON.stringify(k)}: ${sysstatLayout(value[k]!, depth + 1)}`)
    .join(',\n')}\n${end}}`;
}

function jsonText(doc: JsonValue, oneLine: boolean): string {
  return (oneLine ? JSON.stringify(doc) : sysstatLayout(doc)).replace(RAW_IN_TEXT, '$1');
}

function diskKeysOf(docs: readonly unknown[]): string[] {
  const keys = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node !== null && typeof node === 'object') {
      if (Object.hasOwn(node, 'disk_device')) Object.keys(node).forEach((k) => k !== 'disk_device' && keys.add(k));
      else Object.values(node).forEach(visit);
    }
  };
  docs.forEach(visit);
  return [...keys].sort();
}

/**
 * sysstat JSON documents (the fixtures' and generated ones) with values anywhere
 * in them replaced by JSON of any shape, deleted, wrapped, unwrapped, repeated or
 * given the wrong type; printed on one line (the document walk) or as sysstat
 * prints it (the line-by-line reading).
 */
export function jsonStructureCaseArb(fixtureDocs: readonly unknown[]): fc.Arbitrary<ParserCase> {
  const base = fc.oneof(
    {
      weight: 2,
      arbitrary: fc
        .nat({ max: fixtureDocs.length - 1 })
        .map((i) => ({ from: `fixture document ${i}`, doc: structuredClone(fixtureDocs[i]) as JsonValue })),
    },
    {
      weight: 1,
      arbitrary: generatedDocArb(diskKeysOf(fixtureDocs)).map((doc) => ({
        from: `generated document ${JSON.stringify(doc).slice(0, 200)}`,
        doc,
      })),
    },
  );
  return fc
    .record({
      base,
      edits: fc.array(jsonEditArb, { minLength: 1, maxLength: 6 }),
      oneLine: fc.boolean(),
      mode: modeArb,
      chunkSize: chunkSizeArb,
    })
    .map(({ base: { from, doc }, edits, oneLine, mode, chunkSize }) => {
      const root = { doc: structuredClone(doc) };
      for (const edit of edits) applyJsonEdit(root, edit);
      const text = jsonText(root.doc, oneLine);
      return {
        get how() {
          return `${from}, edits ${JSON.stringify(edits)}, ${oneLine ? 'on one line' : 'as sysstat prints it'}: ${text.slice(0, 2000)}`;
        },
        bytes: Buffer.from(text, 'utf8'),
        mode,
        chunkSize,
      };
    });
}

// ---------------------------------------------------------------- parallel cuts

/**
 * Damaged iostat logs of every platform, a few of them end to end (more reports,
 * more places to cut), parsed in 2-6 parts (parallel.ts) and compared with one pass.
 */
export function parallelCaseArb(t: Seeds): fc.Arbitrary<ParserCase> {
  // Fewer edits than elsewhere: a log damaged all over is rarely cut at all.
  return fc
    .record({
      input: damagedLogArb(t, 4),
      copies: fc.integer({ min: 1, max: 4 }),
      workers: fc.integer({ min: 2, max: 6 }),
    })
    .map(({ input, copies, workers }) => ({
      get how() {
        return `${input.how}, ${copies} times over, in ${workers} parts`;
      },
      bytes: Buffer.concat(Array.from({ length: copies }, () => input.bytes)),
      mode: 'parallel' as const,
      chunkSize: 0,
      workers,
    }));
}

// ---------------------------------------------------------------- the property

/** What a parse gave: its runs, the samples streamed, and the driver's counts. */
export interface ParseOutcome {
  runs: Run[];
  streamed: Map<string, IostatSample[]>;
  result: Pick<StreamResult, 'lines' | 'runs'>;
}

function chunksOf(bytes: Uint8Array, size: number): Buffer[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (size <= 0) return [buf];
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

/** Parses a case the way its mode says; throws what the parser throws. */
export async function parseCase(c: ParserCase): Promise<ParseOutcome> {
  const runs: Run[] = [];
  const streamed = new Map<string, IostatSample[]>();
  if (c.mode === 'parallel') return parseInParts(c);
  if (c.mode === 'text') {
    const parsed = await parseText(Buffer.from(c.bytes).toString('utf8'), 'fuzz.txt');
    return { runs: parsed.runs, streamed, result: { lines: parsed.lines, runs: parsed.runs.length } };
  }
  const result = await parseStream(chunksOf(c.bytes, c.chunkSize), {
    source: 'fuzz.txt',
    keepSamples: c.mode !== 'ingest',
    onRun: (run) => runs.push(run),
    ...(c.mode === 'ingest'
      ? {
          onIostatSample: (index: number, device: string, sample: IostatSample) => {
            const key = `${index}\u0000${device}`;
            const list = streamed.get(key);
            if (list) list.push(sample);
            else streamed.set(key, [sample]);
          },
        }
      : {}),
    ...(c.mode === 'continuation' ? { continuation: true } : {}),
    ...(c.maxBytes !== undefined ? { maxBytes: c.maxBytes } : {}),
  });
  return { runs, streamed, result };
}

class Violation extends Error {
  override readonly name = 'Violation';
}

let scratch: string | undefined;

/** A file of these bytes (parallel.ts reads files), in a folder removed when the process ends. */
function scratchFile(bytes: Uint8Array): string {
  if (scratch === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'benchdrop-fuzz-parts-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    scratch = join(dir, 'log.txt');
  }
  writeFileSync(scratch, bytes);
  return scratch;
}

/**
 * The case cut into parts and stitched (in this thread), and parsed in one pass
 * (summaries only, as parseFile does both): the one-pass outcome, once the two
 * are found to agree.
 */
async function parseInParts(c: ParserCase): Promise<ParseOutcome> {
  const path = scratchFile(c.bytes);
  const inParts = await parseFileInParallel(path, {
    source: 'fuzz.txt',
    workers: c.workers ?? 2,
    minBytes: 0,
    inThisThread: true,
  });
  const runs: Run[] = [];
  let result: StreamResult;
  try {
    result = await parseStream([Buffer.from(c.bytes)], {
      source: 'fuzz.txt',
      keepSamples: false,
      onRun: (run) => runs.push(run),
    });
  } catch (error) {
    if (inParts !== undefined && error instanceof ParseError)
      throw new Violation(`the parts parsed, one pass says: ${error.message}`);
    throw error;
  }
  if (inParts !== undefined) sameAsOnePass(inParts, runs, result.lines);
  return { runs, streamed: new Map(), result };
}

const close = (a: number, b: number) => Math.abs(a - b) <= Math.max(1e-9, Math.abs(b) * 1e-6);

/** What parallel.ts promises: the runs of one pass, summaries equal but for rounding. */
function sameAsOnePass(inParts: ParsedFile, runs: readonly Run[], lines: number): void {
  must(inParts.lines === lines, `in parts: ${inParts.lines} lines, one pass ${lines}`);
  must(inParts.runs.length === runs.length, `in parts: ${inParts.runs.length} runs, one pass ${runs.length}`);
  inParts.runs.forEach((part, i) => {
    const whole = runs[i]! as IostatRun;
    const run = part as IostatRun;
    const where = `run ${i}`;
    must(
      run.format === whole.format &&
        run.startLine === whole.startLine &&
        run.endLine === whole.endLine &&
        run.reports === whole.reports,
      `${where}: in parts ${run.format} lines ${run.startLine}-${run.endLine}, ${run.reports} reports; one pass ${whole.format} lines ${whole.startLine}-${whole.endLine}, ${whole.reports} reports`,
    );
    must(
      JSON.stringify(run.series.map((s) => [s.device, s.sampleCount])) ===
        JSON.stringify(whole.series.map((s) => [s.device, s.sampleCount])),
      `${where}: series in parts ${JSON.stringify(run.series.map((s) => [s.device, s.sampleCount]))}, one pass ${JSON.stringify(whole.series.map((s) => [s.device, s.sampleCount]))}`,
    );
    run.series.forEach((s, k) => {
      const w = whole.series[k]!;
      for (const metric of IOSTAT_METRICS) {
        const [a, b] = [s.summary[metric], w.summary[metric]];
        const same =
          a === undefined
            ? b === undefined
            : b !== undefined &&
              a.count === b.count &&
              close(a.mean, b.mean) &&
              close(a.min, b.min) &&
              close(a.max, b.max) &&
              close(a.stddev, b.stddev);
        must(
          same,
          `${where} ${JSON.stringify(s.device)} ${metric}: in parts ${JSON.stringify(a)}, one pass ${JSON.stringify(b)}`,
        );
      }
    });
  });
}

function must(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Violation(what);
}

const finite = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const IOSTAT_METRIC_NAMES: ReadonlySet<string> = new Set(IOSTAT_METRICS);
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:Z|[+-]\d{2}:\d{2})?$/;

function checkSummary(s: MetricSummary, sampleCount: number, where: string): void {
  must(
    Number.isInteger(s.count) && s.count >= 1 && s.count <= sampleCount,
    `${where}: count ${s.count} of ${sampleCount} samples`,
  );
  for (const k of ['mean', 'min', 'max', 'stddev'] as const) must(finite(s[k]), `${where}: ${k} is ${s[k]}`);
  must(s.min <= s.max && s.stddev >= 0, `${where}: min ${s.min}, max ${s.max}, stddev ${s.stddev}`);
  const slack = Math.max(1e-9, Math.abs(s.max) * 1e-9, Math.abs(s.min) * 1e-9);
  must(s.mean >= s.min - slack && s.mean <= s.max + slack, `${where}: mean ${s.mean} outside ${s.min}..${s.max}`);
}

/** A Linux run whose command said `-y`: its report 0 is an interval, not since boot. */
function omitsBootReport(run: IostatRun): boolean {
  return !printsBootReport(run.platform, run.meta.command);
}

/** `noBootReport`: the run began earlier in the file, or its command said there is no since-boot report. */
function checkSample(sample: IostatSample, reports: number, noBootReport: boolean, where: string): void {
  must(
    Number.isInteger(sample.report) && sample.report >= 0 && sample.report < reports,
    `${where}: report ${sample.report} of ${reports}`,
  );
  // A continuation part's first run may also be a new session (its own banner or command): since boot, then.
  must(
    sample.sinceBoot ? sample.report === 0 : sample.report > 0 || noBootReport,
    `${where}: sinceBoot ${sample.sinceBoot} in report ${sample.report}`,
  );
  must(Number.isInteger(sample.line) && sample.line >= 1, `${where}: line ${sample.line}`);
  for (const k in sample.values)
    must(
      finite(sample.values[k as IostatMetric]) && IOSTAT_METRIC_NAMES.has(k),
      `${where}: value ${k} = ${sample.values[k as IostatMetric]}`,
    );
  for (const k in sample.raw) must(finite(sample.raw[k]), `${where}: raw ${k} = ${sample.raw[k]}`);
  if (sample.time !== undefined) must(ISO_TIME.test(sample.time), `${where}: time ${JSON.stringify(sample.time)}`);
}

/** Everything a successful parse must hold; throws a Violation naming the first thing that does not. */
export function checkParse(outcome: ParseOutcome, c: Pick<ParserCase, 'mode'>): void {
  const { runs, result, streamed } = outcome;
  const lines = result.lines;
  must(runs.length >= 1, 'a parse without a ParseError must yield a run');
  must(result.runs === runs.length, `the driver counted ${result.runs} runs, ${runs.length} came out`);
  runs.forEach((run, i) => {
    const where = `run ${i}`;
    must(run.index === i, `${where}: index ${run.index}`);
    must(
      run.startLine >= 1 && run.startLine <= run.endLine && run.endLine <= lines,
      `${where}: lines ${run.startLine}-${run.endLine} of ${lines}`,
    );
    must(typeof run.name === 'string' && run.context.every((l) => typeof l === 'string'), `${where}: name or context`);
    must(run.warnings.length <= MAX_WARNINGS + 1, `${where}: ${run.warnings.length} warnings`);
    for (const w of run.warnings)
      must(
        Number.isInteger(w.line) &&
          w.line >= 0 &&
          w.line <= lines &&
          typeof w.message === 'string' &&
          w.message.length > 0,
        `${where}: warning ${JSON.stringify(w)}`,
      );
    if (run.format === 'diskperf') {
      must(run.rows.length >= 1, `${where}: a diskperf run without rows`);
      must(
        run.columns.every((c) => (DISKPERF_METRICS as readonly string[]).includes(c)),
        `${where}: columns ${run.columns.join(' ')}`,
      );
      const sizes = new Set<number>();
      for (const row of run.rows) {
        must(
          Number.isSafeInteger(row.req_size) && row.req_size > 0 && !sizes.has(row.req_size),
          `${where}: req_size ${row.req_size}`,
        );
        sizes.add(row.req_size);
        must(row.line >= run.startLine && row.line <= run.endLine, `${where}: row line ${row.line}`);
        for (const [k, v] of Object.entries(row.values))
          must(finite(v) && run.columns.includes(k as never), `${where}: ${row.req_size} ${k} = ${v}`);
      }
      const m = run.meta;
      if (m.requestSizes)
        must(
          finite(m.requestSizes.min) && finite(m.requestSizes.max),
          `${where}: request sizes ${JSON.stringify(m.requestSizes)}`,
        );
      if (m.fileSizeBytes !== undefined) must(finite(m.fileSizeBytes), `${where}: file size ${m.fileSizeBytes}`);
      for (const [k, v] of Object.entries(m.parameters ?? {}))
        must(typeof v === 'string' || finite(v), `${where}: parameter ${k} = ${v}`);
      if (m.startedAt !== undefined) must(ISO_TIME.test(m.startedAt), `${where}: startedAt ${m.startedAt}`);
      return;
    }
    if (run.format === 'fio') {
      must(run.rows.length >= 1, `${where}: a fio run without rows`);
      return;
    }
    const continuation = c.mode === 'continuation';
    must(Number.isInteger(run.reports) && run.reports >= 1, `${where}: ${run.reports} reports`);
    must(run.series.length >= 1, `${where}: no series`);
    for (const column of run.columns)
      must(
        finite(column.factor) &&
          column.factor > 0 &&
          (column.metric === undefined || (IOSTAT_METRICS as readonly string[]).includes(column.metric)),
        `${where}: column ${JSON.stringify(column)}`,
      );
    if (run.meta.cpus !== undefined) must(finite(run.meta.cpus), `${where}: cpus ${run.meta.cpus}`);
    const devices = new Set<string>();
    for (const s of run.series) {
      const at = `${where} ${JSON.stringify(s.device)}`;
      must(typeof s.device === 'string' && s.device.length > 0 && !devices.has(s.device), `${at}: device name`);
      devices.add(s.device);
      must(
        Number.isInteger(s.sampleCount) && s.sampleCount >= 1 && s.sampleCount <= run.reports,
        `${at}: ${s.sampleCount} samples in ${run.reports} reports`,
      );
      for (const [metric, summary] of Object.entries(s.summary)) {
        must((IOSTAT_METRICS as readonly string[]).includes(metric), `${at}: summary of ${metric}`);
        checkSummary(summary, s.sampleCount, `${at} ${metric}`);
      }
      // Summaries only: the samples were neither kept nor streamed.
      if (c.mode === 'parallel') continue;
      const samples = c.mode === 'ingest' ? (streamed.get(`${run.index}\u0000${s.device}`) ?? []) : s.samples;
      must(
        samples !== undefined && samples.length === s.sampleCount,
        `${at}: ${samples?.length} samples given, sampleCount ${s.sampleCount}`,
      );
      let previous = -1;
      for (const sample of samples) {
        checkSample(sample, run.reports, continuation || omitsBootReport(run), at);
        must(sample.report > previous, `${at}: report ${sample.report} after ${previous}`);
        previous = sample.report;
      }
      // The summaries are those of the samples' values (without the since-boot report when there are others).
      const counts: Partial<Record<IostatMetric, number>> = {};
      const sums: Partial<Record<IostatMetric, number>> = {};
      for (const x of samples) {
        if (run.reports > 1 && x.sinceBoot) continue;
        for (const k in x.values) {
          const metric = k as IostatMetric;
          counts[metric] = (counts[metric] ?? 0) + 1;
          sums[metric] = (sums[metric] ?? 0) + x.values[metric]!;
        }
      }
      for (const metric of IOSTAT_METRICS) {
        const summary = s.summary[metric];
        const count = counts[metric] ?? 0;
        must(
          (summary?.count ?? 0) === count,
          `${at} ${metric}: summary of ${summary?.count ?? 0} values, samples hold ${count}`,
        );
        if (summary === undefined) continue;
        const mean = sums[metric]! / count;
        must(
          Math.abs(mean - summary.mean) <= Math.max(1e-6, Math.abs(mean) * 1e-6),
          `${at} ${metric}: summary mean ${summary.mean}, samples' mean ${mean}`,
        );
      }
    }
  });
}

/**
 * No case takes longer: inputs are at most some 100 KB, which a parse reads in
 * milliseconds, so a case this slow is a parser gone quadratic (or a loop).
 */
export const CASE_TIME_LIMIT_MS = 2000;

/** The property for one case: a ParseError (with a line and a message) or a parse that holds up, in time. */
export async function parserHoldsUp(c: ParserCase): Promise<void> {
  const started = performance.now();
  let outcome: ParseOutcome | undefined;
  try {
    outcome = await parseCase(c);
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    must(
      Number.isInteger(error.line) && error.line >= 0 && error.message.length > 0,
      `ParseError without a line or message: ${error.message}`,
    );
  }
  const ms = performance.now() - started;
  must(
    ms <= CASE_TIME_LIMIT_MS,
    `the case took ${ms.toFixed(0)} ms (at most ${CASE_TIME_LIMIT_MS}) for ${c.bytes.length} bytes`,
  );
  if (outcome !== undefined) checkParse(outcome, c);
}

/** fast-check's property for a target, with the case described in any counterexample. */
export function parserProperty(t: ParserTarget) {
  return fc.asyncProperty(t.cases(), async (c) => {
    try {
      await parserHoldsUp(c);
    } catch (error) {
      const e = error as Error;
      throw new Error(
        `${c.how}; mode ${c.mode}, chunks of ${c.chunkSize || 'all'}${c.maxBytes !== undefined ? `, maxBytes ${c.maxBytes}` : ''}: ${e.name}: ${e.message}\n${e.stack ?? ''}`,
        { cause: error },
      );
    }
  });
}

/**
 * Parser targets (by name) fuzzed in processes of their own, `concurrency` at a
 * time (test/support/fuzz/parser-process.ts), each with its count of `run`: the
 * findings in the order of `names`.
 */
export async function fuzzParsersInProcesses(
  names: readonly string[],
  run: FuzzRun,
  concurrency: number,
  timeoutMs: number,
): Promise<FuzzFinding[]> {
  const targets = parserTargets().filter((t) => names.includes(t.name));
  const findings: FuzzFinding[] = [];
  let next = 0;
  const worker = async () => {
    while (next < targets.length) {
      const i = next++;
      const t = targets[i]!;
      const ran = await runProcess(
        process.execPath,
        ['--import', 'tsx', PARSER_PROCESS, t.name, String(fuzzCases(run, t.budget))],
        { timeoutMs },
      );
      const line = ran.stdout.trim().split('\n').at(-1) ?? '';
      if (ran.code !== 0 || !line.startsWith('{'))
        throw new Error(
          `fuzzing ${t.name} in its own process failed (a hang ends at ${timeoutMs / 1000} s)\n${explain(ran)}`,
        );
      findings[i] = JSON.parse(line) as FuzzFinding;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return findings;
}

const PARSER_PROCESS = fileURLToPath(new URL('./parser-process.ts', import.meta.url));
