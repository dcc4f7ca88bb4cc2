/**
 * Every log in test/fixtures/<platform>/ parsed through the full driver (bytes,
 * detection, format module) and checked against its .expected.json, as described
 * in test/fixtures/README.md.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DiskperfRun, IostatRun, ParsedFile, Run } from '../../../shared/model.ts';
import { ParseError, parseFile } from '../../../shared/parsers/index.ts';
import { fixtureLogs } from '../../support/fixtures.ts';

interface ExpectedSeries {
  samples?: number;
  mount?: string;
  values?: Record<string, Record<string, number>>;
  raw?: Record<string, Record<string, number>>;
  time?: Record<string, string>;
  summary?: Record<string, Record<string, number>>;
}
interface ExpectedRun {
  platform?: string;
  dialect?: string;
  name?: string;
  context?: string[];
  reports?: number;
  warnings?: number;
  series?: Record<string, ExpectedSeries>;
  rows?: Record<string, Record<string, number>>;
  rowCount?: number;
  meta?: Record<string, unknown>;
}
interface Expected {
  format?: string;
  runs?: ExpectedRun[];
  error?: { line?: number; contains?: string };
}

/** Numbers equal within a relative 1e-9; everything else exactly. */
function close(actual: unknown, expected: number, what: string): void {
  expect(typeof actual, `${what}: ${String(actual)}`).toBe('number');
  const tolerance = Math.max(1e-9, Math.abs(expected) * 1e-9);
  expect(Math.abs((actual as number) - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(tolerance);
}

function checkPartial(actual: unknown, expected: unknown, what: string): void {
  if (typeof expected === 'number') return close(actual, expected, what);
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    expect(actual, what).toBeTypeOf('object');
    for (const [k, v] of Object.entries(expected))
      checkPartial((actual as Record<string, unknown>)[k], v, `${what}.${k}`);
    return;
  }
  expect(actual, what).toEqual(expected);
}

function checkIostat(run: IostatRun, exp: ExpectedRun, where: string): void {
  if (exp.reports !== undefined) expect(run.reports, `${where} reports`).toBe(exp.reports);
  if (!exp.series) return;
  expect(run.series.map((s) => s.device).sort(), `${where} devices`).toEqual(Object.keys(exp.series).sort());
  for (const [device, es] of Object.entries(exp.series)) {
    const series = run.series.find((s) => s.device === device)!;
    const at = `${where} ${device}`;
    if (es.samples !== undefined) expect(series.sampleCount, `${at} samples`).toBe(es.samples);
    if (es.mount !== undefined) expect(series.mount, `${at} mount`).toBe(es.mount);
    const sampleOf = (report: string) => {
      const sample = series.samples!.find((s) => s.report === Number(report));
      expect(sample, `${at} report ${report}`).toBeDefined();
      return sample!;
    };
    for (const [report, values] of Object.entries(es.values ?? {})) {
      const sample = sampleOf(report);
      for (const [metric, v] of Object.entries(values))
        close(sample.values[metric as keyof typeof sample.values], v, `${at} report ${report} ${metric}`);
    }
    for (const [report, raw] of Object.entries(es.raw ?? {})) {
      const sample = sampleOf(report);
      for (const [column, v] of Object.entries(raw))
        close(sample.raw[column], v, `${at} report ${report} raw ${column}`);
    }
    for (const [report, time] of Object.entries(es.time ?? {}))
      expect(sampleOf(report).time, `${at} report ${report} time`).toBe(time);
    if (es.summary) checkPartial(series.summary, es.summary, `${at} summary`);
  }
}

function checkDiskperf(run: DiskperfRun, exp: ExpectedRun, where: string): void {
  if (exp.rowCount !== undefined) expect(run.rows.length, `${where} rows`).toBe(exp.rowCount);
  for (const [size, values] of Object.entries(exp.rows ?? {})) {
    const row = run.rows.find((r) => r.req_size === Number(size));
    expect(row, `${where} req_size ${size}`).toBeDefined();
    for (const [metric, v] of Object.entries(values))
      close(row!.values[metric as keyof DiskperfRun['rows'][number]['values']], v, `${where} ${size} ${metric}`);
  }
}

function checkRun(run: Run, exp: ExpectedRun, where: string): void {
  if (exp.platform !== undefined) expect(run.platform, `${where} platform`).toBe(exp.platform);
  if (exp.dialect !== undefined) expect(run.dialect, `${where} dialect`).toBe(exp.dialect);
  if (exp.name !== undefined) expect(run.name, `${where} name`).toBe(exp.name);
  if (exp.context !== undefined) expect(run.context, `${where} context`).toEqual(exp.context);
  if (exp.warnings !== undefined) expect(run.warnings, `${where} warnings`).toHaveLength(exp.warnings);
  if (exp.meta !== undefined) checkPartial(run.meta, exp.meta, `${where} meta`);
  if (run.format === 'iostat') checkIostat(run, exp, where);
  else if (run.format === 'diskperf') checkDiskperf(run, exp, where);
  else throw new Error(`${where}: a fio run among the log fixtures`);
}

describe('fixtures match their expected.json', () => {
  for (const c of fixtureLogs()) {
    const name = `${c.platform}/${c.name}`;
    it(name, async () => {
      const expected = JSON.parse(readFileSync(c.expected, 'utf8')) as Expected;
      let parsed: ParsedFile | undefined;
      let error: unknown;
      try {
        parsed = await parseFile(c.log, { source: name });
      } catch (e) {
        error = e;
      }
      if (expected.error) {
        expect(error, 'a ParseError').toBeInstanceOf(ParseError);
        if (expected.error.line !== undefined) expect((error as ParseError).line).toBe(expected.error.line);
        if (expected.error.contains) expect((error as ParseError).message).toContain(expected.error.contains);
        return;
      }
      if (error) throw error;
      if (expected.format) expect(parsed!.format).toBe(expected.format);
      expect(parsed!.runs, 'runs').toHaveLength(expected.runs!.length);
      expected.runs!.forEach((exp, i) => checkRun(parsed!.runs[i]!, exp, `run ${i}`));
    });
  }
});
