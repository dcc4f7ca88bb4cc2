/**
 * Device labels and tags of an upload (README, "Upload conventions"). The label comes from,
 * in order: the object's `device` metadata, the key's first folder, the file
 * itself (diskperf test name, iostat host). iostat series are `<label>/<native>`.
 * Tags come from `tags` metadata: `interface=SAS;rpm=10000;medium=hdd`.
 * S3 returns metadata values with characters outside ASCII as RFC 2047 encoded
 * words (`=?UTF-8?B?...?=`): they are decoded first. Messages quote what the user
 * sent with control characters escaped.
 *
 * Names are normalised once, by normaliseName, wherever a label is made (cleanLabel,
 * seriesLabel): two names that look the same are the same label.
 */
import { printable, withoutUnsafeCharacters } from './printable.ts';

/** Labels and tag parts stay printable and bounded: they become keys and selector targets. */
export const MAX_LABEL_LENGTH = 128;
/**
 * Separates the parts of every table key (shared/store/keys.ts builds them with
 * it). No label, tag or device pattern holds it, so a value from a user can only
 * ever be the last part of a key whose prefix the code chose.
 */
export const KEY_SEPARATOR = '#';
/** What no label, tag or device pattern may hold: control characters and the table's key separator. */
export const FORBIDDEN_IN_LABELS = new RegExp(`[\\u0000-\\u001f\\u007f${KEY_SEPARATOR}]`);
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 64;

export class LabelError extends Error {
  override readonly name = 'LabelError';
}

/**
 * Characters that show nothing: Unicode format characters (Cf: zero-width space and
 * joiners, soft hyphen, byte-order mark, bidi controls) and the other
 * default-ignorable code points (Hangul fillers, variation selectors).
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * A name as benchdrop keeps it: control and invisible characters removed, composed
 * (NFC: `e` + combining accent is `é`), every run of whitespace (the no-break spaces
 * included) one space, trimmed. Look-alikes (`sas10k` with a zero-width space) become
 * the same name. Idempotent.
 */
export function normaliseName(raw: string): string {
  return withoutLookAlikes(withoutUnsafeCharacters(raw)).replace(/\s+/gu, ' ').trim();
}

/**
 * Text with what makes look-alikes removed (invisible characters) and composed (NFC): a selector
 * meets names on these terms.
 */
export function withoutLookAlikes(text: string): string {
  return text.replace(INVISIBLE, '').normalize('NFC');
}

/** A label, normalised (normaliseName); undefined if nothing is left. */
export function cleanLabel(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const cleaned = normaliseName(raw);
  if (cleaned.length === 0) return undefined;
  if (cleaned.length > MAX_LABEL_LENGTH)
    throw new LabelError(`device label "${printable(cleaned, 40)}" is longer than ${MAX_LABEL_LENGTH} characters`);
  if (cleaned.includes(KEY_SEPARATOR))
    throw new LabelError(
      `device label "${printable(cleaned, 40)}" contains "${KEY_SEPARATOR}", ` +
        'which benchdrop keeps for its table keys; choose a label without it',
    );
  return cleaned;
}

/** The label an object gives all its runs, if it gives one (metadata, else first folder). */
export function labelFromObject(key: string, metadata: Record<string, string | undefined>): string | undefined {
  const fromMetadata = cleanLabel(decodeMetadataValue(metadata['device']));
  if (fromMetadata !== undefined) return fromMetadata;
  const slash = key.indexOf('/');
  return slash > 0 ? cleanLabel(key.slice(0, slash)) : undefined;
}

/** The label a run gives itself when the object gives none. */
export function labelFromRun(runName: string, key: string): string {
  try {
    return cleanLabel(runName) ?? cleanLabel(baseName(key)) ?? 'unlabelled';
  } catch (error) {
    // The name comes from the log (or the file name): say how to label the upload instead.
    if (error instanceof LabelError)
      throw new LabelError(
        `${error.message} (taken from the log itself: ` +
          'give the upload a device label, x-amz-meta-device or a first folder in the key)',
      );
    throw error;
  }
}

function baseName(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  return name.replace(/(\.gz)?$/i, '').replace(/\.[^.]*$/, '') || name;
}

/** What stands for the key separator in a device name that holds one (`c1#t1d0` is listed as `c1_t1d0`). */
export const SEPARATOR_STAND_IN = '_';

