/**
 * Fuzzing every parser entry (shared/parsers/index.ts) per format: diskperf, and
 * iostat from Solaris, Linux (text), FreeBSD and Linux sysstat JSON. Inputs are
 * real logs of the format (test/fixtures) damaged as logs get damaged (lines
 * dropped, repeated, swapped, cut, split or joined; numbers replaced with
 * extremes; indentation lost; bytes flipped; the file truncated, gzipped, or
 * re-encoded), the format's header followed by garbage (random bytes, any
 * string, tokens of the format's own vocabulary), and pure garbage. Each input
 * goes through parseText or parseStream the way a caller uses it (all samples
 * kept; summaries only with samples streamed, as ingestion does, sometimes under
 * a size limit; a continuation part), in chunks of any size.
 *
 * The property: a ParseError with a line and a message, or runs that hold up
 * (checkParse): finite numbers everywhere, counts that add up, lines inside the
 * file. Anything else thrown is a crash.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { DISKPERF_METRICS, IOSTAT_METRICS } from '../../../shared/metrics.ts';
import type { IostatMetric } from '../../../shared/metrics.ts';
import type { IostatSample, MetricSummary, Run } from '../../../shared/model.ts';
import { ParseError, parseStream, parseText, type StreamResult } from '../../../shared/parsers/index.ts';
import { MAX_WARNINGS } from '../../../shared/parsers/types.ts';
import { explain, run } from '../../e2e/processes.ts';
import { fixtureLogs } from '../fixtures.ts';
import type { FuzzFinding } from './cases.ts';

// ---------------------------------------------------------------- targets

export interface ParserTarget {
  /** `diskperf`, `iostat solaris`, ... */
  name: string;
  /** Real logs of the format: what mutations start from, as lines. */
  seeds: string[][];
  /** Whitespace-separated tokens of those logs: the format's own vocabulary. */
  vocabulary: string[];
}

function target(name: string, files: string[]): ParserTarget {
  const texts = files.map((f) => readFileSync(f, 'utf8'));
  const vocabulary = [...new Set(texts.flatMap((s) => s.split(/\s+/)).filter((t) => t.length > 0 && t.length < 40))].sort();
  return { name, seeds: texts.map((s) => s.split(/\r\n|\r|\n/)), vocabulary };
}

/** One target per format the parsers read, seeded with every fixture log of it. */
export function parserTargets(): ParserTarget[] {
  const logs = fixtureLogs();
  const of = (platform: string, json?: boolean) =>
    logs.filter((l) => l.platform === platform && (json === undefined || l.name.endsWith('.json') === json)).map((l) => l.log);
  return [
    target('diskperf', of('irix')),
    target('iostat solaris', of('solaris')),
    target('iostat linux', of('linux', false)),
    target('iostat freebsd', of('freebsd')),
    target('iostat linux-json', of('linux', true)),
  ];
}

// ---------------------------------------------------------------- inputs

