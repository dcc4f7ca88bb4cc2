/**
 * Labels and tags from S3 metadata (shared/labels.ts): RFC 2047 encoded words as
 * S3 returns non-ASCII metadata, control characters removed from labels and
 * escaped in messages, the limits named; names normalised once (invisible
 * characters, composition, spacing), `#` kept out of series labels, tags that
 * would lose a value refused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  cleanLabel,
  decodeMetadataValue,
  labelFromObject,
  labelFromRun,
  LabelError,
  MAX_LABEL_LENGTH,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  nativeInLabel,
  normaliseName,
  parseTags,
  seriesLabel,
} from '../../shared/labels.ts';
import type { IostatRun } from '../../shared/model.ts';
import { parseText } from '../../shared/parsers/index.ts';
import { KEY_SEPARATOR } from '../../shared/store/keys.ts';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('RFC 2047 metadata values', () => {
  it.each([
    [`=?UTF-8?B?${b64('Müller disk')}?=`, 'Müller disk'],
    ['=?UTF-8?Q?M=C3=BCller_disk?=', 'Müller disk'],
    ['=?utf-8?q?caf=C3=A9?=', 'café'],
    ['=?ISO-8859-1?Q?caf=E9?=', 'café'],
    [`=?UTF-8?B?${b64('日本')}?= =?UTF-8?B?${b64('語')}?=`, '日本語'],
    ['plain=value', 'plain=value'],
    ['=?x-unknown-charset?B?AAAA?=', '=?x-unknown-charset?B?AAAA?='],
  ])('%s reads %s', (encoded, decoded) => {
    expect(decodeMetadataValue(encoded)).toBe(decoded);
  });

  it('a device label is decoded, and control characters it hid are removed', () => {
    expect(labelFromObject('k.txt', { device: `=?UTF-8?B?${b64('disk\u001b[31m\nevil\u202e')}?=` })).toBe(
      'disk[31mevil',
    );
  });

  it('tags are decoded before they are checked', () => {
    expect(parseTags(`=?UTF-8?B?${b64('interface=SAS;rpm=10000')}?=`)).toEqual({ interface: 'SAS', rpm: '10000' });
  });
});

describe('limits and messages', () => {
  it('names the limits', () => {
    expect(() => labelFromObject('k', { device: 'd'.repeat(MAX_LABEL_LENGTH + 1) })).toThrow(
      `is longer than ${MAX_LABEL_LENGTH} characters`,
    );
    expect(() => parseTags(`a=${'x'.repeat(MAX_TAG_LENGTH + 1)}`)).toThrow(`1-${MAX_TAG_LENGTH} characters`);
    expect(() => parseTags(Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}=a`).join(';'))).toThrow(
      `${MAX_TAGS + 1} tags; at most ${MAX_TAGS}`,
    );
  });

  it('messages show control characters escaped', () => {
    expect(() => parseTags('ok=1;bad=va\tl\u001bue')).toThrow(
      new LabelError(
        'tag "bad=va\\tl\\x1bue": keys and values are 1-64 characters of letters, digits and _ . : + @ / -',
      ),
    );
    expect(() => parseTags('no-equals\u0007')).toThrow(
      new LabelError('tag "no-equals\\x07" is not key=value (expected e.g. interface=SAS;rpm=10000)'),
    );
  });
});

describe('look-alike names are one label', () => {
  it.each([
    ['a zero-width space', 'sas\u200b10k', 'sas10k'],
    ['a zero-width joiner and a word joiner', 'sas\u200d10\u2060k', 'sas10k'],
    ['a soft hyphen', 'sas\u00ad10k', 'sas10k'],
    ['a byte-order mark', '\ufeffsas10k', 'sas10k'],
    ['a Hangul filler and a variation selector', 'sas\u316410k\ufe0f', 'sas10k'],
    ['a bidi override', 'sas10k\u202e', 'sas10k'],
    ['an e with a combining accent (NFD)', 'cafe\u0301 disk', 'caf\u00e9 disk'],
    ['a no-break space', 'sas\u00a010k', 'sas 10k'],
    ['a narrow no-break space, a figure space and an ideographic space', 'sas\u202f\u2007\u300010k', 'sas 10k'],
    ['tabs and runs of spaces', '  sas \t  10k  ', 'sas 10k'],
  ])('%s', (_what, raw, label) => {
    expect(cleanLabel(raw)).toBe(label);
    expect(labelFromObject('k.txt', { device: raw })).toBe(label);
    expect(seriesLabel(raw, 'sda')).toBe(`${label}/sda`);
    expect(seriesLabel('x', raw)).toBe(`x/${label}`);
  });

  it('a name of nothing but invisible characters is no label', () => {
    expect(cleanLabel('\u200b\u200c\ufeff')).toBeUndefined();
    expect(labelFromRun('\u200b', 'folder/run 1.txt')).toBe('run 1');
  });

  it('normalising is idempotent and leaves no invisible, control or doubled whitespace character', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.oneof(
            fc.constantFrom('\u200b', '\u00a0', '\u0301', '\u001b', '\ud800', ' ', '\t', 'e', '#'),
            fc.string({ unit: 'binary', maxLength: 1 }),
          ),
          maxLength: 30,
        }),
        (raw) => {
          const once = normaliseName(raw);
          expect(normaliseName(once)).toBe(once);
          expect(once).not.toMatch(/[\p{Cf}\p{Cc}\p{Cs}]|\s{2}|^\s|\s$|[^\S ]/u);
          expect(once).toBe(once.normalize('NFC'));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('"#" in a device name', () => {
  const LOG = [
    'extended device statistics',
    'r/s w/s kr/s kw/s wait actv wsvc_t asvc_t %w %b device',
    '1.0 2.0 3.0 4.0 0.0 0.0 0.1 0.2 0 1 c1#t1d0',
    '1.0 2.0 3.0 4.0 0.0 0.0 0.1 0.2 0 1 c1t2d0',
  ].join('\n');

  it('the series keeps the name as printed; its label has "_" for "#", and no "#" at all', async () => {
    const run = (await parseText(LOG)).runs[0] as IostatRun;
    expect(run.series.map((s) => s.device)).toEqual(['c1#t1d0', 'c1t2d0']);
    const labels = run.series.map((s) => seriesLabel('x4100', s.device));
    expect(labels).toEqual(['x4100/c1_t1d0', 'x4100/c1t2d0']);
    for (const label of labels) expect(label).not.toContain(KEY_SEPARATOR);
    expect(nativeInLabel('a##b')).toBe('a__b');
  });

  it('a second device of the run that would be listed under the same label is skipped with a warning', async () => {
    const log = `${LOG}\n1.0 2.0 3.0 4.0 0.0 0.0 0.1 0.2 0 1 c1_t1d0\n1.0 2.0 3.0 4.0 0.0 0.0 0.1 0.2 0 1 c1t2\u200bd0`;
    const run = (await parseText(log)).runs[0] as IostatRun;
    expect(run.series.map((s) => s.device)).toEqual(['c1#t1d0', 'c1t2d0']);
    expect(run.warnings.map((w) => [w.line, w.message])).toEqual([
      [
        5,
        'device "c1_t1d0" would be listed as "c1_t1d0", as device "c1#t1d0" already is; row skipped (the two names differ only in invisible characters, spacing or "#")',
      ],
      [
        6,
        'device "c1t2\u200bd0" would be listed as "c1t2d0", as device "c1t2d0" already is; row skipped (the two names differ only in invisible characters, spacing or "#")',
      ],
    ]);
  });

  it('a device name of nothing but invisible characters is skipped', async () => {
    const log = `${LOG}\n1.0 2.0 3.0 4.0 0.0 0.0 0.1 0.2 0 1 \u200b\u2060`;
    const run = (await parseText(log)).runs[0] as IostatRun;
    expect(run.series).toHaveLength(2);
    expect(run.warnings.map((w) => w.message)).toEqual([
      'device name "\u200b\u2060" has no visible characters; row skipped',
    ]);
  });
});

describe('tags that would lose what was written are refused', () => {
  it('a key given twice, with the key and both values named', () => {
    expect(() => parseTags('rpm=1;rpm=2')).toThrow(
      new LabelError('tag key "rpm" given twice (rpm=1, rpm=2); give each key once'),
    );
    expect(() => parseTags('interface=SAS, medium=hdd, interface=SAS')).toThrow('tag key "interface" given twice');
  });

  it.each(['__proto__', 'constructor', 'prototype'])('the reserved key %s', (key) => {
    expect(() => parseTags(`a=1;${key}=x`)).toThrow(
      new LabelError(`tag key "${key}" is reserved (__proto__, constructor, prototype); choose another key`),
    );
  });

  it('keys that differ are all kept, as own properties', () => {
    const tags = parseTags('rpm=1;RPM=2;proto=3');
    expect(tags).toEqual({ rpm: '1', RPM: '2', proto: '3' });
    expect(Object.getPrototypeOf(tags)).toBe(Object.prototype);
  });
});
