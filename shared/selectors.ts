/**
 * The selector grammar of the API and CLI (README, "Comparing"), defined once.
 * A selector is comma-separated terms that must all hold:
 *
 *   device=GLOB     the device label (`sas10k`, `x4100/c0t*`); a bare word means this
 *   tag.KEY=VALUE   a tag of the upload (`tag.interface=SAS`)
 *   run=ID          one run
 *   host=GLOB       the host the log names
 *   format=diskperf|iostat|fio
 *   context~TEXT    a substring of the run's context lines (`context~tunefs -a 1`)
 *
 * Globs know `*` and `?`. A backslash before one of `, = ~ * ? \` makes that
 * character literal, so any label can be named exactly (`device=a\,b\*` is the
 * label `a,b*`); before any other character it is a backslash like any other
 * (`a\b` is still the label `a\b`). Terms are checked here, so a bad one is a
 * 400 naming what is allowed, never a query. Device and host patterns and tags
 * hold no control characters and no key separator (`#`): a pattern can only
 * become the tail of a DEVICE# key or a prefix within the DEVICES partition,
 * never reach another kind of item. `context~TEXT` may hold `#` (shell prompts
 * do): it is only ever compared with context lines in memory.
 */
import {
  FORBIDDEN_IN_LABELS,
  isTagPart,
  KEY_SEPARATOR,
  MAX_LABEL_LENGTH,
  MAX_TAG_LENGTH,
  TAG_PART_CHARACTERS,
  withoutLookAlikes,
} from './labels.ts';
import { FORMATS, isRunId, MAX_DEVICE_NAME_BYTES, RUN_ID_RULE, type Format } from './model.ts';

/**
 * A device or host pattern, compiled once. `glob` is what globMatches reads: `*`
 * and `?` are wildcards, a backslash makes the next character literal (the
 * parser writes `\*`, `\?` and `\\` for literal ones, nothing else escaped).
 */
export interface Pattern {
  glob: string;
  /** The label it names, when it has no wildcard. */
  exact?: string;
  /** The literal text before its first wildcard (all of it when exact): what a DEVICES query can begin_with. */
  prefix: string;
}

export type Term =
  | ({ kind: 'device' } & Pattern)
  | { kind: 'tag'; key: string; value: string }
  | { kind: 'run'; id: string }
  | ({ kind: 'host' } & Pattern)
  | { kind: 'format'; format: Format }
  | { kind: 'context'; text: string };

export interface Selector {
  text: string;
  terms: Term[];
}

/** What a selector is matched against: one diskperf run, or one iostat series of a run. */
export interface SelectorCandidate {
  device: string;
  runId: string;
  host?: string;
  format: Format;
  tags: Record<string, string>;
  context: readonly string[];
}

/**
 * The longest label there is: an iostat series, `<label>/<native>`. A pattern
 * may be as long, counting an escaped character once.
 */
export const MAX_PATTERN_LENGTH = MAX_LABEL_LENGTH + 1 + MAX_DEVICE_NAME_BYTES;
/**
 * Room for two terms naming the longest label exactly (`device=` and every character escaped) and
 * the comma between.
 */
export const MAX_SELECTOR_LENGTH = 2 * ('device='.length + 2 * MAX_PATTERN_LENGTH) + 1;
export const MAX_TERMS = 10;
export const SELECTOR_HELP =
  'comma-separated terms that must all hold: ' +
  `device=GLOB (or a bare GLOB), tag.KEY=VALUE, run=ID, host=GLOB, format=${FORMATS.join('|')}, context~TEXT; ` +
  'GLOB takes * and ? as wildcards, and a backslash makes the next , = ~ * ? or \\ literal ' +
  '(device=a\\,b\\* is the label "a,b*")';

export class SelectorError extends Error {
  override readonly name = 'SelectorError';
}

/** What a backslash makes literal: the selector's own separators and the wildcards (and itself). */
const ESCAPABLE = new Set([',', '=', '~', '*', '?', '\\']);
const WILDCARDS = new Set(['*', '?']);

