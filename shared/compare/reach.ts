/**
 * The device labels a selector reads, from its plan (shared/label-plans.ts):
 * an exact label and the iostat series labels filed under it, or the listed
 * labels under a literal prefix (or all of them) that its device patterns may
 * name. A selector that would read more than MAX_LABELS labels is a
 * ReadLimitError saying how to narrow it.
 */
import type { LabelPlan } from '../label-plans.ts';
import { exactPattern, globMatches, type Pattern, type Selector } from '../selectors.ts';
import { MAX_LABELS, type ReadSession } from '../store/session.ts';

/** A request reads more than the API allows: a 400 telling the caller to narrow it. */
export class ReadLimitError extends Error {
  override readonly name = 'ReadLimitError';
}

/**
 * The labels a plan reaches that every pattern may name; a plan that would read
 * more than MAX_LABELS labels is a ReadLimitError saying how to narrow it.
 */
export async function labelsOf(
  session: ReadSession,
  selector: Selector,
  plan: LabelPlan,
  patterns: readonly Pattern[],
): Promise<string[]> {
  if (plan.by === 'device') return patterns.every((p) => globMatches(p.glob, plan.exact)) ? [plan.exact] : [];
  const listed = await session.labels(plan.by === 'devicePrefix' ? plan.prefix : '');
  if (!listed.complete) throw new ReadLimitError(narrowing(selector, plan));
  return listed.labels.filter((label) => patterns.every((p) => mayName(p, label)));
}

/**
 * What a selector's exact device label reads: the label itself, read whether or
 * not it is listed (an upload that died before listing its labels is still found
 * by exact device), and the labels listed under `label/`, its iostat series
 * (such an upload's series join it once a retry lists them); each only when
 * every device term may name it. The label's own entries are read while the
 * others are listed: a diskperf label costs one round trip, as before series
 * were looked for.
 */
export async function labelAndSeries(
  session: ReadSession,
  selector: Selector,
  label: string,
  patterns: readonly Pattern[],
): Promise<string[]> {
  if (patterns.every((p) => mayName(p, label))) {
    // Awaited by the caller; not an unhandled rejection should the listing fail first.
    session.indexed(label).catch(() => undefined);
  }
  const series = await session.labels(`${label}/`);
  if (!series.complete) throw new ReadLimitError(narrowing(selector, { by: 'device', exact: label }));
  return [label, ...series.labels].filter((l) => patterns.every((p) => mayName(p, l)));
}

/** How a selector that reaches too many labels can be narrowed, by what made it read them. */
function narrowing(selector: Selector, plan: LabelPlan): string {
  const what = `"${selector.text}"`;
  const others = 'or add tag.KEY=VALUE (the tag index finds its runs) or run=ID';
  if (plan.by === 'device') {
    const named = exactPattern(plan.exact);
    return (
      `${what} has more than ${MAX_LABELS} series labels under "${plan.exact}/": ` +
      `name one (${named}/sda), or the ones starting alike (${named}/sd*), ${others}`
    );
  }
  if (plan.by === 'devicePrefix') {
    return (
      `${what} reaches more than ${MAX_LABELS} device labels starting "${plan.prefix}": ` +
      `make the literal text before its first wildcard longer, ${others}`
    );
  }
  const hasDevice = selector.terms.some((t) => t.kind === 'device');
  return hasDevice
    ? `${what} starts its device pattern with a wildcard, so it would read every device label, ` +
        `and there are more than ${MAX_LABELS}: start the pattern with literal text (sas10k*, x4100/*), ${others}`
    : `${what} names no device, tag or run, so it would read every device label, ` +
        `and there are more than ${MAX_LABELS}: add a device pattern starting with literal text (sas10k*, x4100/*), ` +
        `${others}`;
}

/**
 * Whether a device term may name what a listed label holds: by pattern, or (an exact label) a
 * series filed under it.
 */
export const mayName = (p: Pattern, label: string) =>
  globMatches(p.glob, label) || (p.exact !== undefined && label.startsWith(`${p.exact}/`));
