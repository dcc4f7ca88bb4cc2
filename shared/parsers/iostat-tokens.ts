/**
 * The tokenizer of iostat rows, the hot loop of every parse: a line's bytes split
 * on blanks, each token read as a plain decimal number where it is one.
 *
 *   "sda  1.50  24,00  -1  1.8M"
 *
 * yields 5 tokens with starts/ends (byte offsets) and numbers [NaN, 1.5, 24, -1, 1843.2];
 * nonNumericTokens() is 1 (the device name). Results live in scratch arrays shared
 * by every row, so rows allocate nothing but the device name.
 */
import { MAX_COLUMNS } from './iostat-run.ts';
import { parseIostatNumber } from './numbers.ts';

/** Tokens a row may have: every column, a device name, a mount point and a few tty/cpu values. */
export const MAX_TOKENS = MAX_COLUMNS + 8;

/** Byte offsets of each token of the last tokenize(), start inclusive, end exclusive. */
export const starts = new Int32Array(MAX_TOKENS + 1);
export const ends = new Int32Array(MAX_TOKENS + 1);
/** The value of each token of the last tokenize(); NaN where it is no number. */
export const numbers = new Float64Array(MAX_TOKENS + 1);
/** Tokens of the last tokenize() that are not numbers. */
let nonNumeric = 0;

const POWERS_OF_TEN = Float64Array.from({ length: 16 }, (_, k) => 10 ** k);

export function nonNumericTokens(): number {
  return nonNumeric;
}

/** How many of the tokens of the last tokenize() are numbers. */
export function countNumeric(count: number): number {
  let numeric = 0;
  for (let i = 0; i < count && i < MAX_TOKENS; i++) if (!Number.isNaN(numbers[i])) numeric++;
  return numeric;
}

/**
 * Split bytes [from, to) of a line on blanks and read each token as a plain
 * decimal number (`12.5`, `12,5`, `-1`) where it is one, NaN where it is not.
 * Token offsets are absolute positions in buf. Returns the token count,
 * MAX_TOKENS + 1 if there are more. Where `needed` is 0 for a token position,
 * the token is only checked to look like a number (summaries that never read it).
 *
 * It reads no byte outside [from, to) (a line decoded into a buffer of its own
 * and ending in a digit, such as a time stamp, was read one past its end, which
 * makes V8 compile every read here to allow for `undefined`), counts digits from
 * positions, and tests a digit with one unsigned comparison.
 */
export function tokenize(buf: Uint8Array, from: number, to: number, needed?: Uint8Array): number {
  let count = 0;
  let i = from;
  nonNumeric = 0;
  for (;;) {
    // Blanks between tokens, in a loop of their own: sysstat pads columns with up to a dozen.
    let c = 32;
    while (i < to && ((c = buf[i]!) === 32 || c === 9)) i++;
    if (i >= to) break;
    // Too many to be a row; nonNumeric counts the words so far, so no caller reads the previous line's.
    if (count === MAX_TOKENS) return MAX_TOKENS + 1;
    const start = i;
    starts[count] = start;
    if (needed !== undefined && needed[count] === 0) {
      i = skipToken(buf, start, to, count);
      ends[count++] = i;
      continue;
    }
    const negative = c === 45;
    if (negative) i++;
    // Integer digits, then fraction digits after one `.` or `,`; anything else: not plain.
    // c is the byte after the digits, a blank (32) at the end of the line.
    let mantissa = 0;
    const integerStart = i;
    for (c = 32; i < to && ((c = buf[i]!) - 48) >>> 0 <= 9; i++) mantissa = mantissa * 10 + (c - 48);
    if (i === to) c = 32;
    let digits = i - integerStart;
    let value = NaN;
    if (c === 32 || c === 9) {
      if (digits > 0 && digits < 16) value = mantissa;
    } else if (c === 46 || c === 44) {
      const fractionStart = ++i;
      for (c = 32; i < to && ((c = buf[i]!) - 48) >>> 0 <= 9; i++) mantissa = mantissa * 10 + (c - 48);
      if (i === to) c = 32;
      const fraction = i - fractionStart;
      digits += fraction;
      // mantissa / 10^k with both exact is the correctly rounded value, as Number() gives.
      if ((c === 32 || c === 9) && digits > 0 && digits < 16) value = mantissa / POWERS_OF_TEN[fraction]!;
    }
    if (value !== value) {
      while (i < to && (c = buf[i]!) !== 32 && c !== 9) i++;
      value = unusualNumber(buf, start, i);
    } else if (negative) value = -value;
    ends[count] = i;
    numbers[count++] = value;
  }
  return count;
}

/** A token nobody reads: its end, with its value 0 if it looks like a number and NaN (a word) if not. */
function skipToken(buf: Uint8Array, start: number, to: number, count: number): number {
  const numberLike = isNumberStart(buf[start]!);
  let i = start + 1;
  let c: number;
  while (i < to && (c = buf[i]!) !== 32 && c !== 9) i++;
  if (!numberLike) nonNumeric++;
  numbers[count] = numberLike ? 0 : NaN;
  return i;
}

/** Suffixed (--human 1.2k, 45%), exponent or very long numbers; NaN (counted as a word) for device names and words. */
function unusualNumber(buf: Uint8Array, start: number, end: number): number {
  const value = isNumberStart(buf[start]!) && end - start >= 2 ? parseIostatNumber(latin1(buf, start, end)) : NaN;
  if (value !== value) nonNumeric++;
  return value;
}

function latin1(buf: Uint8Array, start: number, end: number): string {
  return Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString('latin1');
}

/** A digit, sign or decimal point: the only ways a number (plain or --human) starts. */
function isNumberStart(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 44;
}
