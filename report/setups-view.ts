/**
 * The runs compared, side by side (section `#setups`): one column per run, A's
 * runs and then B's under a header naming the side, one row per field of the
 * setup (label, devices, format, platform, version, host, date, command, the
 * lines typed before it, each parameter and tag, file size, samples, time
 * range). A field the answer says differs between the runs is marked with a
 * class and a visible `≠` as well as its colour.
 */
import type { Comparison, RunSetup, Setups } from '../shared/comparison/index.ts';
import { plural } from '../shared/comparison/format.ts';
import { $, el } from './dom.ts';

/** Runs shown a side at most: a class of many labels would make a table no one reads. */
const RUNS_SHOWN = 24;

interface Field {
  /** The field's name as `differs` names it (`tags.disk`, `parameters.bs`). */
  name: string;
  /** What its row header says. */
  title: string;
  value: (s: RunSetup) => string;
}

const text = (v: string | number | undefined) => (v === undefined ? '' : String(v));

const FIXED: Field[] = [
  { name: 'label', title: 'label', value: (s) => s.label },
  { name: 'runId', title: 'run', value: (s) => s.runId },
  { name: 'devices', title: 'devices', value: (s) => s.devices.join(', ') },
  { name: 'format', title: 'format', value: (s) => s.format },
  { name: 'platform', title: 'platform', value: (s) => text(s.platform) },
  { name: 'version', title: 'version', value: (s) => text(s.version) },
  { name: 'host', title: 'host', value: (s) => text(s.host) },
  { name: 'date', title: 'date', value: (s) => text(s.date) },
  { name: 'command', title: 'command', value: (s) => text(s.command) },
  { name: 'context', title: 'typed before', value: (s) => (s.context ?? []).join('\n') },
];

const TRAILING: Field[] = [
  { name: 'fileSizeBytes', title: 'file size (bytes)', value: (s) => text(s.fileSizeBytes) },
  { name: 'samples', title: 'samples', value: (s) => text(s.samples) },
  {
    name: 'timeRange',
    title: 'time range',
    value: (s) => (s.timeRange ? `${s.timeRange.first} to ${s.timeRange.last}` : ''),
  },
];

/** One row per key any run has, for a record field (parameters, tags). */
function recordFields(runs: readonly RunSetup[], field: 'parameters' | 'tags', title: string): Field[] {
  const keys = [...new Set(runs.flatMap((s) => Object.keys(s[field] ?? {})))].sort();
  return keys.map((key) => ({
    name: `${field}.${key}`,
    title: `${title} ${key}`,
    value: (s: RunSetup) => text(s[field]?.[key]),
  }));
}

/** A field differs when `differs` names it, or names the record (`tags`) it is part of. */
const differs = (field: Field, named: ReadonlySet<string>) =>
  named.has(field.name) || named.has(field.name.split('.')[0]!);

export function renderSetups(c: Comparison): void {
  const section = $('setups');
  const setups = c.setups;
  if (setups === undefined || setups.a.length + setups.b.length === 0) {
    section.hidden = true;
    return;
  }
  const a = setups.a.slice(0, RUNS_SHOWN);
  const b = setups.b.slice(0, RUNS_SHOWN);
  const runs = [...a, ...b];
  const fields = [
    ...FIXED,
    ...recordFields(runs, 'parameters', 'parameter'),
    ...recordFields(runs, 'tags', 'tag'),
    ...TRAILING,
  ].filter((f) => runs.some((s) => f.value(s) !== ''));
  const named = new Set(setups.differs);
  const body = el(
    'tbody',
    {},
    ...fields.map((f) => {
      const tr = el('tr', {}, el('th', { scope: 'row', textContent: f.title }));
      tr.append(...runs.map((s) => el('td', { textContent: f.value(s) })));
      tr.dataset['field'] = f.name;
      if (differs(f, named)) tr.className = 'differs';
      return tr;
    }),
  );
  $('setups-table').replaceChildren(setupsCaption(), setupsHead(a, b), body);
  $('setups-note').textContent = setupsNote(setups, a.length, b.length);
  section.hidden = false;
}

function setupsCaption(): HTMLTableCaptionElement {
  return el('caption', {
    textContent: 'The runs compared: A then B, one column per run; ≠ marks a field that differs',
  });
}

/** Two header rows: the side over its runs, then each run by label. */
function setupsHead(a: readonly RunSetup[], b: readonly RunSetup[]): HTMLTableSectionElement {
  const sides = el('tr', {}, el('td'));
  for (const [name, runs] of [
    ['A', a],
    ['B', b],
  ] as const)
    if (runs.length > 0) sides.append(el('th', { scope: 'colgroup', colSpan: runs.length, textContent: name }));
  const labels = el('tr', {}, el('th', { scope: 'col', textContent: 'field' }));
  labels.append(
    ...[...a.map((s) => ['A', s] as const), ...b.map((s) => ['B', s] as const)].map(([side, s]) =>
      el('th', { scope: 'col', textContent: `${side}: ${s.label}` }),
    ),
  );
  return el('thead', {}, sides, labels);
}

function setupsNote(setups: Setups, shownA: number, shownB: number): string {
  const left = [
    setups.a.length > shownA ? `${setups.a.length - shownA} more of A` : '',
    setups.b.length > shownB ? `${setups.b.length - shownB} more of B` : '',
  ].filter(Boolean);
  const count = plural(setups.differs.length, 'field differs', 'fields differ');
  const differing =
    setups.differs.length === 0
      ? 'every field is the same on every run'
      : `${count} between the runs (marked ≠): ${setups.differs.join(', ')}`;
  const cut = left.length > 0 ? ` The first ${RUNS_SHOWN} runs a side are shown (${left.join(', ')}).` : '';
  return `${differing}.${cut}`;
}
