/**
 * Numbers as iostat prints them: `12.5`, `12,5` (decimal comma locales), `-`,
 * and sysstat's --human forms `1.2k`, `3.4M`, `45.0%`.
 */

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
