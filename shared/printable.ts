/**
 * Text from a user's file, key or metadata, made safe to put in a message that
 * a person reads in a terminal, a log or a web page: control characters (which
 * can move the cursor, clear the screen or end a log line) and the bidirectional
 * overrides (which can make `exe.txt` read as `txt.exe`) are written as escapes,
 * and long text is cut. Printable text, unicode included, is left as it is.
 */

// C0 controls, which JSON.stringify escapes by itself inside strings.
const C0 = '\\u0000-\\u001f';
// DEL, C1 controls, bidi marks, embeddings, overrides and isolates.
const BEYOND_C0 = '\\u007f-\\u009f\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
// And (in `u` mode a pair is one code point) surrogates that are not part of a pair.
const UNSAFE = new RegExp(`[${C0}${BEYOND_C0}\\ud800-\\udfff]`, 'gu');
// What JSON.stringify leaves raw inside strings: the rest of UNSAFE (it escapes lone surrogates too).
const UNSAFE_IN_JSON = new RegExp(`[${BEYOND_C0}]`, 'g');
const NAMED: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function escape(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : unicodeEscape(char);
}

function unicodeEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` with unsafe characters escaped (`\x1b`, `\n`, `\u202e`), cut to `max` characters (with `...`) when given. */
export function printable(text: string, max?: number): string {
  const cut = max !== undefined && text.length > max ? `${text.slice(0, max)}...` : text;
  return cut.replace(UNSAFE, escape);
}

/** Whether `text` holds a character printable() would escape. */
export function hasUnsafeCharacters(text: string): boolean {
  UNSAFE.lastIndex = 0;
  const found = UNSAFE.test(text);
  UNSAFE.lastIndex = 0;
  return found;
}

/** `text` without the characters printable() would escape (for labels, which are names, not quotes). */
export function withoutUnsafeCharacters(text: string): string {
  return text.replace(UNSAFE, '');
}

/**
 * `value` as JSON (JSON.stringify, indented by `space`) in which no character
 * printable() would escape stands raw: inside strings they are `\u` escapes, so
 * the text parses back to the same value and is safe to print.
 */
export function printableJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(UNSAFE_IN_JSON, unicodeEscape);
}
