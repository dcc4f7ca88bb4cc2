/**
 * The parse driver (shared/parsers/index.ts and lines.ts) on inputs the fixtures do
 * not cover: gzip, size limits, line ends, encodings, binary and empty input, long
 * lines, arbitrary chunk boundaries, e-mail quoting and files with no data at all.
 * Most cases reuse the real x4100 sample and check that a transformed copy of it
 * parses exactly like the original.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IostatRun, Run } from '../../../shared/model.ts';
import {
  ParseError,
  SUPPORTED_FORMATS,
  fileChunks,
  parseFile,
  parseStream,
  parseText,
  READ_CHUNK_BYTES,
  type StreamOptions,
} from '../../../shared/parsers/index.ts';
import { MAX_LINE_LENGTH } from '../../../shared/parsers/lines.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures');
const BAD = join(FIXTURES, 'bad');
const SAMPLE_PATH = join(FIXTURES, 'solaris/solaris-10-x4100-sas-maxcontig.iostat.txt');
const SAMPLE = readFileSync(SAMPLE_PATH);
const SAMPLE_TEXT = SAMPLE.toString('utf8');
/** The sample's line count: it ends with a line terminator, so one per '\n'. */
const SAMPLE_LINES = SAMPLE_TEXT.split('\n').length - (SAMPLE_TEXT.endsWith('\n') ? 1 : 0);

interface Parsed {
  runs: Run[];
  format: string;
  lines: number;
  runCount: number;
  bytes: number;
}

type Chunk = Buffer | string;

async function parseChunks(
  chunks: Iterable<Chunk> | AsyncIterable<Chunk>,
  options: Partial<StreamOptions> = {},
): Promise<Parsed> {
  const runs: Run[] = [];
  const result = await parseStream(chunks, { source: 'test.txt', ...options, onRun: (run) => runs.push(run) });
  return { runs, format: result.format, lines: result.lines, runCount: result.runs, bytes: result.bytes };
}

/** The ParseError the input produces; fails the test if it parses or throws anything else. */
async function parseError(
  chunks: Iterable<Chunk> | AsyncIterable<Chunk>,
  options: Partial<StreamOptions> = {},
): Promise<ParseError> {
  try {
    await parseChunks(chunks, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ParseError);
    return error as ParseError;
  }
  throw new Error('expected a ParseError, but the input parsed');
}

async function fileError(path: string, options: Partial<StreamOptions> = {}): Promise<ParseError> {
  try {
    await parseFile(path, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ParseError);
    return error as ParseError;
  }
  throw new Error(`expected a ParseError from ${path}`);
}

function chunked(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

function splitAt(bytes: Buffer, offsets: readonly number[]): Buffer[] {
  const cuts = [...new Set(offsets)].filter((o) => o > 0 && o < bytes.length).sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of cuts) {
    out.push(bytes.subarray(from, cut));
    from = cut;
  }
  out.push(bytes.subarray(from));
  return out;
}

const c0t0d0 = (run: Run) => (run as IostatRun).series.find((s) => s.device === 'c0t0d0')!;

const baseline = await parseChunks([SAMPLE]);

describe('baseline: the x4100 sample read as plain UTF-8', () => {
  it('has the four runs the rest of this file compares against', () => {
    expect(baseline.format).toBe('iostat');
    expect(baseline.runs).toHaveLength(4);
    expect(baseline.runCount).toBe(4);
    expect(baseline.lines).toBe(SAMPLE_LINES);
    expect(baseline.bytes).toBe(SAMPLE.length);
    expect(baseline.runs.map((r) => c0t0d0(r).samples![0]!.raw['w/s'])).toEqual([84.9, 430.7, 838.1, 6028.7]);
  });
});

