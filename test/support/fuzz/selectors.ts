/**
 * Fuzzing the selector grammar (shared/selectors.ts): any text, and texts built
 * from the grammar's own pieces with their separators, escapes, wildcards,
 * control characters and lengths pushed around. The property: parseSelector
 * either throws a SelectorError with a message, or returns a selector within the
 * limits whose every term is well formed; planning and matching it against any
 * candidate never throws, a candidate a pattern matches starts with the
 * pattern's literal prefix, and a pattern matches exactly what a reference
 * matcher says, within a time that cannot hide a backtracking blow-up. And any
 * label there can be, written with exactPattern, names that label and no other.
 */
import fc from 'fast-check';
import { FORBIDDEN_IN_LABELS, normaliseName, withoutLookAlikes } from '../../../shared/labels.ts';
import { FORMATS } from '../../../shared/model.ts';
import {
  exactPattern,
  globMatches,
  matches,
  MAX_PATTERN_LENGTH,
  MAX_SELECTOR_LENGTH,
  MAX_TERMS,
  parseSelector,
  SelectorError,
  termMatches,
  type Selector,
  type SelectorCandidate,
} from '../../../shared/selectors.ts';
import { planSelector } from '../../../shared/label-plans.ts';

/** Whether text holds what no pattern may: a control character (below U+0020) or the key separator. */
const holdsControlOrSeparator = (text: string) => [...text].some((ch) => ch.charCodeAt(0) < 0x20 || ch === '#');

/** Longest a match of one selector against one candidate may take, even on a loaded machine (a regex blow-up takes minutes). */
export const MATCH_MS = 250;

const WILD = fc.constantFrom(
  '*',
  '?',
  '**',
  '*?',
  'a',
  'b',
  'x4100',
  '/',
  'c0t',
  'd0',
  '.',
  '+',
  '(',
  ')',
  '[',
  ']',
  '\\',
  '\\*',
  '\\?',
  '\\\\',
  '\\,',
  '\\=',
  '\\~',
  '^',
  '$',
  '|',
  '{',
  '}',
  ' ',
  '#',
  '%',
  'é',
  '\u2028',
  '\u0000',
  '\n',
  '\u007f',
  'ſ',
);

/** Device and host patterns: wildcard-heavy, sometimes long, sometimes with what a pattern may not hold. */
export const globArb = fc.oneof(
  { weight: 4, arbitrary: fc.array(WILD, { minLength: 1, maxLength: 40 }).map((parts) => parts.join('')) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.constantFrom('*a', '*', 'a', '?'), { minLength: 1, maxLength: 70 })
      .map((parts) => `${parts.join('')}*b`),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 140 }) },
);

/** Labels and hosts to match against: the shapes that make backtracking matchers slow among them. */
export const labelArb = fc.oneof(
  fc
    .array(fc.constantFrom('a', 'b', '/', 'x4100', 'c0t0d0', '.', '*', '?', 'é', '\\', ',', '=', '~'), {
      maxLength: 40,
    })
    .map((parts) => parts.join('')),
  fc.integer({ min: 0, max: MAX_PATTERN_LENGTH }).map((n) => 'a'.repeat(n)),
  fc.string({ maxLength: MAX_PATTERN_LENGTH }),
);

/** Labels ingest can store: normalised (labels.ts normaliseName), no key separator, 1-257 characters (a series label's longest). */
export const storableLabelArb = fc
  .oneof(
    fc
      .array(
        fc.constantFrom(
          'a',
          'Z',
          '0',
          '/',
          '-',
          '_',
          '.',
          ' ',
          '*',
          '?',
          '\\',
          ',',
          '=',
          '~',
          '"',
          "'",
          'é',
          '😀',
          '(',
          '[',
        ),
        { minLength: 1, maxLength: 80 },
      )
      .map((parts) => parts.join('')),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 80 }),
    fc.constantFrom(
      '\\'.repeat(MAX_PATTERN_LENGTH),
      ','.repeat(MAX_PATTERN_LENGTH),
      `${'x'.repeat(128)}/${'*'.repeat(128)}`,
    ),
  )
  .map((label) => normaliseName(label).slice(0, MAX_PATTERN_LENGTH).trim())
  .filter((label) => label.length > 0 && !FORBIDDEN_IN_LABELS.test(label) && !/[\uD800-\uDBFF]$/.test(label));

