/**
 * Timestamps as benchmark tools print them, to ISO 8601. Times without a zone stay
 * without one (`2020-04-03T21:10:13`): the log does not say where it was taken.
 *   date(1)/ctime form   Thu APR  3 21:10:13 2020   Mon Jan 15 10:00:01 PST 2024
 *   sysstat locale form  01/15/2024 10:00:01 AM     15.01.2024 10:00:01   01/15/24 10:00:01
 *   ISO (S_TIME_FORMAT)  2024-01-15T10:00:01+0100   2024-01-15 10:00:01
 *   epoch seconds        1705309201  (Solaris iostat -T u)
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const CTIME = /^(?:[A-Za-z]{3},?\s+)?([A-Za-z]{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})(?:\s+([A-Z]{2,5}))?\s+(\d{4})$/;
const SLASHED = /^(\d{1,2})([/.])(\d{1,2})\2(\d{2}|\d{4})\s+(\d{1,2}):(\d{2}):(\d{2})(?:\s*([AaPp][Mm]))?$/;
const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?$/;
const EPOCH = /^\d{9,10}$/;

const pad = (n: number) => String(n).padStart(2, '0');

function iso(year: number, month: number, day: number, h: number, m: number, s: number, zone = ''): string | undefined {
  if (month < 1 || month > 12 || day < 1 || day > 31 || h > 23 || m > 59 || s > 60) return undefined;
  return `${year}-${pad(month)}-${pad(day)}T${pad(h)}:${pad(m)}:${pad(s)}${zone}`;
}

/** The ISO 8601 form of a whole-line timestamp, or undefined if the text is not one. */
export function parseTimestamp(text: string): string | undefined {
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
  if (EPOCH.test(t)) return new Date(Number(t) * 1000).toISOString().replace('.000Z', 'Z');
  return undefined;
}