describe('gzip', () => {
  const gz = gzipSync(SAMPLE);

  it('parses a gzip file exactly like the plain file', async () => {
    const parsed = await parseChunks([gz]);
    expect(parsed.runs).toEqual(baseline.runs);
    expect(parsed.lines).toBe(baseline.lines);
    // maxBytes and `bytes` count decompressed bytes.
    expect(parsed.bytes).toBe(SAMPLE.length);
  });

  it('parses a gzip file read from disk in small chunks', async () => {
    expect((await parseChunks(chunked(gz, 16))).runs).toEqual(baseline.runs);
    expect((await parseChunks(chunked(gz, 4096))).runs).toEqual(baseline.runs);
  });

  it('reads every member of a multi-member gzip file (gzip a; gzip b; cat a.gz b.gz)', async () => {
    const cut = SAMPLE_TEXT.indexOf('tunefs -a 8');
    const twoMembers = Buffer.concat([gzipSync(SAMPLE.subarray(0, cut)), gzipSync(SAMPLE.subarray(cut))]);
    expect((await parseChunks([twoMembers])).runs).toEqual(baseline.runs);
  });

  it('refuses a truncated gzip file with a ParseError that names gzip', async () => {
    for (const length of [gz.length - 4, gz.length - 8, Math.floor(gz.length / 2), 12]) {
      const error = await parseError([gz.subarray(0, length)]);
      expect(error.message).toMatch(/gzip/i);
      expect(error.line).toBe(0);
    }
  });

  it('refuses the truncated .gz fixture read from disk', async () => {
    const error = await fileError(join(BAD, 'truncated-gzip.iostat.txt.gz'));
    expect(error.problem).toMatch(/damaged gzip/);
    expect(error.expected).toMatch(/complete gzip/);
  });

  it('refuses a gzip file with a corrupted body', async () => {
    const broken = Buffer.from(gz);
    for (let i = 20; i < broken.length - 8; i += 3) broken[i] ^= 0x5a;
    const error = await parseError([broken]);
    expect(error.message).toMatch(/gzip/i);
  });

  it('passes on an error of the input itself (a download cut off) as it is, not as a damaged gzip file', async () => {
    // What an S3 body does when the connection breaks mid-object: the caller retries it.
    const reset = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    for (const cut of [3, 200, Math.floor(gz.length / 2)]) {
      async function* brokenDownload() {
        yield gz.subarray(0, cut);
        throw reset;
      }
      await expect(parseChunks(brokenDownload())).rejects.toBe(reset);
    }
  });
});

describe('maxBytes', () => {
  it('accepts a plain file of exactly maxBytes and refuses one byte more', async () => {
    expect((await parseChunks([SAMPLE], { maxBytes: SAMPLE.length })).runs).toEqual(baseline.runs);
    const error = await parseError([SAMPLE], { maxBytes: SAMPLE.length - 1 });
    expect(error.problem).toBe(`more than ${SAMPLE.length - 1} bytes`);
    expect(error.line).toBe(0);
  });

  it('counts bytes across chunks, not per chunk', async () => {
    const error = await parseError(chunked(SAMPLE, 100), { maxBytes: 1000 });
    expect(error.problem).toBe('more than 1000 bytes');
  });

  it('applies the limit to the decompressed size of a gzip file', async () => {
    const gz = gzipSync(SAMPLE);
    expect(gz.length).toBeLessThan(SAMPLE.length - 200);
    const error = await parseError([gz], { maxBytes: gz.length + 100 });
    expect(error.problem).toMatch(/after decompression/);
    expect((await parseChunks([gz], { maxBytes: SAMPLE.length })).runs).toEqual(baseline.runs);
  });

  describe('gzip bombs', () => {
    const MB = 1024 * 1024;

    it('stops a 50 MB gzip bomb of spaces quickly with a ParseError', async () => {
      const bomb = gzipSync(Buffer.alloc(50 * MB, 0x20), { level: 9 });
      expect(bomb.length).toBeLessThan(200 * 1024);
      const started = performance.now();
      const error = await parseError(chunked(bomb, 64 * 1024), { maxBytes: MB });
      expect(performance.now() - started).toBeLessThan(2000);
      // One endless line of spaces: the long-line guard or the size limit, whichever comes first.
      expect(error.problem).toMatch(/longer than|more than 1048576 bytes/);
    });

    it('stops a bomb that starts with a valid log at maxBytes, without inflating the rest', async () => {
      const line = Buffer.from(`${' '.repeat(79)}\n`);
      const filler = Buffer.alloc(50 * MB);
      for (let i = 0; i + line.length <= filler.length; i += line.length) line.copy(filler, i);
      const bomb = gzipSync(Buffer.concat([SAMPLE, filler]), { level: 9 });
      const started = performance.now();
      const error = await parseError([bomb], { maxBytes: MB });
      expect(performance.now() - started).toBeLessThan(2000);
      expect(error.problem).toBe(`more than ${MB} bytes after decompression`);
      expect(error.expected).toContain(`at most ${MB} bytes`);
    });
  });
});

