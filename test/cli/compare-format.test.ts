/**
 * `benchdrop compare A B --format text|csv|md` against a real HTTP peer: csv
 * and md print the comparison's table (shared/comparison/table.ts) from the
 * API's JSON and nothing else; text is the table with how to read it and the
 * runs' setups side by side, `*` on what differs; a bad --format, or --format
 * beside --json, is refused before the API is asked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/program.ts';
import {
  compareObservations,
  comparisonTable,
  tableCsv,
  tableMarkdown,
  type Comparison,
  type Observation,
} from '../../shared/compare.ts';
import { captureOutput, startFakeApi, type FakeApi } from './fake-api.ts';

let api: FakeApi;
let cwd: string;
let comparison: Comparison;

/** A run of one disk; `host` and the tags are what the setups tell apart. */
const obs = (runId: string, host: string, reads: number, rpm: string): Observation => ({
  runId,
  device: `${host}/sda`,
  label: host,
  native: 'sda',
  format: 'iostat',
  platform: 'linux',
  host,
  values: { read_iops: reads, write_iops: reads / 2 },
  samples: 10,
  about: { tags: { rpm }, version: 'Linux 6.1.0', command: 'iostat -x 5 3' },
});

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'benchdrop-compare-format-'));
  comparison = compareObservations(
    [obs('a1', 'tuned', 200, '15000'), obs('a2', 'tuned', 208, '15000')],
    [obs('b1', 'stock', 100, '7200'), obs('b2', 'stock', 97, '7200')],
    { labels: { a: 'tuned', b: 'stock' } },
  );
  api = await startFakeApi({ 'GET /compare': { body: comparison } });
});

afterAll(async () => {
  await api?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

async function run(...args: string[]) {
  const output = captureOutput();
  const code = await runCli(args, output.io, { env: {}, cwd });
  return { code, out: output.out, err: output.err };
}

describe('compare --format', () => {
  it('csv: the RFC 4180 table of the API answer, nothing more', async () => {
    const { code, out, err } = await run('compare', 'tuned', 'stock', '--format', 'csv', '--api', api.url);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(api.requests.at(-1)!.query).toEqual({ a: 'tuned', b: 'stock', metric: 'all' });
    // The answer as JSON went over the wire: the table is the same one (the capture drops the last \n).
    const expected = tableCsv(comparisonTable(JSON.parse(JSON.stringify(comparison)) as Comparison));
    expect(`${out}\n`).toBe(expected);
    const lines = out.split('\r\n');
    expect(lines[0]).toBe('metric,A ops/s,A spread,n A,B ops/s,B spread,n B,ratio,95% interval,p,~,note,notes');
    expect(lines[1]).toMatch(/^read_iops,204,±2%,2,98\.5,±1\.5%,2,2\.07x,\[/);
  });

  it('md: the GitHub table and its notes', async () => {
    const { code, out } = await run('compare', 'tuned', 'stock', '--format', 'md', '--api', api.url);
    expect(code).toBe(0);
    expect(`${out}\n`).toBe(tableMarkdown(comparisonTable(JSON.parse(JSON.stringify(comparison)) as Comparison)));
    expect(out.split('\n')[0]).toBe('### tuned (A) vs stock (B) on all');
    expect(out).toContain('| read\\_iops | 204 | ±2% | 2 | 98.5 | ±1.5% | 2 | 2.07x |');
  });

  it('text (the default, and by name): the table, its notes, then the setups with * on what differs', async () => {
    const byDefault = await run('compare', 'tuned', 'stock', '--api', api.url);
    const byName = await run('compare', 'tuned', 'stock', '--format', 'text', '--api', api.url);
    expect(byDefault.code).toBe(0);
    expect(byName.out).toBe(byDefault.out);
    const lines = byDefault.out.split('\n');
    expect(lines.slice(0, 2)).toEqual(['A: tuned: 2 runs, iostat', 'B: stock: 2 runs, iostat']);
    expect(lines).toContain('tuned (A) vs stock (B) on all');
    expect(comparison.setups.differs).toEqual(['host', 'tags.rpm']);
    const at = lines.indexOf('setups (4 runs; * differs: host, tags.rpm):');
    expect(at).toBeGreaterThan(lines.indexOf(comparison.sentence));
    expect(lines[at + 1]).toMatch(
      /^ {2}side +run +label +devices +format +platform +version +host\* +samples +command +tags\*$/,
    );
    expect(lines[at + 2]).toMatch(
      /^ {2}A +a1 +tuned +sda +iostat +linux +Linux 6\.1\.0 +tuned +10 +iostat -x 5 3 +rpm=15000\*$/,
    );
    expect(lines.slice(at + 1)).toHaveLength(5);
  });

  it('refuses an unknown format, and --format beside --json, before asking the API', async () => {
    const before = api.requests.length;
    const bad = await run('compare', 'a', 'b', '--format', 'xml', '--api', api.url);
    expect(bad.code).toBe(1);
    expect(bad.err).toBe('error: --format xml: expected text, csv, md');
    const both = await run('compare', 'a', 'b', '--format', 'csv', '--json', '--api', api.url);
    expect(both.code).toBe(1);
    expect(both.err).toBe("error: --json and --format csv: choose one (--json prints the API's JSON)");
    expect(api.requests.length).toBe(before);
  });
});