/** Numbers a damaged or hostile log may hold where a value belongs. */
export const EXTREME_NUMBERS = [
  '0', '-0', '-1', '-12.5', '1e308', '-1e308', '1e309', '1.7976931348623157e308', '5e-324', '1e-400', '2.5e+300',
  '99999999999999999999999999', '9007199254740993', '4294967296', `1${'0'.repeat(400)}`, '0.000000000000000000001',
  'NaN', 'nan', 'Infinity', '-Infinity', 'inf', '-', '--', '', '1,5', '1.2.3', '0x10', '1e', '.', ',', '+', '١٢٣', '１２',
  '1.2k', '3.4M', '9E', '99999P', '45.0%', '-3%', '12345.6123456.7', '1.0e+06', '00000001', '1_000',
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
  | ['case', number, boolean];

type ByteEdit = ['flip', number, number] | ['set', number, number] | ['delete', number] | ['truncate', number];

type Wrapping = 'plain' | 'gzip' | 'gzip-cut' | 'utf8-bom' | 'utf16le-bom' | 'latin1';

export interface ParserCase {
  /** What the bytes are, for a counterexample a person can read. */
  how: string;
  bytes: Uint8Array;
  mode: 'text' | 'samples' | 'ingest' | 'continuation';
  /** 0: one chunk. */
  chunkSize: number;
  /** A size limit (ingest mode only). */
  maxBytes?: number;
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
        how === 0 ? line.trimStart()
        : how === 1 ? line.trim().replace(/[ \t]+/g, ' ')
        : how === 2 ? line.replace(/ {2,}/g, '\t')
        : how === 3 ? `> ${line}`
        : line.replace(/ /g, '\u00a0');
      return;
    }
    case 'case': {
      const i = at(edit[1]);
      lines[i] = edit[2] ? lines[i]!.toUpperCase() : lines[i]!.toLowerCase();
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

function lineEditArb(t: ParserTarget, insertable: fc.Arbitrary<string>): fc.Arbitrary<LineEdit> {
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
  ) as fc.Arbitrary<LineEdit>;
}

const byteEditArb: fc.Arbitrary<ByteEdit> = fc.oneof(
  fc.tuple(fc.constant('flip' as const), nat(), nat(7)),
  fc.tuple(fc.constant('set' as const), nat(), fc.constantFrom(0, 0x0a, 0x0d, 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xfe, 0xff)),
  fc.tuple(fc.constant('delete' as const), nat()),
  fc.tuple(fc.constant('truncate' as const), nat()),
) as fc.Arbitrary<ByteEdit>;

/** A line of the format's own tokens (and extremes, and some noise) in any order. */
function tokenLineArb(t: ParserTarget): fc.Arbitrary<string> {
  const token = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...t.vocabulary) },
    { weight: 2, arbitrary: fc.constantFrom(...EXTREME_NUMBERS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  );
  return fc.array(fc.tuple(token, fc.constantFrom(' ', '  ', '    ', '\t', ': ', ', ')), { maxLength: 24 }).map((parts) => parts.map(([a, b]) => a + b).join(''));
}

// Mostly whole or in a few pieces; byte-sized pieces now and then (each piece is an async step: they cost).
const chunkSizeArb = fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 16 }) }, { weight: 4, arbitrary: fc.integer({ min: 64, max: 4096 }) });

const modeArb = fc.constantFrom<ParserCase['mode']>('text', 'samples', 'ingest', 'ingest', 'continuation');