describe('line ends', () => {
  const crlf = Buffer.from(SAMPLE_TEXT.replace(/\n/g, '\r\n'));
  const cr = Buffer.from(SAMPLE_TEXT.replace(/\n/g, '\r'));

  it('CRLF gives the same runs (and line numbers) as LF', async () => {
    const parsed = await parseChunks([crlf]);
    expect(parsed.runs).toEqual(baseline.runs);
    expect(parsed.lines).toBe(baseline.lines);
  });

  it('old-Mac lone CR gives the same runs as LF', async () => {
    const parsed = await parseChunks([cr]);
    expect(parsed.runs).toEqual(baseline.runs);
    expect(parsed.lines).toBe(baseline.lines);
  });

  it('a CRLF split between two chunks is one line end, not two', async () => {
    const offsets: number[] = [];
    for (let i = crlf.indexOf('\r\n'); i !== -1; i = crlf.indexOf('\r\n', i + 1)) offsets.push(i + 1);
    const parsed = await parseChunks(splitAt(crlf, offsets));
    expect(parsed.runs).toEqual(baseline.runs);
    expect(parsed.lines).toBe(baseline.lines);
  });

  it('CRLF and CR in 1-byte chunks still match LF', async () => {
    expect((await parseChunks(chunked(crlf, 1))).runs).toEqual(baseline.runs);
    expect((await parseChunks(chunked(cr, 1))).runs).toEqual(baseline.runs);
  });

  it('a mix of LF, CRLF and CR line ends in one file matches LF', async () => {
    const ends = ['\n', '\r\n', '\r'];
    const lines = SAMPLE_TEXT.split('\n').slice(0, SAMPLE_LINES);
    // A lone CR followed by an empty line's LF would read as one CRLF: avoid that pair.
    const mixed = lines
      .map((line, i) => line + (ends[i % 3] === '\r' && lines[i + 1] === '' ? '\n' : ends[i % 3]))
      .join('');
    expect(mixed.match(/\r(?!\n)/g)!.length).toBeGreaterThan(5);
    const parsed = await parseChunks([Buffer.from(mixed)]);
    expect(parsed.runs).toEqual(baseline.runs);
    expect(parsed.lines).toBe(baseline.lines);
  });

  it('a last line without a line end is still read', async () => {
    const parsed = await parseChunks([SAMPLE.subarray(0, SAMPLE.length - 1)]);
    expect(parsed.runs).toEqual(baseline.runs);
  });
});

describe('text encodings', () => {
  const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(SAMPLE_TEXT, 'utf16le')]);
  const utf16be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(SAMPLE_TEXT, 'utf16le').swap16()]);
  const utf8bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), SAMPLE]);

  it('a UTF-8 byte-order mark is dropped', async () => {
    const parsed = await parseChunks([utf8bom]);
    expect(parsed.runs).toEqual(baseline.runs);
    expect(parsed.lines).toBe(baseline.lines);
  });

  it('a UTF-8 BOM before a header on line 1 does not hide the header', async () => {
    const log =
      'Device            r/s     w/s     rkB/s     wkB/s  %util\nsda              1.00    2.00     16.00     32.00   0.50\n';
    const plain = await parseText(log);
    const withBom = await parseChunks([Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(log)])]);
    expect(withBom.runs).toEqual(plain.runs);
    expect((withBom.runs[0] as IostatRun).series[0]!.samples![0]!.raw).toEqual({
      'r/s': 1,
      'w/s': 2,
      'rkB/s': 16,
      'wkB/s': 32,
      '%util': 0.5,
    });
  });

  it('UTF-16LE with a BOM parses like UTF-8', async () => {
    const parsed = await parseChunks([utf16le]);
    expect(parsed.runs).toEqual(baseline.runs);
    expect(parsed.lines).toBe(baseline.lines);
  });

  it('UTF-16BE with a BOM parses like UTF-8', async () => {
    const parsed = await parseChunks([utf16be]);
    expect(parsed.runs).toEqual(baseline.runs);
    expect(parsed.lines).toBe(baseline.lines);
  });

  it('UTF-16 split at odd byte offsets (inside a code unit) still parses like UTF-8', async () => {
    for (const size of [7, 4095]) {
      expect((await parseChunks(chunked(utf16le, size))).runs).toEqual(baseline.runs);
      expect((await parseChunks(chunked(utf16be, size))).runs).toEqual(baseline.runs);
    }
  });

  it('UTF-16 without a BOM is refused at line 1, named as such (it is full of NUL bytes)', async () => {
    const error = await fileError(join(BAD, 'utf16le-without-bom.iostat.txt'));
    expect(error.problem).toBe('UTF-16 text without a byte-order mark (little-endian)');
    expect(error.expected).toMatch(/save it as UTF-8/);
    expect(error.line).toBe(1);
    const be = Buffer.from(SAMPLE_TEXT, 'utf16le').swap16();
    expect(await parseError([be])).toMatchObject({
      line: 1,
      problem: 'UTF-16 text without a byte-order mark (big-endian)',
    });
  });

  it('non-breaking spaces (pasted from a web page) count as blanks', async () => {
    const nbsp = SAMPLE_TEXT.replace(/ /g, '\u00a0');
    expect((await parseChunks([Buffer.from(nbsp)])).runs).toEqual(baseline.runs);
  });
});

