/** Item keys (shared/store/keys.ts) stay within DynamoDB's key limits whatever the S3 key. */
import { describe, expect, it } from 'vitest';
import { boundedSortKey, MAX_SORT_KEY_BYTES, statusSk } from '../../../shared/store/keys.ts';

describe('statusSk', () => {
  it('is the plain key for ordinary keys', () => {
    expect(statusSk('2024-01-01T00:00:00.000Z', 'b', 'dir/log.txt', 'v1')).toBe(
      '2024-01-01T00:00:00.000Z#b/dir/log.txt#v1',
    );
  });

  it('stays within 1,024 bytes for a 1,024-byte key of 4-byte characters, keeps its time order and tells keys apart', () => {
    const key = (last: string) => `${'𝄞'.repeat(254)}x${last}.t`;
    const a = statusSk('2024-01-01T00:00:00.000Z', 'bucket', key('a'), 'etag.0001');
    const b = statusSk('2024-01-01T00:00:00.000Z', 'bucket', key('b'), 'etag.0001');
    expect(Buffer.byteLength(key('a'))).toBe(1020);
    expect(Buffer.byteLength(a)).toBeLessThanOrEqual(MAX_SORT_KEY_BYTES);
    expect(a.startsWith('2024-01-01T00:00:00.000Z#bucket/𝄞')).toBe(true);
    expect(a).not.toBe(b);
    // Cut between characters, never inside a surrogate pair.
    expect(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(a)).toBe(false);
  });

  it('boundedSortKey leaves short text alone', () => {
    expect(boundedSortKey('abc')).toBe('abc');
  });
});
