/** Message text from user input (shared/printable.ts): escaped, cut, unicode kept. */
import { describe, expect, it } from 'vitest';
import { hasUnsafeCharacters, printable, printableJson, withoutUnsafeCharacters } from '../../shared/printable.ts';

describe('printable', () => {
  it('escapes control characters, DEL, C1 and bidi overrides; keeps unicode', () => {
    expect(printable('a\u001b[31mb\u0007\t\r\n\u007f\u0085 é€𝄞 \u202eexe.txt')).toBe(
      'a\\x1b[31mb\\x07\\t\\r\\n\\x7f\\x85 é€𝄞 \\u202eexe.txt',
    );
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

describe('printableJson', () => {
  const value = {
    context: ['iostat \u001b[2J\u0007', 'csi \u009b31m del \u007f', 'exe\u202etxt.sh'],
    lone: 'x\ud800',
    plain: 'café 𝄞',
  };

  it('writes no character printable() would escape, yet parses back to the same value', () => {
    const text = printableJson(value, 2);
    expect(hasUnsafeCharacters(text.replaceAll('\n', ''))).toBe(false);
    expect(JSON.parse(text)).toEqual(value);
    expect(text).toContain('"csi \\u009b31m del \\u007f"');
    expect(text).toContain('"exe\\u202etxt.sh"');
  });

  it('keeps the indentation and the text JSON.stringify gives where nothing needs escaping', () => {
    const safe = { a: ['café 𝄞', 1], b: { c: null } };
    expect(printableJson(safe, 2)).toBe(JSON.stringify(safe, null, 2));
    expect(printableJson(safe)).toBe(JSON.stringify(safe));
  });
});