describe('binary input', () => {
  it('a NUL byte is refused as binary with its line number', async () => {
    const lines = SAMPLE_TEXT.split('\n');
    lines[6] = `${lines[6]!.slice(0, 10)}\0${lines[6]!.slice(10)}`;
    const bytes = Buffer.from(lines.join('\n'));
    for (const chunks of [[bytes], chunked(bytes, 7), chunked(bytes, 1)]) {
      const error = await parseError(chunks);
      expect(error.problem).toMatch(/binary/);
      expect(error.line).toBe(7);
      expect(error.message).toContain('test.txt:7');
    }
  });

  it('a NUL byte with CRLF line ends is reported on its line', async () => {
    const lines = SAMPLE_TEXT.split('\n');
    lines[4] += '\0';
    const error = await parseError([Buffer.from(lines.join('\r\n'))]);
    expect(error.problem).toMatch(/binary/);
    expect(error.line).toBe(5);
  });

  it('the NUL fixture is refused at line 5', async () => {
    const error = await fileError(join(BAD, 'nul-byte-on-line-5.iostat.txt'), { source: 'nul.txt' });
    expect(error.problem).toMatch(/binary/);
    expect(error.line).toBe(5);
    expect(error.source).toBe('nul.txt');
  });

  it('random bytes are refused as binary at the line of their first NUL', async () => {
    const bytes = readFileSync(join(BAD, 'random-bytes.bin'));
    const nul = bytes.indexOf(0);
    const expectedLine = bytes
      .subarray(0, nul)
      .toString('latin1')
      .split(/\r\n|\r|\n/).length;
    const error = await fileError(join(BAD, 'random-bytes.bin'));
    expect(error.problem).toMatch(/binary/);
    expect(error.line).toBe(expectedLine);
  });

  it('an ELF executable is refused as binary at line 1', async () => {
    const error = await fileError(join(BAD, 'elf-header.bin'));
    expect(error.problem).toMatch(/binary/);
    expect(error.line).toBe(1);
  });

  it('a PNG image is refused as one at line 1 (though its signature holds CR LF and LF)', async () => {
    const error = await fileError(join(BAD, 'png-header.png'));
    expect(error.problem).toBe('binary content (a PNG image)');
    expect(error.line).toBe(1);
  });

  it('binary inside a gzip file is found after decompression', async () => {
    const error = await parseError([gzipSync(readFileSync(join(BAD, 'elf-header.bin')))]);
    expect(error.problem).toMatch(/binary/);
    expect(error.line).toBe(1);
  });
});

