/**
 * The comparison use case, GET /compare's whole path: selection -> observations
 * -> statistics -> answer.
 *
 *   { a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync', metric: 'all' }
 *     -> selectors parsed (shared/selectors.ts)
 *     -> an answer kept for the same labels' stamps? (compare/kept-answers.ts)
 *     -> observations read from the store (compare/selection.ts resolveSelector)
 *     -> the model and its answer (shared/comparison/)
 *     -> the answer's JSON, kept for the next identical question (kept-answers.ts)
 *
 * The API route calls it and adds only HTTP; the CLI and the report page ask the
 * route. A bad selector, a side that reads too much or a metric no run carries
 * is a CompareError naming the parameter.
 */
import {
  CompareError,
  compareObservations,
  type Comparison,
  type CompareOptions,
  type MetricSpec,
} from './comparison/index.ts';
import { comparisonKey, MAX_AGE_MS, stampedKey, type AnswerCache } from './compare/kept-answers.ts';
import { ReadLimitError, resolveSelector } from './compare/selection.ts';
import { parseSelector, SelectorError, type Selector } from './selectors.ts';
import { ReadSession } from './store/session.ts';
import type { ReadStore } from './store/store.ts';

export * from './comparison/index.ts';
export { AnswerCache, comparisonKey } from './compare/kept-answers.ts';

export interface CompareRequest {
  a: string;
  b: string;
  metric: MetricSpec;
}

export interface CompareDeps extends ReadStore {
  /** Answers kept between requests; none: every answer is read and computed. */
  answers?: AnswerCache;
  /** The clock, epoch ms (tests move it). */
  now?: () => number;
  /** Bootstrap iterations and seed (the defaults serve the API). */
  model?: Pick<CompareOptions, 'iterations' | 'seed'>;
}

/** An answer as JSON, and whether it was computed for this request or reused. */
export interface CompareAnswer {
  body: string;
  made: 'computed' | 'cached';
}

function selector(name: 'a' | 'b', text: string): Selector {
  try {
    return parseSelector(text);
  } catch (error) {
    if (error instanceof SelectorError) throw new CompareError(`${name}: ${error.message}`);
    throw error;
  }
}

async function observations(name: 'a' | 'b', deps: ReadStore, chosen: Selector, session: ReadSession) {
  try {
    return await resolveSelector(deps, chosen, session);
  } catch (error) {
    if (error instanceof ReadLimitError) throw new CompareError(`${name}: ${error.message}`);
    throw error;
  }
}

/** The comparison a request asks for, as the API answers it. */
export async function compare(deps: CompareDeps, request: CompareRequest): Promise<CompareAnswer> {
  const a = selector('a', request.a);
  const b = selector('b', request.b);
  const now = (deps.now ?? Date.now)();
  const { answers } = deps;
  const stamped = answers ? await stampedKey(deps, [a, b], request.metric, now) : undefined;
  const kept = stamped === undefined ? undefined : answers!.get(stamped.key, now);
  if (kept !== undefined) return { body: kept, made: 'cached' };
  // One session: a device or run both sides name is read once.
  const session = new ReadSession(deps);
  const [oa, ob] = await Promise.all([observations('a', deps, a, session), observations('b', deps, b, session)]);
  const options: CompareOptions = { metric: request.metric, selectors: { a: a.text, b: b.text }, ...deps.model };
  const key = answers ? comparisonKey(oa, ob, options) : undefined;
  let body = key === undefined ? undefined : answers!.get(key, now);
  const made = body === undefined ? 'computed' : 'cached';
  if (body === undefined) {
    const comparison: Comparison = compareObservations(oa, ob, options);
    body = JSON.stringify(comparison);
    if (key !== undefined) answers!.set(key, body);
  }
  if (stamped?.settled) answers!.set(stamped.key, body, now + MAX_AGE_MS);
  return { body, made };
}