const termArb = fc.oneof(
  globArb,
  globArb.map((g) => `device=${g}`),
  globArb.map((g) => `host=${g}`),
  fc.tuple(fc.string({ maxLength: 70 }), fc.string({ maxLength: 70 })).map(([k, v]) => `tag.${k}=${v}`),
  fc
    .tuple(
      fc.constantFrom('interface', 'rpm', 'medium', 'bus'),
      fc.constantFrom('SAS', '10000', 'hdd', 'nvme', '', '=', 'a'.repeat(65)),
    )
    .map(([k, v]) => `tag.${k}=${v}`),
  fc.oneof(fc.stringMatching(/^r[0-9a-f]{24}$/), fc.string({ maxLength: 30 })).map((id) => `run=${id}`),
  fc.constantFrom(...FORMATS, 'xfs', '', 'IOSTAT', 'diskperf ').map((f) => `format=${f}`),
  fc.string({ maxLength: 60 }).map((t) => `context~${t}`),
  fc
    .tuple(fc.string({ maxLength: 12 }), fc.constantFrom('=', '~', '==', '=~', '~='), fc.string({ maxLength: 12 }))
    .map(([a, op, b]) => `${a}${op}${b}`),
  fc.constantFrom('', ' ', ',', '=', '~', 'tag.', 'tag.=', 'device=', 'context~', 'run', '\t'),
);

/** Selector texts: grammar pieces joined by commas (sometimes too many, too long), or anything at all. */
export const selectorTextArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(fc.array(termArb, { minLength: 1, maxLength: MAX_TERMS + 4 }), fc.constantFrom(',', ', ', ' , ', ',,'))
      .map(([terms, sep]) => terms.join(sep)),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: MAX_SELECTOR_LENGTH + 100 }) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: MAX_SELECTOR_LENGTH - 5, max: MAX_SELECTOR_LENGTH + 5 })
      .map((n) => `device=${'*'.repeat(n)}`),
  },
);

const candidateArb: fc.Arbitrary<SelectorCandidate> = fc.record(
  {
    device: labelArb,
    runId: fc.stringMatching(/^r[0-9a-f]{24}$/),
    host: labelArb,
    format: fc.constantFrom(...FORMATS),
    tags: fc.dictionary(
      fc.constantFrom('interface', 'rpm', 'medium', 'bus'),
      fc.constantFrom('SAS', '10000', 'hdd', 'nvme'),
    ),
    context: fc.array(fc.string({ maxLength: 40 }), { maxLength: 3 }),
  },
  { requiredKeys: ['device', 'runId', 'format', 'tags', 'context'] },
);

/** A glob as tokens: a wildcard, or one literal character (a backslash makes the next one literal; a trailing one is itself). */
function globTokens(glob: string): { wild?: '*' | '?'; c?: string }[] {
  const tokens: { wild?: '*' | '?'; c?: string }[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\' && i + 1 < glob.length) tokens.push({ c: glob[++i]! });
    else tokens.push(c === '*' || c === '?' ? { wild: c } : { c });
  }
  return tokens;
}

/** The obvious matcher, by dynamic programming: what globMatches must agree with. */
export function referenceGlobMatch(glob: string, text: string): boolean {
  // can[j]: the tokens so far match text[0..j).
  let can = Array.from({ length: text.length + 1 }, (_, j) => j === 0);
  for (const token of globTokens(glob)) {
    const next = Array<boolean>(text.length + 1).fill(false);
    if (token.wild === '*') {
      let any = false;
      for (let j = 0; j <= text.length; j++) next[j] = any ||= can[j]!;
    } else {
      for (let j = 1; j <= text.length; j++) next[j] = can[j - 1]! && (token.wild === '?' || token.c === text[j - 1]);
    }
    can = next;
  }
  return can[text.length]!;
}

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

