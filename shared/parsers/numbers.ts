/**
 * Numbers as iostat prints them: `12.5`, `12,5` (decimal comma locales), `-`,
 * and sysstat's --human forms `1.2k`, `3.4M`, `45.0%`.
 */

// sysstat --human scales by 1024 for sizes (k, M, G, T, P, E).
const SUFFIX: Record<string, number> = { k: 1024, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4, P: 1024 ** 5, E: 1024 ** 6 };

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