/** One character of a selector, and whether a backslash before it made it literal. */
interface Char {
  c: string;
  escaped: boolean;
}

/** The characters of `text` with their escapes resolved (UTF-16 code units, as labels are measured). */
function readChars(text: string): Char[] {
  const out: Char[] = [];
  for (let i = 0; i < text.length; i++) {
    const next = text[i + 1];
    if (text[i] === '\\' && next !== undefined && ESCAPABLE.has(next)) {
      out.push({ c: next, escaped: true });
      i++;
    } else out.push({ c: text[i]!, escaped: false });
  }
  return out;
}

const textOf = (chars: readonly Char[]) => chars.map((ch) => ch.c).join('');
const isSyntax = (ch: Char, set: ReadonlySet<string>) => !ch.escaped && set.has(ch.c);

/** Without unescaped whitespace at either end (labels never start or end with any). */
function trimChars(chars: readonly Char[]): Char[] {
  let from = 0;
  let to = chars.length;
  while (from < to && /\s/.test(chars[from]!.c)) from++;
  while (to > from && /\s/.test(chars[to - 1]!.c)) to--;
  return chars.slice(from, to);
}

/** Split at every unescaped `separator`. */
function splitChars(chars: readonly Char[], separator: string): Char[][] {
  const parts: Char[][] = [[]];
  for (const ch of chars) {
    if (!ch.escaped && ch.c === separator) parts.push([]);
    else parts.at(-1)!.push(ch);
  }
  return parts;
}

export function parseSelector(text: string): Selector {
  // Names are kept without invisible characters and composed (labels.ts): so is what names them.
  const trimmed = withoutLookAlikes(text).trim();
  if (trimmed.length === 0) throw new SelectorError(`empty selector; expected ${SELECTOR_HELP}`);
  if (trimmed.length > MAX_SELECTOR_LENGTH)
    throw new SelectorError(`selector longer than ${MAX_SELECTOR_LENGTH} characters`);
  const parts = splitChars(readChars(trimmed), ',').map(trimChars);
  if (parts.length > MAX_TERMS) throw new SelectorError(`${parts.length} terms; at most ${MAX_TERMS}`);
  return { text: trimmed, terms: parts.map(parseTerm) };
}

const NAME_END = new Set(['=', '~']);

function parseTerm(chars: Char[]): Term {
  const part = textOf(chars);
  if (chars.length === 0) throw new SelectorError(`an empty term; expected ${SELECTOR_HELP}`);
  const at = chars.findIndex((ch) => isSyntax(ch, NAME_END));
  if (at === -1) return { kind: 'device', ...compilePattern(chars, part) };
  const name = textOf(trimChars(chars.slice(0, at)));
  const valueChars = trimChars(chars.slice(at + 1));
  const value = textOf(valueChars);
  if (chars[at]!.c === '~') {
    if (name !== 'context')
      throw new SelectorError(`"${part}": only context~TEXT takes ~ (a label holding ~ is written \\~)`);
    if (value.length === 0) throw new SelectorError(`"${part}": context~ needs some text`);
    return { kind: 'context', text: value };
  }
  if (value.length === 0) throw new SelectorError(`"${part}": ${name}= needs a value`);
  if (name === 'device') return { kind: 'device', ...compilePattern(valueChars, part) };
  if (name === 'host') return { kind: 'host', ...compilePattern(valueChars, part) };
  if (name === 'run') {
    if (!isRunId(value)) throw new SelectorError(`"${part}": ${RUN_ID_RULE}`);
    return { kind: 'run', id: value };
  }
  if (name === 'format') {
    if (!(FORMATS as readonly string[]).includes(value))
      throw new SelectorError(`"${part}": format is one of ${FORMATS.join(', ')}`);
    return { kind: 'format', format: value as Format };
  }
  if (name.startsWith('tag.')) {
    const key = name.slice(4);
    if (!isTagPart(key) || !isTagPart(value))
      throw new SelectorError(`"${part}": tag keys and values are 1-${MAX_TAG_LENGTH} ${TAG_PART_CHARACTERS}`);
    return { kind: 'tag', key, value };
  }
  throw new SelectorError(`unknown term "${name}"; expected ${SELECTOR_HELP} (a label holding = is written \\=)`);
}