/** The property for one selector text and candidates to match it against. */
export function selectorHoldsUp(text: string, candidates: readonly SelectorCandidate[]): void {
  let selector: Selector;
  try {
    selector = parseSelector(text);
  } catch (error) {
    check(error instanceof SelectorError, `not a SelectorError: ${(error as Error)?.stack ?? String(error)}`);
    check(
      error.message.length > 0 && !/\n\s+at /.test(error.message),
      `SelectorError message: ${JSON.stringify(error.message)}`,
    );
    return;
  }
  // Invisible characters go and the text is composed, as names are (labels.ts withoutLookAlikes).
  check(
    selector.text === withoutLookAlikes(text).trim() && selector.text.length <= MAX_SELECTOR_LENGTH,
    `selector text ${JSON.stringify(selector.text)}`,
  );
  check(selector.terms.length >= 1 && selector.terms.length <= MAX_TERMS, `${selector.terms.length} terms`);
  for (const term of selector.terms) {
    switch (term.kind) {
      case 'device':
      case 'host': {
        const length = globTokens(term.glob).length;
        check(
          length >= 1 && length <= MAX_PATTERN_LENGTH && !holdsControlOrSeparator(term.glob),
          `${term.kind} pattern ${JSON.stringify(term.glob)}`,
        );
        // An exact pattern is its label; otherwise its prefix is literal text up to the first wildcard.
        if (term.exact !== undefined)
          check(
            term.prefix === term.exact && globMatches(term.glob, term.exact),
            `exact pattern ${JSON.stringify(term.glob)} of ${JSON.stringify(term.exact)}`,
          );
        else {
          const tokens = globTokens(term.glob);
          const literal = tokens
            .slice(
              0,
              tokens.findIndex((t) => t.wild !== undefined),
            )
            .map((t) => t.c)
            .join('');
          check(
            term.prefix === literal,
            `prefix ${JSON.stringify(term.prefix)} of ${JSON.stringify(term.glob)}, expected ${JSON.stringify(literal)}`,
          );
        }
        break;
      }
      case 'run':
        check(/^r[0-9a-f]{24}$/.test(term.id), `run id ${JSON.stringify(term.id)}`);
        break;
      case 'format':
        check((FORMATS as readonly string[]).includes(term.format), `format ${term.format}`);
        break;
      case 'tag':
        check(
          /^[A-Za-z0-9_.:+@/-]{1,64}$/.test(term.key) && /^[A-Za-z0-9_.:+@/-]{1,64}$/.test(term.value),
          `tag ${term.key}=${term.value}`,
        );
        break;
      case 'context':
        check(term.text.length >= 1, 'empty context text');
        break;
    }
  }
  planSelector(selector);
  for (const candidate of candidates) {
    const started = performance.now();
    const result = matches(selector, candidate);
    const ms = performance.now() - started;
    check(
      typeof result === 'boolean' && ms < MATCH_MS,
      `matching ${JSON.stringify(selector.text)} against ${JSON.stringify(candidate.device)} took ${ms.toFixed(0)} ms`,
    );
    // What a device pattern matches starts with its literal prefix: a DEVICES query under that prefix misses nothing.
    for (const term of selector.terms) {
      if (term.kind === 'device' && termMatches(term, candidate))
        check(
          candidate.device.startsWith(term.prefix),
          `${JSON.stringify(term.glob)} matches ${JSON.stringify(candidate.device)}, which does not start with ${JSON.stringify(term.prefix)}`,
        );
    }
  }
}

export function selectorProperty() {
  return fc.property(selectorTextArb, fc.array(candidateArb, { maxLength: 4 }), (text, candidates) =>
    selectorHoldsUp(text, candidates),
  );
}

/** globMatches agrees with the reference, on patterns and labels built to trip it. */
export function globProperty() {
  return fc.property(globArb, labelArb, (glob, label) => {
    const started = performance.now();
    const got = globMatches(glob, label);
    const ms = performance.now() - started;
    const want = referenceGlobMatch(glob, label);
    check(got === want, `globMatches(${JSON.stringify(glob)}, ${JSON.stringify(label)}) is ${got}, expected ${want}`);
    check(ms < MATCH_MS, `globMatches(${JSON.stringify(glob)}, ${JSON.stringify(label)}) took ${ms.toFixed(0)} ms`);
  });
}

/**
 * Any label there can be, written with exactPattern (a bare term, and after
 * device=), is one exact device term naming it: planned as that label, matching
 * it and not the label one character longer or shorter, within the selector's
 * length limit.
 */
export function exactNameProperty() {
  return fc.property(storableLabelArb, (label) => {
    const written = exactPattern(label);
    for (const text of [written, `device=${written}`, `${written},format=iostat`]) {
      check(text.length <= MAX_SELECTOR_LENGTH, `${JSON.stringify(text)} is longer than ${MAX_SELECTOR_LENGTH}`);
      const selector = parseSelector(text);
      const term = selector.terms[0]!;
      check(
        term.kind === 'device' && term.exact === label,
        `${JSON.stringify(text)} is ${JSON.stringify(term)}, not the label ${JSON.stringify(label)}`,
      );
      const plan = planSelector(selector);
      check(
        plan.by === 'device' && plan.exact === label,
        `${JSON.stringify(text)} is planned as ${JSON.stringify(plan)}`,
      );
      check(globMatches(term.glob, label), `${JSON.stringify(term.glob)} does not match ${JSON.stringify(label)}`);
      for (const other of [`${label}x`, label.slice(0, -1), `x${label}`])
        if (other !== label)
          check(!globMatches(term.glob, other), `${JSON.stringify(term.glob)} matches ${JSON.stringify(other)} too`);
    }
  });
}
