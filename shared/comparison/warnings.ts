/**
 * Every way two sides may not be comparable, each said with what differs:
 * a side mixing formats, platforms, hosts or workloads; diskperf runs with
 * other parameters; a table short of its header's request sizes; stacked
 * devices beside their members; devices of very different load.
 */
import type { Observation } from './observations.ts';

const list = (values: Iterable<string>, max = 4) => {
  const all = [...values];
  return `${all.slice(0, max).join(', ')}${all.length > max ? `, +${all.length - max} more` : ''}`;
};
const distinct = <T>(values: Iterable<T | undefined>): T[] => [
  ...new Set([...values].filter((v): v is T => v !== undefined)),
];
const sizeText = (bytes: number) =>
  bytes >= 1 << 30 && bytes % (1 << 30) === 0
    ? `${bytes / (1 << 30)} GiB`
    : bytes >= 1 << 20 && bytes % (1 << 20) === 0
      ? `${bytes / (1 << 20)} MiB`
      : bytes >= 1024 && bytes % 1024 === 0
        ? `${bytes / 1024} KiB`
        : `${bytes} bytes`;
const setupValue = (key: string, value: string | number) =>
  key === 'file size' && typeof value === 'number' ? sizeText(value) : String(value);

/** Runs are one per runId: a side's iostat series of one run share its facts. */
function runsOf(side: readonly Observation[]): Observation[] {
  const seen = new Map<string, Observation>();
  for (const o of side) if (!seen.has(o.runId)) seen.set(o.runId, o);
  return [...seen.values()];
}

/** Stacked devices: Linux device-mapper and md, Solaris/illumos SVM metadevices (d10). */
const STACKED = /^(dm-\d+|md\d+|md\/\S+|d\d+)$/;

/** What one side mixes that its runs should share. */
function sideWarnings(name: 'A' | 'B', side: readonly Observation[]): string[] {
  const out: string[] = [];
  const runs = runsOf(side);
  const formats = distinct(runs.map((o) => o.format));
  if (formats.length > 1)
    out.push(`${name} mixes formats (${formats.join(', ')}): their metrics differ; select one with format=`);
  const platforms = distinct(runs.map((o) => o.platform));
  if (platforms.length > 1)
    out.push(
      `${name} mixes platforms (${platforms.join(', ')}): iostat columns mean different things on each; ` +
        "select one platform's runs",
    );
  const hosts = distinct(runs.map((o) => o.host));
  if (hosts.length > 1)
    out.push(
      `${name} spans ${hosts.length} hosts (${list(hosts)}): ` +
        'differences between machines count as differences between runs',
    );
  // Workloads: the commands typed before iostat runs (diskperf's own command line is its parameters, below).
  const iostatContexts = distinct(
    runs.filter((o) => o.format === 'iostat').map((o) => (o.context ?? []).join('; ') || undefined),
  );
  if (iostatContexts.length > 1)
    out.push(
      `${name} mixes ${iostatContexts.length} workloads (different commands before the runs: ${list(
        iostatContexts.map((c) => JSON.stringify(c)),
        3,
      )}); select one with context~TEXT`,
    );
  const natives = distinct(side.map((o) => o.native));
  const stacked = natives.filter((n) => STACKED.test(n));
  const plain = natives.filter((n) => !STACKED.test(n));
  if (stacked.length > 0 && plain.length > 0) {
    out.push(
      `${name} holds stacked devices (${list(stacked)}) beside disks that may be their members (${list(plain)}): ` +
        `the same I/O counts twice; select the disks, e.g. ${exampleSelector(side, plain[0]!)}`,
    );
  }
  const busy = new Map<string, number[]>();
  for (const o of side) {
    const util = o.values.util_pct;
    if (typeof util !== 'number') continue;
    const values = busy.get(o.device);
    if (values) values.push(util);
    else busy.set(o.device, [util]);
  }
  const loads = [...busy]
    .map(([device, values]) => [device, values.reduce((s, v) => s + v, 0) / values.length] as const)
    .sort((x, y) => y[1] - x[1]);
  if (loads.length > 1 && loads[0]![1] >= 50 && loads[loads.length - 1]![1] <= 10) {
    const [top, topLoad] = loads[0]!;
    const [low, lowLoad] = loads[loads.length - 1]!;
    out.push(
      `${name} holds devices of very different load (${top} ${Math.round(topLoad)}% busy, ` +
        `${low} ${Math.round(lowLoad)}%): an idle disk says nothing of the one under test; select it, e.g. ${top}`,
    );
  }
  return out;
}

