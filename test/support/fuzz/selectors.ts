/**
 * Fuzzing the selector grammar (shared/selectors.ts): any text, and texts built
 * from the grammar's own pieces with their separators, wildcards, control
 * characters and lengths pushed around. The property: parseSelector either throws
 * a SelectorError with a message, or returns a selector within the limits whose
 * every term is well formed; planning and matching it against any candidate
 * never throws, and a pattern matches exactly what a reference matcher says,
 * within a time that cannot hide a backtracking blow-up.
 */
import fc from 'fast-check';
import { FORMATS } from '../../../shared/model.ts';
import { globMatches, matches, MAX_SELECTOR_LENGTH, MAX_TERMS, parseSelector, planSelector, SelectorError, type Selector, type SelectorCandidate } from '../../../shared/selectors.ts';

/** Longest a match of one selector against one candidate may take, even on a loaded machine (a regex blow-up takes minutes). */
export const MATCH_MS = 250;

const WILD = fc.constantFrom('*', '?', '**', '*?', 'a', 'b', 'x4100', '/', 'c0t', 'd0', '.', '+', '(', ')', '[', ']', '\\', '^', '$', '|', '{', '}', ' ', '#', '%', 'é', '\u2028', '\u0000', '\n', '\u007f', 'ſ');

/** Device and host patterns: wildcard-heavy, sometimes long, sometimes with what a pattern may not hold. */
export const globArb = fc.oneof(
  { weight: 4, arbitrary: fc.array(WILD, { minLength: 1, maxLength: 40 }).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom('*a', '*', 'a', '?'), { minLength: 1, maxLength: 70 }).map((parts) => `${parts.join('')}*b`) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 140 }) },
);

/** Labels and hosts to match against: the shapes that make backtracking matchers slow among them. */
export const labelArb = fc.oneof(
  fc.array(fc.constantFrom('a', 'b', '/', 'x4100', 'c0t0d0', '.', '*', '?', 'é'), { maxLength: 40 }).map((parts) => parts.join('')),
  fc.integer({ min: 0, max: 128 }).map((n) => 'a'.repeat(n)),
  fc.string({ maxLength: 128 }),
);

const termArb = fc.oneof(
  globArb,
  globArb.map((g) => `device=${g}`),
  globArb.map((g) => `host=${g}`),
  fc.tuple(fc.string({ maxLength: 70 }), fc.string({ maxLength: 70 })).map(([k, v]) => `tag.${k}=${v}`),
  fc.tuple(fc.constantFrom('interface', 'rpm', 'medium', 'bus'), fc.constantFrom('SAS', '10000', 'hdd', 'nvme', '', '=', 'a'.repeat(65))).map(([k, v]) => `tag.${k}=${v}`),
  fc.oneof(fc.stringMatching(/^r[0-9a-f]{24}$/), fc.string({ maxLength: 30 })).map((id) => `run=${id}`),
  fc.constantFrom(...FORMATS, 'xfs', '', 'IOSTAT', 'diskperf ').map((f) => `format=${f}`),
  fc.string({ maxLength: 60 }).map((t) => `context~${t}`),
  fc.tuple(fc.string({ maxLength: 12 }), fc.constantFrom('=', '~', '==', '=~', '~='), fc.string({ maxLength: 12 })).map(([a, op, b]) => `${a}${op}${b}`),
  fc.constantFrom('', ' ', ',', '=', '~', 'tag.', 'tag.=', 'device=', 'context~', 'run', '\t'),
);

/** Selector texts: grammar pieces joined by commas (sometimes too many, too long), or anything at all. */
export const selectorTextArb = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(fc.array(termArb, { minLength: 1, maxLength: MAX_TERMS + 4 }), fc.constantFrom(',', ', ', ' , ', ',,')).map(([terms, sep]) => terms.join(sep)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: MAX_SELECTOR_LENGTH + 100 }) },
  { weight: 1, arbitrary: fc.integer({ min: MAX_SELECTOR_LENGTH - 5, max: MAX_SELECTOR_LENGTH + 5 }).map((n) => `device=${'*'.repeat(n)}`) },
);

const candidateArb: fc.Arbitrary<SelectorCandidate> = fc.record(
  {
    device: labelArb,
    runId: fc.stringMatching(/^r[0-9a-f]{24}$/),
    host: labelArb,
    format: fc.constantFrom(...FORMATS),
    tags: fc.dictionary(fc.constantFrom('interface', 'rpm', 'medium', 'bus'), fc.constantFrom('SAS', '10000', 'hdd', 'nvme')),
    context: fc.array(fc.string({ maxLength: 40 }), { maxLength: 3 }),
  },
  { requiredKeys: ['device', 'runId', 'format', 'tags', 'context'] },
);

/** The obvious matcher, by dynamic programming: what globMatches must agree with. */
export function referenceGlobMatch(glob: string, text: string): boolean {
  // can[j]: glob[0..i) matches text[0..j).
  let can = Array.from({ length: text.length + 1 }, (_, j) => j === 0);
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    const next = Array<boolean>(text.length + 1).fill(false);
    if (c === '*') {
      let any = false;
      for (let j = 0; j <= text.length; j++) next[j] = any ||= can[j]!;
    } else {
      for (let j = 1; j <= text.length; j++) next[j] = can[j - 1]! && (c === '?' || c === text[j - 1]);
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
    check(error.message.length > 0 && !/\n\s+at /.test(error.message), `SelectorError message: ${JSON.stringify(error.message)}`);
    return;
  }
  check(selector.text === text.trim() && selector.text.length <= MAX_SELECTOR_LENGTH, `selector text ${JSON.stringify(selector.text)}`);
  check(selector.terms.length >= 1 && selector.terms.length <= MAX_TERMS, `${selector.terms.length} terms`);
  for (const term of selector.terms) {
    switch (term.kind) {
      case 'device':
      case 'host':
        check(term.glob.length >= 1 && term.glob.length <= 128 && !/[\u0000-\u001f,=~]/.test(term.glob), `${term.kind} pattern ${JSON.stringify(term.glob)}`);
        break;
      case 'run':
        check(/^r[0-9a-f]{24}$/.test(term.id), `run id ${JSON.stringify(term.id)}`);
        break;
      case 'format':
        check((FORMATS as readonly string[]).includes(term.format), `format ${term.format}`);
        break;
      case 'tag':
        check(/^[A-Za-z0-9_.:+@/-]{1,64}$/.test(term.key) && /^[A-Za-z0-9_.:+@/-]{1,64}$/.test(term.value), `tag ${term.key}=${term.value}`);
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
    check(typeof result === 'boolean' && ms < MATCH_MS, `matching ${JSON.stringify(selector.text)} against ${JSON.stringify(candidate.device)} took ${ms.toFixed(0)} ms`);
  }
}

export function selectorProperty() {
  return fc.property(selectorTextArb, fc.array(candidateArb, { maxLength: 4 }), (text, candidates) => selectorHoldsUp(text, candidates));
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
