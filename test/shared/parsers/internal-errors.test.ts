/**
 * What parsing ends in when something other than the input is wrong (issue 13):
 * an InternalParseError with the line being parsed and the original error as its
 * cause, whether the error came from the parser itself, from a caller's callback
 * that has a bug (one of JavaScript's own error types), or from a part parsed on
 * another thread; the caller's own errors and ParseErrors pass through unchanged.
 * A bug inside the parser is forced by replacing readTimestamp (timestamps.ts)
 * with one that throws on the word `explode`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { LabelError } from '../../../shared/labels.ts';
import {
  InternalParseError,
  isInternalParseError,
  isParseError,
  ParseError,
  parseStream,
  parseText,
} from '../../../shared/parsers/index.ts';
import { parseFileInParallel } from '../../../shared/parsers/parallel.ts';
import { errorOfPart, parsePart, partFailure, type PartFailure } from '../../../shared/parsers/parse-worker.ts';
import type * as Timestamps from '../../../shared/parsers/timestamps.ts';

vi.mock('../../../shared/parsers/timestamps.ts', async (importOriginal) => {
  const original = await importOriginal<typeof Timestamps>();
  return {
    ...original,
    readTimestamp: (text: string) => {
      if (text.includes('explode')) throw new TypeError('readTimestamp exploded');
      return original.readTimestamp(text);
    },
  };
});

const dir = mkdtempSync(join(tmpdir(), 'benchdrop-internal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = '    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device';
const TITLE = '                    extended device statistics';
const row = (device: string, r = 1.5) =>
  `  ${r.toFixed(1)}    2.0   12.0   16.0  0.0  0.0    0.0    1.2   0   1 ${device}`;

/** Two Solaris sessions: run 0 is handed over at line 10, when the header of the second opens run 1. */
const TWO_SESSIONS = [
  'iostat -xn 5 2',
  TITLE,
  HEADER,
  row('c0t0d0'),
  TITLE,
  HEADER,
  row('c0t0d0', 2.5),
  'tunefs -a 8 /opt',
  TITLE,
  HEADER,
  row('c0t0d0'),
];

async function failure(
  text: string,
  callbacks: Parameters<typeof parseStream>[1] extends infer O ? Partial<O> : never,
): Promise<unknown> {
  try {
    await parseStream([Buffer.from(text)], { source: 'log.txt', ...callbacks });
  } catch (error) {
    return error;
  }
  throw new Error('the parse did not fail');
}

function expectInternal(error: unknown, line: number, cause: unknown): asserts error is InternalParseError {
  expect(error).toBeInstanceOf(InternalParseError);
  expect(isInternalParseError(error)).toBe(true);
  expect(isParseError(error)).toBe(false);
  const internal = error as InternalParseError;
  expect(internal.line).toBe(line);
  expect(internal.source).toBe('log.txt');
  expect(internal.message).toBe(`internal error while parsing (line ${line}); reported`);
  expect(internal.cause).toBe(cause);
}

describe('a bug in a callback is an InternalParseError at the line being parsed', () => {
  it('onRun throwing a TypeError while the next session opens (line 10)', async () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'label')");
    const error = await failure(TWO_SESSIONS.join('\n'), {
      onRun: () => {
        throw bug;
      },
    });
    expectInternal(error, 10, bug);
    expect((error.cause as Error).stack).toContain('internal-errors.test.ts');
  });

  it('onRun throwing at the end of the input: the last line', async () => {
    const bug = new RangeError('Invalid array length');
    const lines = TWO_SESSIONS.slice(0, 4);
    expectInternal(
      await failure(lines.join('\n'), {
        onRun: () => {
          throw bug;
        },
      }),
      lines.length,
      bug,
    );
  });

  it('onIostatSample throwing when a report ends, at the header that ends it (line 6)', async () => {
    const bug = new TypeError('sample.values is undefined');
    const error = await failure(TWO_SESSIONS.join('\n'), {
      keepSamples: false,
      onIostatSample: () => {
        throw bug;
      },
    });
    expectInternal(error, 6, bug);
  });

  it('a diskperf onRun that throws something that is no Error at all', async () => {
    const text = ['# req_size  fwd_wt  fwd_rd', '       4096    2.84    5.96', '       8192    2.52    5.54'].join(
      '\n',
    );
    const error = await failure(text, {
      onRun: () => {
        throw 'not an error';
      },
    });
    expectInternal(error, 3, 'not an error');
  });
});

