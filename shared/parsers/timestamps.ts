/**
 * Timestamps as benchmark tools print them, to ISO 8601. Times without a zone stay
 * without one (`2020-04-03T21:10:13`): the log does not say where it was taken.
 *   date(1)/ctime form   Thu APR  3 21:10:13 2020   Mon Jan 15 10:00:01 PST 2024
 *   sysstat locale form  01/15/2024 10:00:01 AM     15.01.2024 10:00:01   01/15/24 10:00:01
 *   ISO (S_TIME_FORMAT)  2024-01-15T10:00:01+0100   2024-01-15 10:00:01
 *   epoch seconds        1705309201  (Solaris iostat -T u)
 * A line in one of these shapes whose date cannot be (February 30, hour 25, the
 * year 2150) is a timestamp that is wrong, not prose: readTimestamp says why.
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const CTIME =
  /^(?:[A-Za-z]{3},?\s+)?([A-Za-z]{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})(?:\s+([A-Z]{2,5}))?\s+(\d{4})$/;
const SLASHED = /^(\d{1,2})([/.])(\d{1,2})\2(\d{2}|\d{4})\s+(\d{1,2}):(\d{2}):(\d{2})(?:\s*([AaPp][Mm]))?$/;
const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?$/;
const EPOCH = /^\d{9,10}$/;

const pad = (n: number) => String(n).padStart(2, '0');

/** Benchmark logs from before 1970 or after 2100 are a clock that was wrong. */
export const YEARS = { first: 1970, last: 2100 } as const;
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** A timestamp: its ISO 8601 form, or why its date is impossible. */
export type Timestamp = { iso: string } | { invalid: string };

/** Seconds since 1970 (fio's `timestamp`) as ISO 8601, when they fall within YEARS; else undefined. */
export function epochSecondsIso(seconds: number): string | undefined {
  const ms = seconds * 1000;
  if (!Number.isFinite(ms)) return undefined;
  const year = new Date(Math.min(Math.max(ms, -8.64e15), 8.64e15)).getUTCFullYear();
  return year >= YEARS.first && year <= YEARS.last ? new Date(ms).toISOString() : undefined;
}

function iso(year: number, month: number, day: number, h: number, m: number, s: number, zone = ''): Timestamp {
  if (month < 1 || month > 12) return { invalid: `month ${month}` };
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > days) return { invalid: `no ${MONTH_NAMES[month - 1]} ${day}` };
  if (h > 23 || m > 59 || s > 60) return { invalid: `no time ${pad(h)}:${pad(m)}:${pad(s)}` };
  if (year < YEARS.first || year > YEARS.last)
    return { invalid: `year ${year} is outside ${YEARS.first}-${YEARS.last}` };
  return { iso: `${year}-${pad(month)}-${pad(day)}T${pad(h)}:${pad(m)}:${pad(s)}${zone}` };
}

/**
 * The ISO 8601 form of a whole-line timestamp, or undefined if the text is not one (or one with an
 * impossible date).
 */
export function parseTimestamp(text: string): string | undefined {
  const read = readTimestamp(text);
  return read !== undefined && 'iso' in read ? read.iso : undefined;
}

/** A whole-line timestamp, valid or not; undefined if the text does not have a timestamp's shape. */
export function readTimestamp(text: string): Timestamp | undefined {
  const t = text.trim();
  if (t.length < 8 || t.length > 40) return undefined;
  let m = CTIME.exec(t);
  if (m) {
    const month = MONTHS.indexOf(m[1]!.toLowerCase()) + 1;
    if (month === 0) return undefined;
    // Only UTC/GMT name an offset for sure; `CET`, `PST` and the like are ambiguous.
    const zone = m[6] === 'UTC' || m[6] === 'GMT' ? 'Z' : '';
    return iso(Number(m[7]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), zone);
  }
  m = ISO.exec(t);
  if (m) {
    const zone = m[7] === undefined ? '' : m[7] === 'Z' ? 'Z' : `${m[7].slice(0, 3)}:${m[7].slice(-2)}`;
    return iso(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), zone);
  }
  m = SLASHED.exec(t);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[3]);
    // Dotted dates are day-first (de_DE); slashed ones month-first (C, en_US) unless that cannot be.
    const [day, month] = m[2] === '.' || a > 12 ? [a, b] : [b, a];
    let year = Number(m[4]);
    if (year < 100) year += year < 70 ? 2000 : 1900;
    let hour = Number(m[5]);
    const ampm = m[8]?.toLowerCase();
    if (ampm === 'pm' && hour < 12) hour += 12;
    if (ampm === 'am' && hour === 12) hour = 0;
    return iso(year, month, day, hour, Number(m[6]), Number(m[7]));
  }
  if (EPOCH.test(t)) {
    const date = new Date(Number(t) * 1000);
    if (date.getUTCFullYear() > YEARS.last)
      return { invalid: `year ${date.getUTCFullYear()} is outside ${YEARS.first}-${YEARS.last}` };
    return { iso: date.toISOString().replace('.000Z', 'Z') };
  }
  return undefined;
}