describe('files that are something else, named by their first bytes', () => {
  const X4100_BYTES = SAMPLE;
  it.each([
    [
      'zip',
      Buffer.concat([Buffer.from('PK\x03\x04\x14\x00\x00\x00', 'latin1'), X4100_BYTES]),
      'a zip archive',
      /unzip it/,
    ],
    ['bzip2', Buffer.concat([Buffer.from('BZh91AY&SY'), X4100_BYTES]), 'a bzip2-compressed file', /bunzip2/],
    [
      'xz',
      Buffer.concat([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), X4100_BYTES]),
      'an xz-compressed file',
      /unxz/,
    ],
    ['zstd', Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), X4100_BYTES]), 'a zstd-compressed file', /unzstd/],
    [
      '7z',
      Buffer.concat([Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]), X4100_BYTES]),
      'a 7-Zip archive',
      /extract it/,
    ],
    [
      'JPEG',
      Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), X4100_BYTES]),
      'binary content (a JPEG image)',
      /not a picture/,
    ],
    ['PDF', Buffer.concat([Buffer.from('%PDF-1.7\n'), X4100_BYTES]), 'a PDF document', /as text/],
    ['gzip inside gzip', gzipSync(gzipSync(X4100_BYTES)), 'a file gzip-compressed twice', /gunzip it once/],
  ])('%s: refused at line 1 with what to do', async (_, bytes, problem, todo) => {
    const error = await parseError(chunked(bytes, 3));
    expect(error).toMatchObject({ line: 1, problem });
    expect(error.expected).toMatch(todo);
  });

  it('text that merely starts like one (BZh without a block size digit) is read as text', async () => {
    const error = await parseError([Buffer.from('BZh is how my notes start\n')]);
    expect(error.problem).toMatch(/no diskperf, iostat or fio data/);
  });
});

describe('Latin-1 text', () => {
  it('a line that is not valid UTF-8 is read as Latin-1 (Windows-1252); valid UTF-8 stays UTF-8', async () => {
    const text = SAMPLE_TEXT.replace('tunefs -a 8 /opt', 'tunefs -a 8 /opt/données/Müller');
    const fromLatin1 = await parseChunks(chunked(Buffer.from(text, 'latin1'), 7));
    const fromUtf8 = await parseChunks(chunked(Buffer.from(text, 'utf8'), 7));
    expect(fromUtf8.runs[2]!.context).toEqual(['tunefs -a 8 /opt/données/Müller']);
    expect(fromLatin1.runs).toEqual(fromUtf8.runs);
    // Windows-1252 bytes 0x80-0x9f are printable there (0x80 is the euro sign).
    const euro = await parseChunks([
      Buffer.from(SAMPLE_TEXT.replace('tunefs -a 8 /opt', 'tunefs -a 8 /opt/\x80'), 'latin1'),
    ]);
    expect(euro.runs[2]!.context).toEqual(['tunefs -a 8 /opt/€']);
  });
});

describe('empty and blank input', () => {
  it('an empty file is a ParseError at line 0', async () => {
    const error = await fileError(join(BAD, 'empty.txt'));
    expect(error.line).toBe(0);
    expect(error.problem).toMatch(/empty/);
  });

  it('no chunks at all, or only empty chunks, read as an empty file', async () => {
    for (const chunks of [[], [Buffer.alloc(0)], [Buffer.alloc(0), Buffer.alloc(0)], ['']]) {
      const error = await parseError(chunks);
      expect(error.problem).toMatch(/empty/);
    }
  });

  it('a whitespace-only file is a ParseError at line 0', async () => {
    const error = await fileError(join(BAD, 'whitespace-only.txt'));
    expect(error.line).toBe(0);
    expect(error.problem).toMatch(/no diskperf, iostat or fio data/);
  });

  it('a gzip of nothing reads as an empty file', async () => {
    const error = await parseError([gzipSync(Buffer.alloc(0))]);
    expect(error.problem).toMatch(/empty/);
  });
});

describe('long lines', () => {
  it('a 1 MB single line is refused as a long line', async () => {
    const error = await parseError([Buffer.alloc(1024 * 1024, 0x61)]);
    expect(error.problem).toMatch(/line longer than 64 KiB/);
    expect(error.line).toBe(1);
  });

  it('a 1 MB line arriving in 64 KiB chunks after some good lines is refused at its line number', async () => {
    const bytes = Buffer.concat([SAMPLE.subarray(0, SAMPLE.indexOf('\n', 40) + 1), Buffer.alloc(1024 * 1024, 0x30)]);
    const error = await parseError(chunked(bytes, 64 * 1024));
    expect(error.problem).toMatch(/longer than/);
    expect(error.line).toBe(3);
  });

  it('a 20 MB single line is refused after reading little more than the limit, never held whole', async () => {
    let pulled = 0;
    async function* twentyMegabytes() {
      for (let sent = 0; sent < 20_000_000; sent += 256 * 1024) {
        pulled += 256 * 1024;
        yield Buffer.alloc(256 * 1024, '0.1 ');
      }
    }
    const error = await parseError(twentyMegabytes());
    expect(error).toMatchObject({
      line: 1,
      problem: `a line longer than 64 KiB (${MAX_LINE_LENGTH} bytes) and still going`,
    });
    expect(error.expected).toMatch(/line ends/);
    // The splitter stops at the first chunk that takes the line past the limit.
    expect(pulled).toBeLessThanOrEqual(MAX_LINE_LENGTH + 256 * 1024);
  });

  it('a line of exactly MAX_LINE_LENGTH characters is still accepted', async () => {
    const text = `${SAMPLE_TEXT}${'#'.repeat(MAX_LINE_LENGTH)}\n`;
    const parsed = await parseChunks(chunked(Buffer.from(text), 4096));
    expect(parsed.lines).toBe(baseline.lines + 1);
    expect(parsed.runs).toHaveLength(4);
  });
});