const PATTERN_RULES =
  `at most ${MAX_PATTERN_LENGTH} printable characters, no "${KEY_SEPARATOR}", ` +
  '* and ? as wildcards, \\ before , = ~ * ? \\ to make them literal';

/**
 * A pattern from its characters. In a selector an unescaped `=` or `~` is
 * refused (it would have ended a term name); `inSelector` false is the `device`
 * parameter of GET /runs, where they are plain characters.
 */
function compilePattern(chars: readonly Char[], part: string, inSelector = true): Pattern {
  const label = textOf(chars);
  const problem =
    chars.length === 0
      ? 'empty'
      : chars.length > MAX_PATTERN_LENGTH
        ? `${chars.length} characters`
        : FORBIDDEN_IN_LABELS.test(label)
          ? `it holds "${KEY_SEPARATOR}" or a control character`
          : inSelector && chars.some((ch) => isSyntax(ch, NAME_END))
            ? 'an = or ~ in it ends a term name: write \\= or \\~'
            : undefined;
  if (problem !== undefined)
    throw new SelectorError(`"${part.slice(0, 60)}": not a device or host pattern (${problem}; ${PATTERN_RULES})`);
  let glob = '';
  let wildcard = -1;
  chars.forEach((ch, i) => {
    const wild = isSyntax(ch, WILDCARDS);
    if (wild && wildcard === -1) wildcard = i;
    glob += wild ? ch.c : ch.c === '*' || ch.c === '?' || ch.c === '\\' ? `\\${ch.c}` : ch.c;
  });
  if (wildcard === -1) return { glob, exact: label, prefix: label };
  return { glob, prefix: textOf(chars.slice(0, wildcard)) };
}

/**
 * The `device` parameter of GET /runs as a pattern: the same wildcards and
 * escapes as a selector's device term; `,`, `=` and `~` are plain characters
 * there. A SelectorError says what is wrong.
 */
export function parsePattern(text: string): Pattern {
  const chars = trimChars(readChars(withoutLookAlikes(text)));
  return compilePattern(chars, text, false);
}

/** A label named exactly: the pattern that matches it and nothing else (for messages that suggest one). */
export function exactPattern(label: string): string {
  return label.replace(/[,=~*?\\]/g, (c) => `\\${c}`);
}

/**
 * Whether `text` matches `glob` (`*` any run of characters, `?` any one, a
 * backslash makes the next character literal; a trailing one is itself). Two
 * cursors and the last `*` to fall back to: at most glob x text steps, where a
 * regular expression built from `*a*a*a*a*a*b` backtracks for hours on a label of
 * a hundred `a`s (found by fuzzing the selectors). No cache: nothing a request
 * sends is kept.
 */
export function globMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  /** Where the glob goes on after the last `*` seen, and the text position that `*` took up to. */
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    const c = glob[g];
    const escaped = c === '\\' && g + 1 < glob.length;
    if (c === '*') {
      star = ++g;
      resume = t;
    } else if (g < glob.length && (c === '?' || (escaped ? glob[g + 1] : c) === text[t])) {
      g += escaped ? 2 : 1;
      t++;
    } else if (star >= 0) {
      // Let the last * take one more character and try again from there.
      g = star;
      t = ++resume;
    } else return false;
  }
  while (glob[g] === '*') g++;
  return g === glob.length;
}

export function termMatches(term: Term, c: SelectorCandidate): boolean {
  switch (term.kind) {
    case 'device':
      return globMatches(term.glob, c.device);
    case 'host':
      return c.host !== undefined && globMatches(term.glob, c.host);
    case 'run':
      return c.runId === term.id;
    case 'format':
      return c.format === term.format;
    case 'tag':
      return c.tags[term.key] === term.value;
    case 'context':
      return c.context.some((line) => line.includes(term.text));
  }
}

export function matches(selector: Selector, candidate: SelectorCandidate): boolean {
  return selector.terms.every((t) => termMatches(t, candidate));
}
