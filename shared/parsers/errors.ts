/**
 * ParseError: the one error a parser throws. It says where (file and line), what
 * it found, what it expected, and which formats benchdrop reads, so a person can
 * act on it without reading code. The message escapes control characters (from a
 * key or the file itself), so it is safe to print.
 */
import { printable } from '../printable.ts';

export const SUPPORTED_FORMATS = [
  'IRIX diskperf result tables (Diskperf V1.2)',
  'Solaris/illumos iostat -x, -xn, -xnz, -xne, -xM, -xu (with -T, -t, -m)',
  'Linux sysstat iostat: -x of every version, basic device report, -xs, --pretty, --human, -o JSON',
  'FreeBSD iostat -x',
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
    super(printable(`${where}: ${details.problem}; expected ${details.expected}. benchdrop reads: ${SUPPORTED_FORMATS.join('; ')}.`));
    this.source = details.source;
    this.line = details.line;
    this.problem = details.problem;
    this.expected = details.expected;
  }

  toJSON() {
    return { name: this.name, source: this.source, line: this.line, problem: this.problem, expected: this.expected, message: this.message };
  }
}

export function isParseError(error: unknown): error is ParseError {
  return error instanceof ParseError;
}
