/**
 * Regression tests for parser bugs found while writing the driver, iostat and
 * property tests: each one failed against the code as first written.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { IostatRun, Run } from '../../../shared/model.ts';
import { ParseError, parseFile, parseStream, parseText } from '../../../shared/parsers/index.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures');
const SAMPLE = readFileSync(join(FIXTURES, 'solaris/solaris-10-x4100-sas-maxcontig.iostat.txt'));
const SAMPLE_TEXT = SAMPLE.toString('utf8');

async function runsOf(chunks: (Buffer | string)[]): Promise<Run[]> {
  const runs: Run[] = [];
  await parseStream(chunks, { source: 'findings.txt', onRun: (run) => runs.push(run) });
  return runs;
}

async function errorOf(chunks: (Buffer | string)[]): Promise<ParseError> {
  try {
    await runsOf(chunks);
  } catch (error) {
    expect(error).toBeInstanceOf(ParseError);
    return error as ParseError;
  }
  throw new Error('expected a ParseError');
}

const bytes1 = (b: Buffer) => [...b].map((x) => Buffer.from([x]));

const baseline = await runsOf([SAMPLE]);

const TITLE = '                    extended device statistics';
const XN_HEADER = '    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device';
const ROW_A = '    0.9    2.7   11.4   25.3  0.0  0.0    0.1    7.9   0   1 c1t0d0';
const ROW_B = '  156.2   12.0 1249.6   96.0  0.0  1.4    0.0    8.3   0  88 c1t0d0';

describe('regression 1 (lines.ts/index.ts): gzip and UTF-16 are only recognised when the first chunk has 2+ bytes', () => {
  // bytesOf() checks the gzip magic, and LineSplitter.pickDecoder() the BOM, on the first chunk
  // alone. A stream whose first chunk is empty or 1 byte long (network streams, web
  // ReadableStreams, the 1-byte chunk test) gets "binary content (a NUL byte)" instead.
  it('gzip delivered in 1-byte chunks parses like the plain file', async () => {
    expect(await runsOf(bytes1(gzipSync(SAMPLE)))).toEqual(baseline);
  });

  it('gzip after an empty first chunk parses like the plain file', async () => {
    expect(await runsOf([Buffer.alloc(0), gzipSync(SAMPLE)])).toEqual(baseline);
  });

  it('UTF-16LE with a BOM delivered in 1-byte chunks parses like UTF-8', async () => {
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(SAMPLE_TEXT, 'utf16le')]);
    expect(await runsOf(bytes1(utf16le))).toEqual(baseline);
  });

  it('UTF-16BE with a BOM after an empty first chunk parses like UTF-8', async () => {
    const utf16be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(SAMPLE_TEXT, 'utf16le').swap16()]);
    expect(await runsOf([Buffer.alloc(0), utf16be])).toEqual(baseline);
  });
});

describe('regression 2 (lines.ts): a too-long line that ends inside the chunk is reported one line too late', () => {
  // emit() increments lineNo and then calls tooLong(), which reports lineNo + 1.
  it('a 1 MB line 2 followed by a line end is reported at line 2', async () => {
    const error = await errorOf([Buffer.from(`first line\n${'x'.repeat(1024 * 1024)}\nlast line\n`)]);
    expect(error.problem).toMatch(/longer than/);
    expect(error.line).toBe(2); // found: 3
  });

  it('a 1 MB single line with a final LF is reported at line 1', async () => {
    const error = await errorOf([Buffer.from(`${'x'.repeat(1024 * 1024)}\n`)]);
    expect(error.line).toBe(1); // found: 2
  });
});

describe('regression 3 (lines.ts): a NUL byte in a file with lone-CR line ends is reported on the wrong line', () => {
  // consume() counts only '\n' before the NUL; old-Mac files end lines with '\r' alone.
  it('NUL on line 5 of a CR-only file is reported at line 5', async () => {
    const lines = SAMPLE_TEXT.split('\n');
    lines[4] += '\0';
    const error = await errorOf([Buffer.from(lines.join('\r'))]);
    expect(error.problem).toMatch(/binary/);
    expect(error.line).toBe(5); // found: 1 (read in 7-byte chunks it is 5)
  });
});

describe('regression 4 (index.ts): parseFile leaks the file descriptor when parsing fails before the end of the file', () => {
  // When the line parser throws (binary content, long line, maxBytes), the for-await in
  // parseStream stops, but bytesOf() pulls from the source with iterator.next() and never calls
  // iterator.return(), so the fs.ReadStream is never destroyed; with gzip the pump task also
  // waits forever for 'drain' on the destroyed gunzip stream. One fd per failed upload.
  const openFds = () => readdirSync('/proc/self/fd').length;
  const hasProc = (() => {
    try {
      readdirSync('/proc/self/fd');
      return true;
    } catch {
      return false;
    }
  })();

  it.skipIf(!hasProc)('failing parseFile calls leave no file descriptors open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'benchdrop-findings-'));
    try {
      const plain = join(dir, 'nul.txt');
      writeFileSync(plain, Buffer.concat([SAMPLE, Buffer.from([0]), Buffer.alloc(200_000, 0x41)]));
      // A gzip file larger than one read chunk: text lines of pseudo-random letters after the sample.
      const noise = Buffer.alloc(2 * 1024 * 1024);
      for (let i = 0, x = 12345; i < noise.length; i++) {
        x = (x * 1103515245 + 12345) >>> 0;
        noise[i] = i % 81 === 80 ? 0x0a : 0x21 + ((x >>> 16) % 90);
      }
      const gz = join(dir, 'big.txt.gz');
      writeFileSync(gz, gzipSync(Buffer.concat([SAMPLE, noise])));
      expect(readFileSync(gz).length).toBeGreaterThan(64 * 1024);
      const before = openFds();
      for (let i = 0; i < 10; i++) {
        await expect(parseFile(plain)).rejects.toBeInstanceOf(ParseError);
        await expect(parseFile(gz, { maxBytes: 256 * 1024 })).rejects.toBeInstanceOf(ParseError);
        await expect(parseFile(join(FIXTURES, 'bad/elf-header.bin'))).rejects.toBeInstanceOf(ParseError);
      }
      await new Promise((r) => setTimeout(r, 100));
      expect(openFds()).toBe(before); // found: before + 30, one per call
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('regression 5 (iostat.ts): an iostat command after data is taken for a ragged row', () => {
  // slowLine(): with a header active, a line of 3+ tokens of which all but 2 are numbers is a
  // "ragged row". `iostat -xn 5 2` (4 tokens, 2 numbers) qualifies, so a second invocation in a
  // Solaris/FreeBSD log (they print no banner) is merged into the first run: its since-boot
  // report counts as an interval report, its command is lost, and a bogus warning appears.
  const text = ['iostat -xn 5 2', TITLE, XN_HEADER, ROW_A, '', 'iostat -xn 1 2', TITLE, XN_HEADER, ROW_B, ''].join(
    '\n',
  );

  it('two invocations are two runs, each with its command and a since-boot report 0', async () => {
    const runs = (await parseText(text)).runs as IostatRun[];
    expect(runs.map((r) => r.warnings)).toEqual([[], []]); // found: one run, "ragged row skipped" at line 6
    expect(runs).toHaveLength(2);
    expect(runs.map((r) => r.meta.command)).toEqual(['iostat -xn 5 2', 'iostat -xn 1 2']);
    expect(runs.map((r) => r.series[0]!.samples![0]!.sinceBoot)).toEqual([true, true]);
  });

  it('`sleep 5 10` between two tables is context, not a ragged row', async () => {
    const runs = (await parseText([TITLE, XN_HEADER, ROW_A, 'sleep 5 10', TITLE, XN_HEADER, ROW_B].join('\n'))).runs;
    expect(runs[0]!.warnings).toEqual([]);
    expect(runs).toHaveLength(2);
    expect(runs[1]!.context).toEqual(['sleep 5 10']);
  });
});

describe('regression 6 (iostat.ts): run indexes skip a number after a session with a header but no rows', () => {
  // runFor() takes nextIndex++ when a header opens a run; finishRun() drops a run without rows
  // but the index is gone, so the first emitted run can be index 1 (model.ts: "0-based position
  // of the run in its file"). Seen with `iostat -xz` when every device was idle, then a new banner.
  it('the only run of the file has index 0', async () => {
    const text = [
      'Linux 5.15.0-91-generic (a) \t01/15/2024 \t_x86_64_\t(2 CPU)',
      '',
      'Device            r/s     w/s     rkB/s     wkB/s  %util',
      '',
      'Linux 5.15.0-91-generic (b) \t01/15/2024 \t_x86_64_\t(2 CPU)',
      '',
      'Device            r/s     w/s     rkB/s     wkB/s  %util',
      'sda              1.00    2.00     16.00     32.00   0.50',
    ].join('\n');
    const runs = (await parseText(text)).runs;
    expect(runs).toHaveLength(1);
    expect(runs[0]!.name).toBe('b');
    expect(runs[0]!.index).toBe(0); // found: 1
  });
});

describe('regression 7 (iostat.ts / context.ts): meta.command misses iostat commands with a prefix', () => {
  const log = (command: string) => [command, TITLE, XN_HEADER, ROW_A].join('\n');

  it('`LANG=C iostat -xn 5 2` sets meta.command', async () => {
    // The line is kept as context, but takeContext() tests /^iostat\b/ on the whole line.
    const run = (await parseText(log('LANG=C iostat -xn 5 2'))).runs[0] as IostatRun;
    expect(run.context).toEqual(['LANG=C iostat -xn 5 2']);
    expect(run.meta.command ?? '(none)').toMatch(/iostat -xn 5 2$/); // found: undefined
  });

  it('`/usr/bin/iostat -xn 5 2` is kept as context and sets meta.command', async () => {
    // commandFromLine() wants a lower-case word first, so a command given by path is dropped.
    const run = (await parseText(log('/usr/bin/iostat -xn 5 2'))).runs[0] as IostatRun;
    expect(run.context).toEqual(['/usr/bin/iostat -xn 5 2']); // found: []
    expect(run.meta.command ?? '(none)').toMatch(/iostat -xn 5 2$/);
  });
});

describe('regression (iostat-linux-json.ts): a dropped JSON run gave its index away', () => {
  it('a broken disk line before a whole document leaves the document as run 0', async () => {
    const doc =
      '{"sysstat": {"hosts": [{"nodename": "h", "statistics": [{"disk": [{"disk_device": "sda", "r/s": 1.5}]}]}]}}';
    const runs = await runsOf([`"disk_device": extended device statistics\r\n${doc}\n`]);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.index).toBe(0);
    expect(runs[0]!.name).toBe('h');
  });
});

describe('regression (iostat.ts): a row of 1,001 fields was reported as "73 fields"', () => {
  // The tokenizer stops counting past MAX_TOKENS (72) and returned 73; the message printed that count.
  const fields = (n: number) => Array.from({ length: n }, (_, i) => `${i % 10}.5`).join(' ');

  it('Solaris -xn: the message counts every field', async () => {
    const lines = SAMPLE_TEXT.split('\n');
    const header = lines.findIndex((l) => l.trim().startsWith('r/s'));
    lines.splice(header + 2, 0, `${fields(1000)} c9t9d9`);
    const run = (await runsOf([lines.join('\n')]))[0]!;
    expect(run.warnings.map((w) => [w.line, w.message.split(' where ')[0]])).toContainEqual([
      header + 3,
      'ragged row skipped: 1001 fields',
    ]);
  });

  it('Linux -x: the same', async () => {
    const text = [
      'Device            r/s     rkB/s     w/s     wkB/s',
      'sda              1.00      2.00    3.00      4.00',
      `sdb ${fields(1000)}`,
      'sdc              1.00      2.00    3.00      4.00',
    ].join('\n');
    const run = (await runsOf([text]))[0]!;
    expect(run.warnings.map((w) => [w.line, w.message])).toEqual([
      [
        3,
        'ragged row skipped: 1001 fields where the header at line 1 has 4 columns and a device name (r/s rkB/s w/s wkB/s)',
      ],
    ]);
  });

  it('diskperf says the same number', async () => {
    const text = ['# req_size  fwd_wt  fwd_rd', '       4096    2.84    5.96', `8192 ${fields(1000)}`].join('\n');
    const run = (await runsOf([text]))[0]!;
    expect(run.warnings.map((w) => w.message)).toEqual(['row has 1001 values, the header has 3 columns; row skipped']);
  });
});
