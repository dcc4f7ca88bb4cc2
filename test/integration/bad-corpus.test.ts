/**
 * The bad input corpus (test/fixtures/bad/expected.json) through the real ingest
 * handler, against dynalite and s3rver: every committed case and the quick
 * generated ones, seven to an SQS batch with three good logs, each batch
 * delivered twice. Per case: the upload record ends as the table says (status,
 * line, message words, runs, warnings), no message goes back to the queue for a
 * retry, a redelivery writes nothing, a failed upload leaves nothing but its
 * record, and every item fits DynamoDB's key and item limits. A failed record's
 * message is short (MAX_MESSAGE_LENGTH), never holds the key, and reads `line N:
 * <problem>; <what to do>` when about a line; its `details` holds the whole
 * text (for a parse error the parser's: key, line, problem, what was expected,
 * the formats benchdrop reads). The big generated cases run in
 * `npm run test:stress` (test/stress/bad-input.stress.ts).
 */
import '../../harness/quiet.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MESSAGE_LENGTH } from '../../shared/ingest/deps.ts';
import { SUPPORTED_FORMATS } from '../../shared/parsers/errors.ts';
import { printable } from '../../shared/printable.ts';
import {
  BAD,
  BAD_CORPUS,
  committedBadFiles,
  runCorpus,
  type CorpusRun,
  type Delivered,
} from '../support/bad-corpus.ts';
import { startEmulators, type Emulators } from '../../harness/emulators.ts';
import { getUpload } from '../../harness/table.ts';

const NOW = '2024-06-01T08:00:00.000Z';
const QUICK = BAD_CORPUS.filter((c) => !c.stress);
const FAILED = QUICK.filter((c) => c.expect.status === 'failed');
/** Failures of the upload's metadata (tags, device label): no parser text, the details are the problem itself. */
const METADATA_CASES = [
  'control-chars-in-tags',
  'rfc2047-tags-non-ascii',
  'tag-too-long',
  'too-many-tags',
  'label-too-long',
];
const READS = `benchdrop reads: ${SUPPORTED_FORMATS.join('; ')}.`;

/** The whole text of a ParseError, as the record's details keep it: `<key>[:<line>]: <problem>; expected <what>. benchdrop reads: ...`. */
const parserText = (key: string, line: number, problemAndExpected: string) =>
  `${printable(key)}${line > 0 ? `:${line}` : ''}: ${problemAndExpected}. ${READS}`;

const PROSE =
  'no diskperf, iostat or fio data in the first 8 lines; expected a diskperf result table, an iostat -x report or a fio output';
const IOSTAT_RAGGED = (fields: number) =>
  `no device row fits the iostat header: ragged row skipped: ${fields} fields where the header at line 3 has 10 columns and a device name (r/s w/s kr/s kw/s wait actv wsvc_t asvc_t %w %b)`;
const IOSTAT_EXPECTED = 'expected rows with a number for every column of the header and the device name';
const DISKPERF_EXPECTED =
  'expected rows of numbers under the "# req_size ..." header: the request size in bytes, then one MB/s value per column';
const LONG_LINE =
  'a line longer than 64 KiB (65536 bytes) and still going; expected a text log, whose lines are shorter: check that this is the log and that its line ends survived (LF, CRLF or CR)';

/**
 * The cases whose old messages quoted the key and the formats benchdrop reads: the exact
 * short message now (cut with `…` where both parts do not fit), and the parser's whole
 * text, which the record's details keep.
 */
const REWORDED: Record<string, { line: number; message: string; details: string }> = {
  'prose-only': { line: 0, message: PROSE, details: PROSE },
  'nul-byte-on-line-5': {
    line: 5,
    message: 'line 5: binary content (a NUL byte); expected a text log (plain or gzip-compressed)',
    details: 'binary content (a NUL byte); expected a text log (plain or gzip-compressed)',
  },
  'iostat-column-missing': {
    line: 4,
    message: `line 4: no device row fits the iostat header: ragged row skipped: 10 fields where the header at line 3 has 10…; ${IOSTAT_EXPECTED}`,
    details: `${IOSTAT_RAGGED(10)}; ${IOSTAT_EXPECTED}`,
  },
  'iostat-extra-columns': {
    line: 4,
    message: `line 4: no device row fits the iostat header: ragged row skipped: 12 fields where the header at line 3 has 10…; ${IOSTAT_EXPECTED}`,
    details: `${IOSTAT_RAGGED(12)}; ${IOSTAT_EXPECTED}`,
  },
  'diskperf-column-missing': {
    line: 14,
    message:
      'line 14: diskperf result table has no valid row (line 17: row has 6 values, the header has 7 colum…; expected rows of numbers under the "# req_size ..." header: the request size in bytes, t…',
    details: `diskperf result table has no valid row (line 17: row has 6 values, the header has 7 columns); ${DISKPERF_EXPECTED}`,
  },
  'long-line-after-good-lines': { line: 42, message: `line 42: ${LONG_LINE}`, details: LONG_LINE },
  'control-chars-in-key': { line: 0, message: PROSE, details: PROSE },
};

/** The upload record of every delivered case, read once the corpus ran. */
const records = new Map<string, { delivered: Delivered; record: Record<string, unknown> | undefined }>();

