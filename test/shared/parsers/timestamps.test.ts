/**
 * Timestamps (shared/parsers/timestamps.ts): every printed form to ISO 8601, and
 * dates that cannot be (out of their month, out of the day, out of 1970-2100)
 * told apart from lines that are no timestamp at all.
 */
import { describe, expect, it } from 'vitest';
import { parseTimestamp, readTimestamp, YEARS } from '../../../shared/parsers/timestamps.ts';

describe('valid timestamps', () => {
  it.each([
    ['Thu APR  3 21:10:13 2020', '2020-04-03T21:10:13'],
    ['Mon Jan 15 10:00:01 UTC 2024', '2024-01-15T10:00:01Z'],
    ['01/15/2024 10:00:01 PM', '2024-01-15T22:00:01'],
    ['15.01.2024 10:00:01', '2024-01-15T10:00:01'],
    ['2024-02-29T10:00:01+0100', '2024-02-29T10:00:01+01:00'],
    ['1705309201', '2024-01-15T09:00:01Z'],
  ])('%s is %s', (text, iso) => {
    expect(readTimestamp(text)).toEqual({ iso });
    expect(parseTimestamp(text)).toBe(iso);
  });
});

describe('timestamps whose date cannot be', () => {
  it.each([
    ['Sun FEB 30 21:10:13 2020', 'no February 30'],
    ['2023-02-29 10:00:01', 'no February 29'],
    ['04/31/2024 10:00:01', 'no April 31'],
    ['13/45/2024 10:00:06 AM', 'month 45'],
    ['2024-13-01 10:00:01', 'month 13'],
    ['Thu APR  3 25:10:13 2020', 'no time 25:10:13'],
    ['2024-01-15 10:61:00', 'no time 10:61:00'],
    ['Thu APR  3 21:10:13 2150', `year 2150 is outside ${YEARS.first}-${YEARS.last}`],
    ['Jan  1 00:00:00 1969', `year 1969 is outside ${YEARS.first}-${YEARS.last}`],
    ['9999999999', `year 2286 is outside ${YEARS.first}-${YEARS.last}`],
  ])('%s: %s', (text, invalid) => {
    expect(readTimestamp(text)).toEqual({ invalid });
    expect(parseTimestamp(text)).toBeUndefined();
  });

  it('lines of another shape are no timestamp at all', () => {
    for (const text of ['tunefs -a 16 /opt', 'Thu APX  3 21:10:13 2020', '12345678', ''])
      expect(readTimestamp(text)).toBeUndefined();
  });
});