// Non-ASCII in commands (kept as context): a character broken at a chunk boundary would show.
const MULTIBYTE_TEXT = `$ mkdir /export/tëst/日本/📈\n${SAMPLE_TEXT.replace('tunefs -a 8 /opt', 'tunefs -a 8 /opt/données/€')}`;
const MULTIBYTE = Buffer.from(MULTIBYTE_TEXT, 'utf8');
const multibyteWhole = await parseChunks([MULTIBYTE]);

describe('chunk boundaries', () => {
  const text = MULTIBYTE_TEXT;
  const bytes = MULTIBYTE;
  const whole = multibyteWhole;

  it('the multi-byte sample has the expected context', () => {
    expect(whole.runs[0]!.context[0]).toBe('mkdir /export/tëst/日本/📈');
    expect(whole.runs[2]!.context).toEqual(['tunefs -a 8 /opt/données/€']);
  });

  for (const size of [1, 2, 3, 7, 4096]) {
    it(`chunks of ${size} bytes give identical results`, async () => {
      const parsed = await parseChunks(chunked(bytes, size));
      expect(parsed.runs).toEqual(whole.runs);
      expect(parsed.lines).toBe(whole.lines);
      expect(parsed.bytes).toBe(bytes.length);
    });
  }

  it('splitting inside every multi-byte character gives identical results', async () => {
    const offsets: number[] = [];
    for (let i = 0; i < bytes.length; i++) {
      const lead = bytes[i]!;
      const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      for (let k = 1; k < length; k++) offsets.push(i + k);
    }
    // ë é (2 bytes), 日 本 € (3 bytes), 📈 (4 bytes), each inside a command.
    expect(offsets).toHaveLength(2 * 1 + 3 * 2 + 1 * 3);
    for (const chunks of [
      splitAt(bytes, offsets),
      splitAt(
        bytes,
        offsets.filter((_, i) => i % 3 === 1),
      ),
    ]) {
      expect((await parseChunks(chunks)).runs).toEqual(whole.runs);
    }
  });

  it('strings as chunks give the same result as bytes', async () => {
    const strings: string[] = [];
    for (let i = 0; i < text.length; i += 13) strings.push(text.slice(i, i + 13));
    expect((await parseChunks(strings)).runs).toEqual(whole.runs);
  });

  it('an async iterable source gives the same result as an array', async () => {
    async function* source() {
      for (const chunk of chunked(bytes, 100)) {
        await new Promise((r) => setImmediate(r));
        yield chunk;
      }
    }
    expect((await parseChunks(source())).runs).toEqual(whole.runs);
  });

  it('a source that reuses one buffer for every chunk (as fileChunks does) gives identical results: nothing kept refers to it', async () => {
    /** Each piece copied into the same buffer, which is scribbled over with NUL bytes as soon as the parser asks for the next. */
    async function* reusing(input: Buffer, size: number): AsyncGenerator<Buffer> {
      const shared = Buffer.alloc(size);
      for (let i = 0; i < input.length; i += size) {
        const n = input.copy(shared, 0, i, i + size);
        yield shared.subarray(0, n);
        shared.fill(0);
      }
    }
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    for (const size of [1, 3, 7, 4096]) {
      const parsed = await parseChunks(reusing(bytes, size));
      expect(parsed.runs).toEqual(whole.runs);
      expect(parsed.lines).toBe(whole.lines);
      expect((await parseChunks(reusing(gzipSync(bytes), size))).runs).toEqual(whole.runs);
      expect((await parseChunks(reusing(utf16le, size))).runs).toEqual(whole.runs);
    }
  });

  it('fileChunks reads exactly bytes [start, end) of a file, whole by default', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'benchdrop-chunks-'));
    try {
      const path = join(dir, 'log.txt');
      // Two and a half reads, so chunks follow each other through the same buffer.
      const big = Buffer.concat(
        Array.from({ length: Math.ceil((2.5 * READ_CHUNK_BYTES) / bytes.length) }, () => bytes),
      );
      await writeFile(path, big);
      const read = async (...range: number[]) => {
        const pieces: Buffer[] = [];
        for await (const chunk of fileChunks(path, ...range)) pieces.push(Buffer.from(chunk));
        return Buffer.concat(pieces);
      };
      expect((await read()).equals(big)).toBe(true);
      expect((await read(17, big.length - 5)).equals(big.subarray(17, big.length - 5))).toBe(true);
      expect(
        (await read(READ_CHUNK_BYTES - 1, 2 * READ_CHUNK_BYTES + 1)).equals(
          big.subarray(READ_CHUNK_BYTES - 1, 2 * READ_CHUNK_BYTES + 1),
        ),
      ).toBe(true);
      expect((await read(big.length, big.length + 10)).length).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('property: any split points give identical results', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), async (offsets) => {
        const parsed = await parseChunks(splitAt(bytes, offsets));
        expect(parsed.runs).toEqual(whole.runs);
        expect(parsed.lines).toBe(whole.lines);
      }),
      { numRuns: 100 },
    );
  });
});

