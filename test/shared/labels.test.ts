/**
 * Labels and tags from S3 metadata (shared/labels.ts): RFC 2047 encoded words as
 * S3 returns non-ASCII metadata, control characters removed from labels and
 * escaped in messages, the limits named.
 */
import { describe, expect, it } from 'vitest';
import { decodeMetadataValue, labelFromObject, LabelError, MAX_LABEL_LENGTH, MAX_TAG_LENGTH, MAX_TAGS, parseTags } from '../../shared/labels.ts';

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
    expect(labelFromObject('k.txt', { device: `=?UTF-8?B?${b64('disk\u001b[31m\nevil\u202e')}?=` })).toBe('disk[31mevil');
  });

  it('tags are decoded before they are checked', () => {
    expect(parseTags(`=?UTF-8?B?${b64('interface=SAS;rpm=10000')}?=`)).toEqual({ interface: 'SAS', rpm: '10000' });
  });
});

describe('limits and messages', () => {
  it('names the limits', () => {
    expect(() => labelFromObject('k', { device: 'd'.repeat(MAX_LABEL_LENGTH + 1) })).toThrow(`is longer than ${MAX_LABEL_LENGTH} characters`);
    expect(() => parseTags(`a=${'x'.repeat(MAX_TAG_LENGTH + 1)}`)).toThrow(`1-${MAX_TAG_LENGTH} characters`);
    expect(() => parseTags(Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}=a`).join(';'))).toThrow(`${MAX_TAGS + 1} tags; at most ${MAX_TAGS}`);
  });

  it('messages show control characters escaped', () => {
    expect(() => parseTags('ok=1;bad=va\tl\u001bue')).toThrow(new LabelError('tag "bad=va\\tl\\x1bue": keys and values are 1-64 characters of letters, digits and _ . : + @ / -'));
    expect(() => parseTags('no-equals\u0007')).toThrow(new LabelError('tag "no-equals\\x07" is not key=value (expected e.g. interface=SAS;rpm=10000)'));
  });
});
