/** Message text from user input (shared/printable.ts): escaped, cut, unicode kept. */
import { describe, expect, it } from 'vitest';
import { hasUnsafeCharacters, printable, withoutUnsafeCharacters } from '../../shared/printable.ts';

describe('printable', () => {
  it('escapes control characters, DEL, C1 and bidi overrides; keeps unicode', () => {
    expect(printable('a\u001b[31mb\u0007\t\r\n\u007f\u0085 é€𝄞 \u202eexe.txt')).toBe('a\\x1b[31mb\\x07\\t\\r\\n\\x7f\\x85 é€𝄞 \\u202eexe.txt');
  });

  it('escapes a surrogate that is not part of a pair, keeps a pair', () => {
    expect(printable('x\ud800y\udc00z𝄞')).toBe('x\\ud800y\\udc00z𝄞');
  });

  it('cuts long text', () => {
    expect(printable('abcdef', 3)).toBe('abc...');
    expect(printable('abc', 3)).toBe('abc');
  });

  it('is idempotent: escaping escaped text changes nothing', () => {
    const once = printable('k\u0001\n');
    expect(printable(once)).toBe(once);
  });

  it('tells and strips what it would escape', () => {
    expect(hasUnsafeCharacters('plain ä')).toBe(false);
    expect(hasUnsafeCharacters('a\u0000')).toBe(true);
    expect(hasUnsafeCharacters('a\u0000')).toBe(true);
    expect(withoutUnsafeCharacters('di\u001bsk\u202e')).toBe('disk');
  });
});