let env: Emulators;
let run: CorpusRun;

beforeAll(async () => {
  env = await startEmulators({ maxUploadBytes: 10_000_000 });
  run = await runCorpus({ env, cases: QUICK, maxUploadBytes: 10_000_000, now: NOW });
  for (const d of run.delivered)
    records.set(d.case.name, { delivered: d, record: await getUpload(env, env.bucket, d.key, d.version) });
}, 180_000);

afterAll(async () => {
  await env?.stop();
});

describe('the corpus table', () => {
  it('holds at least 40 cases with distinct names; every committed file is a case and has a README row', () => {
    expect(BAD_CORPUS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(BAD_CORPUS.map((c) => c.name)).size).toBe(BAD_CORPUS.length);
    const readme = readFileSync(join(BAD, 'README.md'), 'utf8');
    const used = new Set(
      BAD_CORPUS.map((c) => c.file)
        .filter((f) => f?.startsWith('bad/'))
        .map((f) => f!.slice(4)),
    );
    for (const file of committedBadFiles()) {
      expect(used.has(file), `${file} is in no case`).toBe(true);
      expect(readme.includes(`| \`${file}\` |`), `${file} has no README row`).toBe(true);
    }
    for (const c of BAD_CORPUS.filter((x) => x.generate !== undefined))
      expect(readme.includes(`\`${c.generate}\``), `${c.generate} is not described`).toBe(true);
  });
});

describe('every case through the ingest pipeline', () => {
  it.each(QUICK.map((c) => [c.name, c] as const))('%s', (name) => {
    expect(run.mismatches.get(name)).toEqual([]);
  });

  it('the good logs delivered in the same batches are ready with all their runs', () => {
    expect(run.good.length).toBeGreaterThanOrEqual(Math.ceil(QUICK.length / 7) * 3);
    expect(run.goodMismatches).toEqual([]);
  });

  it('no case is lost: every upload ends ready or failed', () => {
    expect(run.lost).toEqual([]);
  });
});

describe('a failed upload record: a short message without the key, the whole text in details', () => {
  it('covers the reworded cases, every one of them failed', () => {
    for (const name of Object.keys(REWORDED))
      expect(
        FAILED.map((c) => c.name),
        name,
      ).toContain(name);
    for (const name of METADATA_CASES)
      expect(
        FAILED.map((c) => c.name),
        name,
      ).toContain(name);
  });

  it.each(Object.entries(REWORDED))('%s: the exact message, line and details', (name, want) => {
    const { delivered, record } = records.get(name)!;
    expect(record, name).toMatchObject({
      status: 'failed',
      line: want.line,
      message: want.message,
      details: parserText(delivered.key, want.line, want.details),
    });
    const message = record!['message'] as string;
    expect(message).not.toContain(delivered.key);
    expect(message).not.toContain(printable(delivered.key));
    expect(Array.from(message).length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
    // What the message said before it was shortened is all still there, the key and the formats included.
    expect(record!['details']).toContain(printable(delivered.key));
    expect(record!['details']).toContain('benchdrop reads: IRIX diskperf');
  });

  it('control-chars-in-key: the key is escaped in details, and nowhere in the message', () => {
    const { delivered, record } = records.get('control-chars-in-key')!;
    expect(record!['details']).toMatch(
      /^control-chars-in-key\/\\x1b\[31mred\\x07 log\\r\.txt: no diskperf, iostat or fio data/,
    );
    expect(record!['message']).not.toMatch(/control-chars-in-key|red|\\x1b|\\x07|\\r/);
    expect(delivered.key).toBe('control-chars-in-key/\u001b[31mred\u0007 log\r.txt');
  });

  it.each(FAILED.map((c) => [c.name] as const))(
    '%s: within MAX_MESSAGE_LENGTH, no key, `line N: ` only when about a line, every part in details',
    (name) => {
      const { delivered, record } = records.get(name)!;
      const message = String(record?.['message'] ?? '');
      const details = record?.['details'];
      const line = record?.['line'] as number;
      expect(record?.['status']).toBe('failed');
      expect(message.length).toBeGreaterThan(0);
      expect(Array.from(message).length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
      expect(message).not.toContain(delivered.key);
      expect(message).not.toContain(printable(delivered.key));
      expect(message).not.toMatch(/\(line 0\)|^line 0:/);
      if (line > 0) expect(message.startsWith(`line ${line}: `), message).toBe(true);
      else expect(message).not.toMatch(/^line \d+:/);
      expect(typeof details).toBe('string');
      // Each part of the message, up to where it was cut, is in the whole text.
      for (const part of message.replace(/^line \d+: /, '').split('; '))
        expect(details, part).toContain(part.replace(/…$/, ''));
      if (METADATA_CASES.includes(name)) {
        expect(details).not.toContain('benchdrop reads');
      } else {
        // A parse error: the parser's text, which names the key (escaped) and the line.
        expect(
          (details as string).startsWith(`${printable(delivered.key)}${line > 0 ? `:${line}` : ''}: `),
          String(details),
        ).toBe(true);
        expect((details as string).endsWith(` ${READS}`), String(details)).toBe(true);
      }
    },
  );
});
