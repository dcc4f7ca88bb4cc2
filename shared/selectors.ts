/**
 * The selector grammar of the API and CLI (README, "Comparing"), defined once.
 * A selector is comma-separated terms that must all hold:
 *
 *   device=GLOB     the device label (`sas10k`, `x4100/c0t*`); a bare word means this
 *   tag.KEY=VALUE   a tag of the upload (`tag.interface=SAS`)
 *   run=ID          one run
 *   host=GLOB       the host the log names
 *   format=diskperf|iostat
 *   context~TEXT    a substring of the run's context lines (`context~tunefs -a 1`)
 *
 * Globs know `*` and `?`. Terms are checked here, so a bad one is a 400 naming what
 * is allowed, never a query. Device and host patterns and tags hold no control
 * characters and no key separator (`#`): a pattern can only become the tail of a
 * DEVICE# key or a prefix within the DEVICES partition, never reach another kind
 * of item. `context~TEXT` may hold `#` (shell prompts do): it is only ever
 * compared with context lines in memory.
 */
import { FORBIDDEN_IN_LABELS } from './labels.ts';
import { FORMATS, type Format } from './model.ts';
import { KEY_SEPARATOR } from './store/keys.ts';

export type Term =
  | { kind: 'device'; glob: string }
  | { kind: 'tag'; key: string; value: string }
  | { kind: 'run'; id: string }
  | { kind: 'host'; glob: string }
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

export const MAX_SELECTOR_LENGTH = 512;
export const MAX_TERMS = 10;
export const SELECTOR_HELP =
  'comma-separated terms that must all hold: device=GLOB (or a bare GLOB), tag.KEY=VALUE, run=ID, host=GLOB, format=diskperf|iostat, context~TEXT';

export class SelectorError extends Error {
  override readonly name = 'SelectorError';
}

/** A device or host pattern: at most this long, none of the selector's own separators. */
export const MAX_PATTERN_LENGTH = 128;
const SELECTOR_SYNTAX = /[,=~]/;
const TAG_KEY = /^[A-Za-z0-9_.:+@/-]{1,64}$/;
const RUN_ID = /^r[0-9a-f]{24}$/;

export function parseSelector(text: string): Selector {
  const trimmed = text.trim();
  if (trimmed.length === 0) throw new SelectorError(`empty selector; expected ${SELECTOR_HELP}`);
  if (trimmed.length > MAX_SELECTOR_LENGTH) throw new SelectorError(`selector longer than ${MAX_SELECTOR_LENGTH} characters`);
  const parts = trimmed.split(',').map((p) => p.trim());
  if (parts.length > MAX_TERMS) throw new SelectorError(`${parts.length} terms; at most ${MAX_TERMS}`);
  return { text: trimmed, terms: parts.map(parseTerm) };
}

function parseTerm(part: string): Term {
  if (part.length === 0) throw new SelectorError(`an empty term; expected ${SELECTOR_HELP}`);
  const tilde = part.indexOf('~');
  const eq = part.indexOf('=');
  if (tilde > 0 && (eq === -1 || tilde < eq)) {
    const name = part.slice(0, tilde).trim();
    const value = part.slice(tilde + 1).trim();
    if (name !== 'context') throw new SelectorError(`"${part}": only context~TEXT takes ~`);
    if (value.length === 0) throw new SelectorError(`"${part}": context~ needs some text`);
    return { kind: 'context', text: value };
  }
  if (eq === -1) return { kind: 'device', glob: checkGlob(part, part) };
  const name = part.slice(0, eq).trim();
  const value = part.slice(eq + 1).trim();
  if (value.length === 0) throw new SelectorError(`"${part}": ${name}= needs a value`);
  if (name === 'device') return { kind: 'device', glob: checkGlob(value, part) };
  if (name === 'host') return { kind: 'host', glob: checkGlob(value, part) };
  if (name === 'run') {
    if (!RUN_ID.test(value)) throw new SelectorError(`"${part}": a run id is r followed by 24 hex digits`);
    return { kind: 'run', id: value };
  }
  if (name === 'format') {
    if (!(FORMATS as readonly string[]).includes(value)) throw new SelectorError(`"${part}": format is one of ${FORMATS.join(', ')}`);
    return { kind: 'format', format: value as Format };
  }
  if (name.startsWith('tag.')) {
    const key = name.slice(4);
    if (!TAG_KEY.test(key) || !TAG_KEY.test(value)) throw new SelectorError(`"${part}": tag keys and values are 1-64 letters, digits and _ . : + @ / -`);
    return { kind: 'tag', key, value };
  }
  throw new SelectorError(`unknown term "${name}"; expected ${SELECTOR_HELP}`);
}

/** A device or host pattern a selector term may hold. */
export function isDevicePattern(glob: string): boolean {
  return glob.length > 0 && glob.length <= MAX_PATTERN_LENGTH && !FORBIDDEN_IN_LABELS.test(glob) && !SELECTOR_SYNTAX.test(glob);
}

function checkGlob(glob: string, part: string): string {
  if (!isDevicePattern(glob)) {
    throw new SelectorError(`"${part.slice(0, 60)}": not a device or host pattern (at most ${MAX_PATTERN_LENGTH} printable characters, no "${KEY_SEPARATOR}", * and ? as wildcards)`);
  }
  return glob;
}

/**
 * Whether `text` matches `glob` (`*` any run of characters, `?` any one). Two
 * cursors and the last `*` to fall back to: at most glob x text steps, where a
 * regular expression built from `*a*a*a*a*a*b` backtracks for hours on a label of
 * a hundred `a`s (found by fuzzing the selectors). No cache: nothing a request
 * sends is kept.
 */
export function globMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    const c = glob[g];
    if (c === '*') {
      star = g++;
      resume = t;
    } else if (g < glob.length && (c === '?' || c === text[t])) {
      g++;
      t++;
    } else if (star >= 0) {
      // Let the last * take one more character and try again from there.
      g = star + 1;
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

/**
 * How a store can find a selector's candidates without scanning, narrowest
 * first: one run, one device label, the runs carrying a tag (the selector's
 * first tag term), the device labels with a literal prefix, or every label.
 */
export type SelectorPlan =
  | { by: 'run'; runId: string }
  | { by: 'device'; exact: string }
  | { by: 'tag'; key: string; value: string }
  | { by: 'devicePrefix'; prefix: string }
  | { by: 'allDevices' };

export function planSelector(selector: Selector): SelectorPlan {
  const run = selector.terms.find((t): t is Extract<Term, { kind: 'run' }> => t.kind === 'run');
  if (run) return { by: 'run', runId: run.id };
  const device = selector.terms.find((t): t is Extract<Term, { kind: 'device' }> => t.kind === 'device');
  const wildcard = device ? device.glob.search(/[*?]/) : -1;
  if (device && wildcard === -1) return { by: 'device', exact: device.glob };
  const tag = selector.terms.find((t): t is Extract<Term, { kind: 'tag' }> => t.kind === 'tag');
  if (tag) return { by: 'tag', key: tag.key, value: tag.value };
  if (device && wildcard > 0) return { by: 'devicePrefix', prefix: device.glob.slice(0, wildcard) };
  return { by: 'allDevices' };
}