function exampleSelector(side: readonly Observation[], native: string): string {
  const o = side.find((x) => x.native === native);
  return o?.label !== undefined ? `${o.label}/${native}` : native;
}

/** diskperf parameters, and fio's job options and version, that differ within a side or between the sides. */
function setupWarnings(a: readonly Observation[], b: readonly Observation[]): string[] {
  return [...parameterWarnings('diskperf', a, b), ...parameterWarnings('fio', a, b)];
}

function parameterWarnings(format: 'diskperf' | 'fio', a: readonly Observation[], b: readonly Observation[]): string[] {
  const out: string[] = [];
  const setups = (side: readonly Observation[]) =>
    runsOf(side).filter((o) => o.format === format && o.setup !== undefined);
  const valuesOf = (side: readonly Observation[], key: string) =>
    distinct(setups(side).map((o) => (o.setup![key] === undefined ? undefined : setupValue(key, o.setup![key]!))));
  const keys = distinct([...setups(a), ...setups(b)].flatMap((o) => Object.keys(o.setup!)));
  const between: string[] = [];
  for (const [name, side] of [
    ['A', a],
    ['B', b],
  ] as const) {
    const within = keys.flatMap((key) => {
      const values = valuesOf(side, key);
      return values.length > 1 ? [`${key} ${values.join(' / ')}`] : [];
    });
    if (within.length > 0)
      out.push(
        `${name}'s ${format} runs used different parameters (${within.join(', ')}): ` +
          'they are not replicates of one test',
      );
  }
  for (const key of keys) {
    const va = valuesOf(a, key);
    const vb = valuesOf(b, key);
    if (va.length === 1 && vb.length === 1 && va[0] !== vb[0]) between.push(`${key} ${va[0]} on A, ${vb[0]} on B`);
  }
  if (between.length > 0)
    out.push(
      `the ${format} runs used different parameters (${between.join('; ')}): ` +
        "the difference may be the setup's (caching, file placement, run length), not the disk's",
    );
  return out;
}

/** diskperf tables that stop short of the request sizes their header announces. */
function tableWarnings(name: 'A' | 'B', side: readonly Observation[]): string[] {
  const out: string[] = [];
  for (const o of runsOf(side)) {
    if (o.format !== 'diskperf' || o.requestSizes === undefined) continue;
    const sizes = new Set<number>();
    for (const v of Object.values(o.values))
      if (v !== undefined && typeof v !== 'number' && v !== null)
        for (const s of v.keys()) if (typeof s === 'number') sizes.add(s);
    if (sizes.size === 0) continue;
    const largest = Math.max(...sizes);
    const smallest = Math.min(...sizes);
    if (largest < o.requestSizes.max || smallest > o.requestSizes.min) {
      out.push(
        `${name}: ${o.device}'s table covers ${sizeText(smallest)}-${sizeText(largest)} though its header ` +
          `announces ${sizeText(o.requestSizes.min)}-${sizeText(o.requestSizes.max)} (the run stopped early, ` +
          'or the paste was cut): the sizes it lacks are not compared',
      );
    }
  }
  return out;
}

/** The sides' platforms, when they differ. */
function platformWarnings(a: readonly Observation[], b: readonly Observation[]): string[] {
  const pa = distinct(a.filter((o) => o.format === 'iostat').map((o) => o.platform));
  const pb = distinct(b.filter((o) => o.format === 'iostat').map((o) => o.platform));
  if (pa.length === 1 && pb.length === 1 && pa[0] !== pb[0])
    return [
      `A is iostat on ${pa[0]} and B on ${pb[0]}: ` +
        'the tools define their columns differently (service and wait times above all)',
    ];
  return [];
}

export function comparabilityWarnings(a: readonly Observation[], b: readonly Observation[]): string[] {
  return [
    ...sideWarnings('A', a),
    ...sideWarnings('B', b),
    ...platformWarnings(a, b),
    ...setupWarnings(a, b),
    ...tableWarnings('A', a),
    ...tableWarnings('B', b),
  ];
}