/** Inputs for one format: damaged real logs, its header over garbage, and garbage. */
export function parserCaseArb(t: ParserTarget): fc.Arbitrary<ParserCase> {
  const line = tokenLineArb(t);
  const insertable = fc.oneof({ weight: 4, arbitrary: line }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) });
  const seed = fc.nat({ max: t.seeds.length - 1 });

  const damaged = fc
    .record({
      seed,
      edits: fc.array(lineEditArb(t, insertable), { maxLength: 12 }),
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
      return { how: `the first ${keep} lines of fixture ${s} of ${t.name}, then garbage`, bytes: Buffer.concat([Buffer.from(`${head}\n`), garbage]) };
    });

  const garbage = fc.oneof(
    fc.array(line, { maxLength: 40 }).map((ls) => ({ how: `${t.name} tokens`, bytes: Buffer.from(ls.join('\n')) })),
    fc.uint8Array({ maxLength: 2000 }).map((b) => ({ how: 'random bytes', bytes: Buffer.from(b) })),
  );

  return fc
    .record({
      input: fc.oneof({ weight: 6, arbitrary: damaged }, { weight: 2, arbitrary: headerOverGarbage }, { weight: 1, arbitrary: garbage }),
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

function must(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Violation(what);
}

const finite = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const IOSTAT_METRIC_NAMES: ReadonlySet<string> = new Set(IOSTAT_METRICS);
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:Z|[+-]\d{2}:\d{2})?$/;

function checkSummary(s: MetricSummary, sampleCount: number, where: string): void {
  must(Number.isInteger(s.count) && s.count >= 1 && s.count <= sampleCount, `${where}: count ${s.count} of ${sampleCount} samples`);
  for (const k of ['mean', 'min', 'max', 'stddev'] as const) must(finite(s[k]), `${where}: ${k} is ${s[k]}`);
  must(s.min <= s.max && s.stddev >= 0, `${where}: min ${s.min}, max ${s.max}, stddev ${s.stddev}`);
  const slack = Math.max(1e-9, Math.abs(s.max) * 1e-9, Math.abs(s.min) * 1e-9);
  must(s.mean >= s.min - slack && s.mean <= s.max + slack, `${where}: mean ${s.mean} outside ${s.min}..${s.max}`);
}

function checkSample(sample: IostatSample, reports: number, continuation: boolean, where: string): void {
  must(Number.isInteger(sample.report) && sample.report >= 0 && sample.report < reports, `${where}: report ${sample.report} of ${reports}`);
  // A continuation part's first run may also be a new session (its own banner or command): since boot, then.
  must(sample.sinceBoot ? sample.report === 0 : sample.report > 0 || continuation, `${where}: sinceBoot ${sample.sinceBoot} in report ${sample.report}`);
  must(Number.isInteger(sample.line) && sample.line >= 1, `${where}: line ${sample.line}`);
  for (const k in sample.values) must(finite(sample.values[k as IostatMetric]) && IOSTAT_METRIC_NAMES.has(k), `${where}: value ${k} = ${sample.values[k as IostatMetric]}`);
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
    must(run.startLine >= 1 && run.startLine <= run.endLine && run.endLine <= lines, `${where}: lines ${run.startLine}-${run.endLine} of ${lines}`);
    must(typeof run.name === 'string' && run.context.every((l) => typeof l === 'string'), `${where}: name or context`);
    must(run.warnings.length <= MAX_WARNINGS + 1, `${where}: ${run.warnings.length} warnings`);
    for (const w of run.warnings) must(Number.isInteger(w.line) && w.line >= 0 && w.line <= lines && typeof w.message === 'string' && w.message.length > 0, `${where}: warning ${JSON.stringify(w)}`);
    if (run.format === 'diskperf') {
      must(run.rows.length >= 1, `${where}: a diskperf run without rows`);
      must(run.columns.every((c) => (DISKPERF_METRICS as readonly string[]).includes(c)), `${where}: columns ${run.columns.join(' ')}`);
      const sizes = new Set<number>();
      for (const row of run.rows) {
        must(Number.isSafeInteger(row.req_size) && row.req_size > 0 && !sizes.has(row.req_size), `${where}: req_size ${row.req_size}`);
        sizes.add(row.req_size);
        must(row.line >= run.startLine && row.line <= run.endLine, `${where}: row line ${row.line}`);
        for (const [k, v] of Object.entries(row.values)) must(finite(v) && run.columns.includes(k as never), `${where}: ${row.req_size} ${k} = ${v}`);
      }
      const m = run.meta;
      if (m.requestSizes) must(finite(m.requestSizes.min) && finite(m.requestSizes.max), `${where}: request sizes ${JSON.stringify(m.requestSizes)}`);
      if (m.fileSizeBytes !== undefined) must(finite(m.fileSizeBytes), `${where}: file size ${m.fileSizeBytes}`);
      for (const [k, v] of Object.entries(m.parameters ?? {})) must(typeof v === 'string' || finite(v), `${where}: parameter ${k} = ${v}`);
      if (m.startedAt !== undefined) must(ISO_TIME.test(m.startedAt), `${where}: startedAt ${m.startedAt}`);
      return;
    }
    const continuation = c.mode === 'continuation';
    must(Number.isInteger(run.reports) && run.reports >= 1, `${where}: ${run.reports} reports`);
    must(run.series.length >= 1, `${where}: no series`);
    for (const column of run.columns) must(finite(column.factor) && column.factor > 0 && (column.metric === undefined || (IOSTAT_METRICS as readonly string[]).includes(column.metric)), `${where}: column ${JSON.stringify(column)}`);
    if (run.meta.cpus !== undefined) must(finite(run.meta.cpus), `${where}: cpus ${run.meta.cpus}`);
    const devices = new Set<string>();
    for (const s of run.series) {
      const at = `${where} ${JSON.stringify(s.device)}`;
      must(typeof s.device === 'string' && s.device.length > 0 && !devices.has(s.device), `${at}: device name`);
      devices.add(s.device);
      must(Number.isInteger(s.sampleCount) && s.sampleCount >= 1 && s.sampleCount <= run.reports, `${at}: ${s.sampleCount} samples in ${run.reports} reports`);
      for (const [metric, summary] of Object.entries(s.summary)) {
        must((IOSTAT_METRICS as readonly string[]).includes(metric), `${at}: summary of ${metric}`);
        checkSummary(summary, s.sampleCount, `${at} ${metric}`);
      }
      const samples = c.mode === 'ingest' ? (streamed.get(`${run.index}\u0000${s.device}`) ?? []) : s.samples;
      must(samples !== undefined && samples.length === s.sampleCount, `${at}: ${samples?.length} samples given, sampleCount ${s.sampleCount}`);
      let previous = -1;
      for (const sample of samples) {
        checkSample(sample, run.reports, continuation, at);
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
        must((summary?.count ?? 0) === count, `${at} ${metric}: summary of ${summary?.count ?? 0} values, samples hold ${count}`);
        if (summary === undefined) continue;
        const mean = sums[metric]! / count;
        must(Math.abs(mean - summary.mean) <= Math.max(1e-6, Math.abs(mean) * 1e-6), `${at} ${metric}: summary mean ${summary.mean}, samples' mean ${mean}`);
      }
    }
  });
}

