/**
 * Fuzzing the parsers and the selector grammar, a few hundred cases per target
 * (npm run test:stress runs the same properties 100,000 times: test/stress/fuzz.stress.ts),
 * and every counterexample the fuzzers found, kept as a plain test: each of these
 * failed against the code as it was (a value of Infinity or 1e200 stored, a sample
 * counted twice in a summary, a thousand warnings on one run, a time stamp that
 * is not one). The parser targets are the damaged real logs of every format,
 * sysstat JSON documents of any shape, and logs cut into parts (parallel.ts):
 * nothing but a ParseError may end a parse, within CASE_TIME_LIMIT_MS. The
 * selectors' findings are in selectors.test.ts; the JSON and parallel findings in
 * parsers/json-shapes.test.ts and parsers/parallel.test.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DiskperfRun, IostatRun, Run } from '../../shared/model.ts';
import { MAX_VALUE } from '../../shared/parsers/numbers.ts';
import { ParseError, parseStream, parseText } from '../../shared/parsers/index.ts';
import { MAX_WARNINGS } from '../../shared/parsers/types.ts';
import { fuzz, fuzzCases } from '../support/fuzz/cases.ts';
import { checkParse, parserProperty, parserTargets } from '../support/fuzz/parsers.ts';
import { globProperty, selectorProperty } from '../support/fuzz/selectors.ts';
import { FIXTURES_DIR } from '../support/fixtures.ts';

const fixture = (path: string) => readFileSync(`${FIXTURES_DIR}/${path}`, 'utf8');
const REDUX = fixture('irix/irix-6.5-indy-scsi2sd-redux.diskperf.txt');
const SOLARIS_XN = fixture('solaris/solaris-10-xn.iostat.txt');
const LINUX_JSON = fixture('linux/linux-sysstat-12.7.5-x-json.json');

async function parsed(text: string, mode: 'text' | 'ingest' = 'text'): Promise<Run[]> {
  if (mode === 'text') {
    const file = await parseText(text, 'finding.txt');
    checkParse(
      { runs: file.runs, streamed: new Map(), result: { lines: file.lines, runs: file.runs.length } },
      { mode: 'text' },
    );
    return file.runs;
  }
  const runs: Run[] = [];
  await parseStream([Buffer.from(text)], {
    source: 'finding.txt',
    keepSamples: false,
    onIostatSample: () => undefined,
    onRun: (r) => runs.push(r),
  });
  return runs;
}

describe('fuzzing the parsers (a sample of the stress run)', () => {
  for (const target of parserTargets()) {
    it(`${target.name}: a ParseError or a parse that holds up, in time`, async () => {
      const finding = await fuzz(target.name, parserProperty(target), fuzzCases('test', target.budget));
      expect(finding.failed, finding.report).toBe(false);
      expect(finding.cases).toBe(fuzzCases('test', target.budget));
    });
  }
});

describe('fuzzing the selectors', () => {
  it('any selector text: a SelectorError, or a selector within its limits that matches anything without throwing', async () => {
    const finding = await fuzz('selectors', selectorProperty(), fuzzCases('test', 'selectors'));
    expect(finding.failed, finding.report).toBe(false);
  });

  it('device and host patterns match what a reference matcher says, quickly', async () => {
    const finding = await fuzz('globs', globProperty(), fuzzCases('test', 'selectors'));
    expect(finding.failed, finding.report).toBe(false);
  });
});

describe('counterexamples the fuzzers found', () => {
  it('diskperf: a value of 1e309 (it reads as Infinity) or 1e200 skips its row with a warning', async () => {
    const text = REDUX.replace('   4096    2.84    5.96', '   4096   1e309    5.96').replace(
      '   8192    2.52',
      '   8192   1e200',
    );
    const run = (await parsed(text))[0] as DiskperfRun;
    expect(run.rows.map((r) => r.req_size)).not.toContain(4096);
    expect(run.rows.map((r) => r.req_size)).not.toContain(8192);
    expect(run.rows).toHaveLength(9);
    expect(run.warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^fwd_wt is Infinity, more than any disk does/),
      expect.stringMatching(/^fwd_wt is 1e\+200, more than any disk does/),
    ]);
  });

  it('diskperf: request sizes, file size and parameters too large to hold exactly are not numbers', async () => {
    const huge = `1${'0'.repeat(400)}`;
    const text = REDUX.replace('min=4096', `min=${huge}`)
      .replace('delay=0.000', 'delay=1e999')
      .replace('1073741824 bytes', `${huge} bytes`)
      .replace('\n       4096 ', `\n${huge} `);
    const run = (await parsed(text))[0] as DiskperfRun;
    expect(run.meta.requestSizes).toBeUndefined();
    expect(run.meta.fileSizeBytes).toBeUndefined();
    expect(run.meta.parameters?.['delay']).toBe('1e999');
    expect(run.rows.every((r) => Number.isSafeInteger(r.req_size))).toBe(true);
    expect(run.rows).toHaveLength(10);
  });

  it('diskperf: a thousand empty tables after a good one leave a hundred warnings and a count of the rest', async () => {
    const empty = REDUX.split('\n').slice(0, 16).join('\n');
    const run = (await parsed([REDUX, ...Array<string>(1000).fill(empty)].join('\n')))[0]!;
    expect(run.warnings).toHaveLength(MAX_WARNINGS + 1);
    expect(run.warnings.at(-1)!.message).toBe(`${1000 - MAX_WARNINGS} more warnings not shown`);
  });

  it('iostat: a row holding 1e309 or 1e200 is ignored with a warning, and the summaries stay finite', async () => {
    const lines = SOLARIS_XN.split('\n');
    lines[9] = lines[9]!.replace('156.2', '1e309');
    lines[10] = lines[10]!.replace('148.8', '1e200');
    const run = (await parsed(lines.join('\n')))[0] as IostatRun;
    expect(run.warnings.map((w) => [w.line, w.message])).toEqual([
      [10, `row skipped: r/s is Infinity, more than any disk does (values stay under ${MAX_VALUE})`],
      [11, `row skipped: r/s is 1e+200, more than any disk does (values stay under ${MAX_VALUE})`],
    ]);
    const c1t0d0 = run.series.find((s) => s.device === 'c1t0d0')!;
    expect(c1t0d0.sampleCount).toBe(2);
    expect(c1t0d0.summary.read_iops).toEqual({ count: 1, mean: 162.4, min: 162.4, max: 162.4, stddev: 0 });
  });

  it('iostat: svc_t in one header and asvc_t in another feed service_ms once per sample', async () => {
    const lines = SOLARIS_XN.split('\n');
    lines[8] = lines[8]!.replace('wsvc_t', ' svc_t');
    const run = (await parsed(lines.join('\n')))[0] as IostatRun;
    expect(run.columns.find((c) => c.name === 'svc_t')).toEqual({ name: 'svc_t', unit: 'ms', factor: 1 });
    const c1t0d0 = run.series.find((s) => s.device === 'c1t0d0')!;
    expect(c1t0d0.summary.service_ms).toEqual({
      count: 2,
      mean: 8.5,
      min: 8.3,
      max: 8.7,
      stddev: expect.closeTo(0.2828, 3),
    });
  });

  it('iostat: a header naming a column twice is no header', async () => {
    const lines = SOLARIS_XN.split('\n');
    lines[8] = lines[8]!.replace(' wait', '  w/s');
    const run = (await parsed(lines.join('\n')))[0] as IostatRun;
    expect(run.columns.filter((c) => c.name === 'w/s')).toHaveLength(1);
    for (const s of run.series)
      for (const summary of Object.values(s.summary)) expect(summary.count).toBeLessThanOrEqual(s.sampleCount);
  });

  it('sysstat JSON: the same device again in a report, first key different, is a new report, not a second count of its columns', async () => {
    const first = '{"disk_device": "sda", "r/s": 1.00, "rkB/s": 10.00}';
    const again = '{"disk_device": "sda", "w/s": 2.00, "rkB/s": 30.00}';
    const text = [
      '{"sysstat": {',
      '"hosts": [',
      '{',
      '"nodename": "h",',
      '"statistics": [',
      '{',
      '"timestamp": "01/15/2024 10:00:01 AM",',
      '"disk": [',
      `${first},`,
      again,
      ']',
      '}',
      ']',
      '}',
      ']',
      '}}',
    ].join('\n');
    const run = (await parsed(text))[0] as IostatRun;
    expect(run.reports).toBe(2);
    expect(run.series[0]!.sampleCount).toBe(2);
    expect(run.series[0]!.summary.read_kBps).toEqual({ count: 1, mean: 30, min: 30, max: 30, stddev: 0 });
  });

  it('sysstat JSON: Infinity values, a CPU count past 2^53 and a damaged time stamp are not kept', async () => {
    const text = LINUX_JSON.replace('"number-of-cpus": 4', '"number-of-cpus": 1e999')
      .replace('10:00:06 AM', '1e309:00:06 AM')
      .replace('"r/s": 8.12', '"r/s": 1e999');
    const run = (await parsed(text))[0] as IostatRun;
    expect(run.meta.cpus).toBeUndefined();
    const nvme = run.series.find((s) => s.device === 'nvme0n1')!;
    // Report 0 of nvme0n1 held the Infinity: its samples are reports 1 (the damaged stamp) and 2.
    expect(nvme.samples!.map((s) => [s.report, s.time])).toEqual([
      [1, undefined],
      [2, '2024-01-15T10:00:11'],
    ]);
    expect(run.warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^row skipped: r\/s is Infinity/),
      expect.stringMatching(/^timestamp "01\/15\/2024 1e309:00:06 AM" is not a date and time benchdrop reads/),
    ]);
  });

  it('Linux banner: a CPU count past 2^53 is not kept', async () => {
    const text = fixture('linux/linux-sysstat-12.7.5-x.txt').replace(/\(\d+ CPU\)/, `(${'9'.repeat(400)} CPU)`);
    const run = (await parsed(text))[0] as IostatRun;
    expect(run.meta.cpus).toBeUndefined();
  });

  it('the streaming (ingest) path refuses the same rows as the whole-file path', async () => {
    const lines = SOLARIS_XN.split('\n');
    lines[9] = lines[9]!.replace('156.2', '1e309');
    const [streamed] = (await parsed(lines.join('\n'), 'ingest')) as IostatRun[];
    expect(streamed!.warnings).toHaveLength(1);
    expect(
      Object.values(streamed!.series[0]!.summary).every((s) => Number.isFinite(s.mean) && Number.isFinite(s.stddev)),
    ).toBe(true);
  });

  it('a time stamp whose year a flipped bit made 0019 is no time (it printed as 19-12-14T12:20:45)', async () => {
    const diskperf = (
      await parsed(
        fixture('irix/irix-6.5-indy-scsi2sd-10M-sync.diskperf.txt').replace('12:20:45 2019', '12:20:45 0019'),
      )
    )[0] as DiskperfRun;
    expect(diskperf.meta.testDate).toBe('Sat Dec 14 12:20:45 0019');
    expect(diskperf.meta.startedAt).toBeUndefined();
    // parsed() checks every sample time is ISO 8601; the damaged stamp is simply not one.
    const runs = (await parsed(
      fixture('solaris/solaris-10-xn-Td.iostat.txt').replace('10:15:07 UTC 2014', '10:15:07 UTC 0014'),
    )) as IostatRun[];
    const times = runs.flatMap((r) => r.series.flatMap((s) => s.samples!.map((x) => x.time)));
    expect(times).toContain('2014-03-04T10:15:02Z');
    expect(times.filter((t) => t?.includes('10:15:07'))).toEqual([]);
  });

  it('a ParseError is still what plain garbage gets', async () => {
    await expect(parseText('\u0000\u0001binary')).rejects.toBeInstanceOf(ParseError);
  });
});
