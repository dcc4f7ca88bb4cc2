/**
 * The line splitter's options (shared/parsers/lines.ts): a lone CR as a line end or as a
 * redraw whose pieces keep their line's number, and HTML tags at a line's ends kept as text.
 */
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../shared/parsers/errors.ts';
import { LineSplitter, MAX_LINE_LENGTH, type LineSplitterOptions } from '../../../shared/parsers/lines.ts';

/** The (text, line number) pairs and the line count the splitter gives for `input` pushed in `chunks`. */
function split(chunks: (Buffer | string)[], options?: LineSplitterOptions) {
  const seen: [string, number][] = [];
  const splitter = new LineSplitter('test.log', { text: (text, lineNo) => seen.push([text, lineNo]) }, options);
  for (const chunk of chunks) splitter.push(chunk);
  return { seen, lines: splitter.end() };
}

const bytesOf = (text: string) => [...Buffer.from(text)].map((byte) => Buffer.from([byte]));

/** The ParseError splitting `input` ends with. */
function failure(input: string | Buffer, options?: LineSplitterOptions): ParseError {
  try {
    split([input], options);
  } catch (error) {
    if (error instanceof ParseError) return error;
    throw error;
  }
  throw new Error('split without an error');
}

const REDRAW: LineSplitterOptions = { loneCR: 'redraw' };
const MIXED = 'progress 10%\rprogress 90%\rdone\nnext\r\nlast 1\rlast 2';

describe('LineSplitter lone CR', () => {
  it('ends a line by default, as old Mac files end them', () => {
    expect(split([MIXED])).toEqual({
      seen: [
        ['progress 10%', 1],
        ['progress 90%', 2],
        ['done', 3],
        ['next', 4],
        ['last 1', 5],
        ['last 2', 6],
      ],
      lines: 6,
    });
  });

  it('ends a piece of its line when it redraws: the pieces share the number of the LF line', () => {
    expect(split([MIXED], REDRAW)).toEqual({
      seen: [
        ['progress 10%', 1],
        ['progress 90%', 1],
        ['done', 1],
        ['next', 2],
        ['last 1', 3],
        ['last 2', 3],
      ],
      lines: 3,
    });
  });

  it.each([
    ['line-end', {}],
    ['redraw', REDRAW],
  ] as const)('gives the same lines in 1-byte chunks as whole (%s)', (_rule, options) => {
    const text = `${MIXED}\r\nafter\r\rend\r`;
    expect(split(bytesOf(text), options)).toEqual(split([text], options));
  });

  it('counts the line a redraw ends the input in, and a CRLF cut between two chunks once', () => {
    expect(split(['one\ntwo\r'], REDRAW)).toEqual({
      seen: [
        ['one', 1],
        ['two', 2],
      ],
      lines: 2,
    });
    // The first chunk fills the splitter's look at the byte-order mark: the CRLF is cut for real.
    expect(split(['first line\n', 'one\r', '\ntwo\r', 'three\n'], REDRAW)).toEqual({
      seen: [
        ['first line', 1],
        ['one', 2],
        ['two', 3],
        ['three', 3],
      ],
      lines: 3,
    });
  });

  it('splits UTF-16 text as it splits UTF-8 (redraw)', () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(MIXED, 'utf16le')]);
    expect(split([utf16], REDRAW)).toEqual(split([MIXED], REDRAW));
  });

  it('names the LF line of a NUL after redraws, and the CR line by default', () => {
    const text = 'a\rb\nc\r\0';
    expect(failure(text, REDRAW).line).toBe(2);
    expect(failure(text).line).toBe(4);
  });

  it('holds the line limit for each redrawn piece, naming the LF line', () => {
    const piece = 'x'.repeat(MAX_LINE_LENGTH / 4);
    const redraws = `first\n${`${piece}\r`.repeat(8)}end\n`;
    expect(split([redraws], REDRAW).lines).toBe(2);
    const tooLong = `first\nshort\r${'x'.repeat(MAX_LINE_LENGTH + 1)}\n`;
    expect(failure(tooLong, REDRAW).line).toBe(2);
  });
});

describe('LineSplitter HTML tags at the ends of a line', () => {
  const line = '<stor-a> seq: (g=0): rw=read, bs=(R) 1024KiB-1024KiB';

  it('come off by default, and stay when the log writes them itself', () => {
    expect(split([line]).seen).toEqual([['seq: (g=0): rw=read, bs=(R) 1024KiB-1024KiB', 1]]);
    expect(split([line], { edgeTags: 'keep' }).seen).toEqual([[line, 1]]);
  });
});