/**
 * A device name as it stands in a series label: normalised like a label, the key
 * separator replaced by SEPARATOR_STAND_IN. The series keeps the name as printed
 * (its `native`); only the label changes.
 */
export function nativeInLabel(native: string): string {
  return normaliseName(native).replaceAll(KEY_SEPARATOR, SEPARATOR_STAND_IN);
}

/** The name of one iostat series: the run's label and the device as the OS calls it (nativeInLabel). */
export function seriesLabel(label: string, native: string): string {
  return `${normaliseName(label)}/${nativeInLabel(native)}`;
}

/**
 * The labels a series label may be filed under: each part before a `/`
 * (`lab/x4100/sda` is `lab`'s series `x4100/sda` or `lab/x4100`'s `sda`).
 */
export function uploadLabelsOf(label: string): string[] {
  const labels: string[] = [];
  for (let i = label.indexOf('/'); i > 0; i = label.indexOf('/', i + 1)) labels.push(label.slice(0, i));
  return labels;
}

const TAG_PART = /^[A-Za-z0-9_.:+@/-]+$/;
/** The characters a tag key or value is made of, as messages say it. */
export const TAG_PART_CHARACTERS = 'letters, digits and _ . : + @ / -';

/** Whether text can be a tag key or value: 1-MAX_TAG_LENGTH of TAG_PART_CHARACTERS (tag grammar, defined here once). */
export function isTagPart(part: string): boolean {
  return part.length > 0 && part.length <= MAX_TAG_LENGTH && TAG_PART.test(part);
}

/** Tags as the `tags` metadata writes them: `interface=SAS;rpm=10000` (parseTags reads it back). */
export function formatTags(tags: Readonly<Record<string, string>>): string {
  return Object.entries(tags)
    .map(([key, value]) => `${key}=${value}`)
    .join(';');
}
/**
 * Keys an object literal would not keep as they are (`__proto__` sets the prototype) or that every
 * object already has.
 */
const RESERVED_TAG_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * `interface=SAS;rpm=10000` -> { interface: 'SAS', rpm: '10000' }; LabelError says what is wrong (a
 * key given twice, a reserved key, a bad character).
 */
export function parseTags(encoded: string | undefined): Record<string, string> {
  const tags: Record<string, string> = {};
  const raw = decodeMetadataValue(encoded);
  if (raw === undefined || raw.trim() === '') return tags;
  const pairs = raw
    .split(/[;,]/)
    .map((p) => p.trim())
    .filter(Boolean);
  if (pairs.length > MAX_TAGS) throw new LabelError(`${pairs.length} tags; at most ${MAX_TAGS} are kept per upload`);
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw new LabelError(`tag "${printable(pair, 80)}" is not key=value (expected e.g. interface=SAS;rpm=10000)`);
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    for (const part of [key, value]) {
      if (!isTagPart(part)) {
        throw new LabelError(
          `tag "${printable(pair, 80)}": keys and values are 1-${MAX_TAG_LENGTH} characters of ${TAG_PART_CHARACTERS}`,
        );
      }
    }
    if (RESERVED_TAG_KEYS.has(key))
      throw new LabelError(`tag key "${key}" is reserved (${[...RESERVED_TAG_KEYS].join(', ')}); choose another key`);
    if (Object.hasOwn(tags, key))
      throw new LabelError(`tag key "${key}" given twice (${key}=${tags[key]}, ${key}=${value}); give each key once`);
    tags[key] = value;
  }
  return tags;
}

// =?charset?B|Q?text?= (RFC 2047); S3 writes UTF-8 as B (base64) words.
const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

/**
 * A metadata value as the user wrote it: RFC 2047 encoded words decoded (S3 returns
 * non-ASCII metadata that way), the whitespace between two adjacent words dropped.
 * A word in a charset Node cannot decode is left as it is.
 */
export function decodeMetadataValue(value: string | undefined): string | undefined {
  if (value === undefined || !value.includes('=?')) return value;
  const joined = value.replace(/(\?=)\s+(?==\?)/g, '$1');
  return joined.replace(ENCODED_WORD, (word, charset: string, encoding: string, text: string) => {
    let bytes: Buffer;
    if (encoding.toUpperCase() === 'B') bytes = Buffer.from(text, 'base64');
    else
      bytes = Buffer.from(
        text
          .replace(/_/g, ' ')
          .replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
        'latin1',
      );
    try {
      return new TextDecoder(charset.toLowerCase()).decode(bytes);
    } catch {
      return word;
    }
  });
}