describe('quoted logs', () => {
  const quote = (prefix: string) =>
    SAMPLE_TEXT.split('\n')
      .slice(0, SAMPLE_LINES)
      .map((line) => (line === '' ? prefix.trimEnd() : prefix + line))
      .join('\n');

  for (const prefix of ['> ', '>> ', '> > ', '>', '  > ']) {
    it(`"${prefix}" quoting gives the same runs as the original`, async () => {
      const parsed = await parseChunks([Buffer.from(quote(prefix))]);
      expect(parsed.runs).toEqual(baseline.runs);
      expect(parsed.lines).toBe(baseline.lines);
    });
  }

  it('a quoted reply with an attribution line keeps the runs and drops the prose', async () => {
    const text = `On Tue, 4 Mar 2014 at 10:42, Bob <bob@example.com> wrote:\n${quote('> ')}\n`;
    const parsed = await parseChunks([Buffer.from(text)]);
    expect(parsed.runs).toHaveLength(4);
    expect(parsed.runs[0]!.context).toEqual(baseline.runs[0]!.context);
    expect(parsed.runs.map((r) => c0t0d0(r).samples![0]!.values)).toEqual(
      baseline.runs.map((r) => c0t0d0(r).samples![0]!.values),
    );
    // Everything moved down one line.
    expect(parsed.runs.map((r) => r.startLine)).toEqual(baseline.runs.map((r) => r.startLine + 1));
  });
});

describe('files with no data', () => {
  it('prose only: ParseError at line 0 that lists the supported formats', async () => {
    const error = await fileError(join(BAD, 'prose-only.txt'), { source: 'prose.txt' });
    expect(error.line).toBe(0);
    expect(error.source).toBe('prose.txt');
    expect(error.problem).toMatch(/no diskperf, iostat or fio data/);
    expect(error.supported).toEqual(SUPPORTED_FORMATS);
    expect(error.supported.length).toBeGreaterThanOrEqual(4);
    for (const format of SUPPORTED_FORMATS) expect(error.message).toContain(format);
    expect(error.message.startsWith('prose.txt: ')).toBe(true);
    expect(error.toJSON()).toMatchObject({ name: 'ParseError', line: 0, source: 'prose.txt' });
  });

  it('a one-line prose file says "its only line"', async () => {
    const error = await parseError([Buffer.from('just a note, no numbers\n')]);
    expect(error.problem).toContain('its only line');
  });

  it('detection gives up after 5000 lines without a header', async () => {
    const prose = Buffer.from('nothing to see here\n'.repeat(6000) + SAMPLE_TEXT);
    const error = await parseError([prose]);
    expect(error.line).toBe(0);
    expect(error.problem).toContain('the first 5000 lines');
  });
});
