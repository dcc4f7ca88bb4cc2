/**
 * The two errors parsing ends with. ParseError: the input is wrong, and the message
 * says where (file and line), what was found, what was expected and which formats
 * benchdrop reads, so a person can act on it without reading code; it escapes
 * control characters (from a key or the file itself), so it is safe to print.
 * InternalParseError: benchdrop is wrong (a bug met while parsing); it says only
 * the line, and carries the original error, stack included, as its cause.
 *
 *   new ParseError({ source: 'a.log', line: 12, problem: 'an iostat header with no device rows under it',
 *     expected: 'device rows such as "sda 1.00 2.00 ..." after the header' })
 *
 * yields a message naming a.log line 12, the problem, what was expected and SUPPORTED_FORMATS.
 */
import { printable } from '../printable.ts';

export const SUPPORTED_FORMATS = [
  'IRIX diskperf result tables (Diskperf V1.2)',
  'Solaris/illumos iostat -x, -xn, -xnz, -xne, -xM, -xu (with -T, -t, -m), and comma-separated -xpr, -xnr',
  'Linux sysstat iostat: -x of every version, basic device report, -s, -xs, 512-byte units, -g/-H groups, ' +
    '--pretty, --human, -o JSON',
  'FreeBSD iostat -x, and its default wide report',
  'NetBSD iostat -x (-x -I, -y), and its default wide report',
  'OpenBSD iostat (default, -D, -I)',
  'macOS iostat (default, -d, -I, -o, -C, -U)',
  'AIX iostat -D / -dD extended drive report (with -T, -l)',
  'fio 2.x and 3.x output: --output-format=json and json+ (also of --client runs), terse versions 2 to 5, ' +
    'and the normal report',
] as const;

export interface ParseErrorDetails {
  source: string;
  /** 1-based line number, 0 when the problem is the file as a whole. */
  line: number;
  /** What was found (`binary content`, `no recognisable table`, ...). */
  problem: string;
  /** What was expected there. */
  expected: string;
}

export class ParseError extends Error {
  override readonly name = 'ParseError';
  readonly source: string;
  readonly line: number;
  readonly problem: string;
  readonly expected: string;
  readonly supported = SUPPORTED_FORMATS;

  constructor(details: ParseErrorDetails) {
    const where = details.line > 0 ? `${details.source}:${details.line}` : details.source;
    super(
      printable(
        `${where}: ${details.problem}; expected ${details.expected}. benchdrop reads: ${SUPPORTED_FORMATS.join('; ')}.`,
      ),
    );
    this.source = details.source;
    this.line = details.line;
    this.problem = details.problem;
    this.expected = details.expected;
  }

  toJSON() {
    return {
      name: this.name,
      source: this.source,
      line: this.line,
      problem: this.problem,
      expected: this.expected,
      message: this.message,
    };
  }
}

export function isParseError(error: unknown): error is ParseError {
  return error instanceof ParseError;
}

export interface InternalParseErrorDetails {
  source: string;
  /** The line being parsed when it happened, 0 when none was. */
  line: number;
  /** What was thrown. */
  cause: unknown;
}

export class InternalParseError extends Error {
  override readonly name = 'InternalParseError';
  readonly source: string;
  readonly line: number;

  constructor(details: InternalParseErrorDetails) {
    // Nothing of the cause in the message: it may quote the file, and it names code, not the input's fault.
    super(`internal error while parsing (line ${details.line}); reported`, { cause: details.cause });
    this.source = details.source;
    this.line = details.line;
  }

  toJSON() {
    const cause =
      this.cause instanceof Error
        ? { name: this.cause.name, message: this.cause.message, stack: this.cause.stack }
        : { value: String(this.cause) };
    return { name: this.name, source: this.source, line: this.line, message: this.message, cause };
  }
}

export function isInternalParseError(error: unknown): error is InternalParseError {
  return error instanceof InternalParseError;
}
