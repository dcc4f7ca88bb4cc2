/**
 * Numbers as iostat prints them: `12.5`, `12,5` (decimal comma locales), `-`,
 * and sysstat's --human forms `1.2k`, `3.4M`, `45.0%`.
 *
 *   parseIostatNumber('12,5') -> 12.5    parseIostatNumber('1.8M') -> 1843.2    parseIostatNumber('sda') -> NaN
 */

/**
 * No disk does 10^15 of anything per second (kB/s, MB/s, IOPS) or waits 10^15 ms:
 * a value this large is a broken counter or a damaged log, and it would break
 * sums (1e308 + 1e308 is Infinity) and storage (DynamoDB numbers end at 1e126).
 */
export const MAX_VALUE = 1e15;

/** A count or size printed as digits, if it is a whole number JavaScript holds exactly. */
export function wholeNumber(digits: string): number | undefined {
  const value = Number(digits);
  return /^\d+$/.test(digits) && Number.isSafeInteger(value) ? value : undefined;
}

/** Why a measured value is not one (negative, absurdly large, not a number), or undefined if it is fine. */
export function valueProblem(value: number, what: string): string | undefined {
  if (value !== value) return 'is not a number';
  if (value < 0) return `is ${value}, and ${what} cannot be negative`;
  if (value >= MAX_VALUE) return `is ${value}, more than any disk does (values stay under ${MAX_VALUE})`;
  return undefined;
}

// sysstat --human suffixes sizes in powers of 1024 counted from kilobytes, and only
// size columns (kB, kB/s) carry them: `1.8M` under kB_wrtn/s is 1843.2 kB/s.
const SUFFIX: Record<string, number> = { k: 1, K: 1, M: 1024, G: 1024 ** 2, T: 1024 ** 3, P: 1024 ** 4, E: 1024 ** 5 };

const PLAIN = /^[-+]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][-+]?\d+)?$/;
const HUMAN = /^([-+]?(?:\d+(?:[.,]\d*)?|[.,]\d+))([kKMGTPE]|%)B?$/;

/** The value of an iostat token, or NaN if it is not a number. */
export function parseIostatNumber(token: string): number {
  if (PLAIN.test(token)) return Number(token.replace(',', '.'));
  const human = HUMAN.exec(token);
  if (human) {
    const value = Number(human[1]!.replace(',', '.'));
    return human[2] === '%' ? value : value * SUFFIX[human[2]!]!;
  }
  return NaN;
}

/**
 * Two numbers that ran into each other because the first overflowed its column
 * (`12345.6123456.7`): split after the first one's `decimals` fraction digits.
 * Returns undefined if the token does not look like that.
 */
export function splitOverflow(token: string, decimals: number): string[] | undefined {
  if (decimals <= 0) return undefined;
  const parts: string[] = [];
  let rest = token;
  const pattern = new RegExp(`^-?\\d+[.,]\\d{${decimals}}`);
  while (rest.length > 0) {
    const match = pattern.exec(rest);
    if (!match) return undefined;
    parts.push(match[0]);
    rest = rest.slice(match[0].length);
  }
  return parts.length > 1 ? parts : undefined;
}
