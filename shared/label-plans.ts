/**
 * Where the runs a selector or a device pattern names are found without a
 * scan, decided once for the comparison (shared/compare/) and the listings
 * (shared/listings/), narrowest first: one run, one device label (a device term
 * without a wildcard), the runs carrying a tag (the selector's first tag term),
 * the device labels under the longest literal prefix of its device patterns, or
 * every label.
 */
import type { Pattern, Selector, Term } from './selectors.ts';

/** Where a device pattern's labels are: itself, under its literal prefix, or anywhere. */
export type LabelPlan = { by: 'device'; exact: string } | { by: 'devicePrefix'; prefix: string } | { by: 'allDevices' };

export type SelectorPlan = { by: 'run'; runId: string } | { by: 'tag'; key: string; value: string } | LabelPlan;

/** The labels device patterns that must all hold reach: an exact one's, else the longest literal prefix's. */
function planPatterns(patterns: readonly Pattern[]): LabelPlan {
  const exact = patterns.find((p) => p.exact !== undefined);
  if (exact) return { by: 'device', exact: exact.exact! };
  const prefix = patterns.reduce((longest, p) => (p.prefix.length > longest.length ? p.prefix : longest), '');
  return prefix ? { by: 'devicePrefix', prefix } : { by: 'allDevices' };
}

/** The labels the `device` parameter of GET /runs reaches (none given: every label). */
export function planLabels(pattern: Pattern | undefined): LabelPlan {
  return planPatterns(pattern === undefined ? [] : [pattern]);
}

export function planSelector(selector: Selector): SelectorPlan {
  const run = selector.terms.find((t): t is Extract<Term, { kind: 'run' }> => t.kind === 'run');
  if (run) return { by: 'run', runId: run.id };
  const labels = planPatterns(
    selector.terms.filter((t): t is Extract<Term, { kind: 'device' }> => t.kind === 'device'),
  );
  if (labels.by === 'device') return labels;
  const tag = selector.terms.find((t): t is Extract<Term, { kind: 'tag' }> => t.kind === 'tag');
  return tag ? { by: 'tag', key: tag.key, value: tag.value } : labels;
}