describe("the caller's own errors and ParseErrors pass through unchanged", () => {
  class StoreDown extends Error {
    override readonly name = 'StoreDown';
  }

  it.each([
    ['its own error class', new StoreDown('the table is throttled')],
    [
      'a LabelError (a label the log gives, which the caller refuses)',
      new LabelError('device label "a#b" contains "#"'),
    ],
    ['a plain Error', new Error('store is down')],
    ['a ParseError', new ParseError({ source: 'other', line: 3, problem: 'p', expected: 'e' })],
  ])('%s', async (_what, own) => {
    expect(
      await failure(TWO_SESSIONS.join('\n'), {
        onRun: () => {
          throw own;
        },
      }),
    ).toBe(own);
  });
});

describe('a bug inside a parser is an InternalParseError at its line', () => {
  it('diskperf: the date field of line 3', async () => {
    const text = [
      '# Disk Performance Test Results Generated By Diskperf V1.2',
      '#',
      '# Test date     : explode',
      '# req_size  fwd_wt',
      '       4096    2.84',
    ].join('\n');
    const error = await parseText(text, 'log.txt').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalParseError);
    expect((error as InternalParseError).line).toBe(3);
    expect((error as InternalParseError).cause).toEqual(new TypeError('readTimestamp exploded'));
  });

  it('iostat: a line read while the format is still being detected (buffered, then replayed)', async () => {
    const error = await parseText(['explode here', 'and prose', ...TWO_SESSIONS].join('\n'), 'log.txt').catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InternalParseError);
    expect((error as InternalParseError).line).toBe(1);
  });
});

describe('across the worker boundary (parse-worker.ts)', () => {
  it('a part that meets a bug answers with its line and the cause, stack included, which survive postMessage', async () => {
    const path = join(dir, 'part.txt');
    writeFileSync(path, TWO_SESSIONS.map((l, i) => (i === 4 ? 'explode' : l)).join('\n'));
    const answer = await parsePart({
      benchdropPart: true,
      path,
      source: 'log.txt',
      start: 0,
      end: 10_000,
      continuation: false,
    });
    expect(answer).toMatchObject({
      ok: false,
      kind: 'internal',
      line: 5,
      cause: { name: 'TypeError', message: 'readTimestamp exploded' },
    });
    // A worker's answer arrives as a structured clone.
    const error = errorOfPart(structuredClone(answer as PartFailure), 'log.txt', 100);
    expect(error).toBeInstanceOf(InternalParseError);
    expect((error as InternalParseError).line).toBe(105);
    expect(error.message).toBe('internal error while parsing (line 105); reported');
    const cause = (error as InternalParseError).cause as Error;
    expect(cause).toBeInstanceOf(TypeError);
    expect(cause.message).toBe('readTimestamp exploded');
    expect(cause.stack).toBe((answer as Extract<PartFailure, { kind: 'internal' }>).cause.stack);
    expect(cause.stack).toContain('internal-errors.test.ts');
  });

  it('ParseErrors and other errors keep what they said', () => {
    const parse = errorOfPart(
      structuredClone(
        partFailure(new ParseError({ source: 's', line: 4, problem: 'binary content (a NUL byte)', expected: 'text' })),
      ),
      'log.txt',
      10,
    );
    expect(parse).toBeInstanceOf(ParseError);
    expect((parse as ParseError).line).toBe(14);
    expect((parse as ParseError).problem).toBe('binary content (a NUL byte)');
    const io = Object.assign(new Error('EACCES: permission denied, open x'), { code: 'EACCES' });
    const other = errorOfPart(structuredClone(partFailure(io)), 'log.txt', 10);
    expect(other).not.toBeInstanceOf(InternalParseError);
    expect(other).toMatchObject({ message: io.message, code: 'EACCES', stack: io.stack });
  });

  it('a file parsed in parts reports the bug at its line in the whole file', async () => {
    const lines: string[] = ['iostat -xn 5 40'];
    for (let r = 0; r < 40; r++) lines.push(TITLE, HEADER, row('c0t0d0', r), row('c0t1d0', r));
    lines[150] = 'explode';
    const path = join(dir, 'parts.txt');
    writeFileSync(path, `${lines.join('\n')}\n`);
    const error = await parseFileInParallel(path, {
      workers: 2,
      minBytes: 0,
      inThisThread: true,
      source: 'log.txt',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalParseError);
    expect((error as InternalParseError).line).toBe(151);
  });
});