/** The property for one case: a ParseError (with a line and a message) or a parse that holds up. */
export async function parserHoldsUp(c: ParserCase): Promise<void> {
  let outcome: ParseOutcome;
  try {
    outcome = await parseCase(c);
  } catch (error) {
    if (error instanceof ParseError) {
      must(Number.isInteger(error.line) && error.line >= 0 && error.message.length > 0, `ParseError without a line or message: ${error.message}`);
      return;
    }
    throw error;
  }
  checkParse(outcome, c);
}

/** fast-check's property for a target, with the case described in any counterexample. */
export function parserProperty(t: ParserTarget) {
  return fc.asyncProperty(parserCaseArb(t), async (c) => {
    try {
      await parserHoldsUp(c);
    } catch (error) {
      const e = error as Error;
      throw new Error(`${c.how}; mode ${c.mode}, chunks of ${c.chunkSize || 'all'}${c.maxBytes !== undefined ? `, maxBytes ${c.maxBytes}` : ''}: ${e.name}: ${e.message}\n${e.stack ?? ''}`);
    }
  });
}

/**
 * Every parser target fuzzed in processes of their own, `concurrency` at a time
 * (test/support/fuzz/parser-process.ts): the findings in target order.
 */
export async function fuzzParsersInProcesses(cases: number, concurrency: number, timeoutMs: number): Promise<FuzzFinding[]> {
  const targets = parserTargets().map((t) => t.name);
  const findings: FuzzFinding[] = [];
  let next = 0;
  const worker = async () => {
    while (next < targets.length) {
      const i = next++;
      const ran = await run(process.execPath, ['--import', 'tsx', PARSER_PROCESS, targets[i]!, String(cases)], { timeoutMs });
      const line = ran.stdout.trim().split('\n').at(-1) ?? '';
      if (ran.code !== 0 || !line.startsWith('{')) throw new Error(`fuzzing ${targets[i]} in its own process failed\n${explain(ran)}`);
      findings[i] = JSON.parse(line) as FuzzFinding;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return findings;
}

const PARSER_PROCESS = fileURLToPath(new URL('./parser-process.ts', import.meta.url));
