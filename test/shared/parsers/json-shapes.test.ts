/**
 * sysstat `iostat -o JSON` of the wrong shape (issue 13): whatever stands where
 * an object, an array or a number belongs, at any depth, the parse ends in a
 * ParseError that names the place and the line, or in runs with the unreadable
 * entries skipped and warned about; never in a TypeError.
 */
import { describe, expect, it } from 'vitest';
import type { IostatRun } from '../../../shared/model.ts';
import { ParseError, parseText } from '../../../shared/parsers/index.ts';

async function parseError(text: string): Promise<ParseError> {
  const error = await parseText(text, 'x.json').catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ParseError);
  return error as ParseError;
}

const doc = (hosts: string) => `{"sysstat":{"hosts":${hosts}},"disk_device":"x"}`;
const stats = (statistics: string) => doc(`[{"nodename":"h","statistics":${statistics}}]`);
const disks = (disk: string) => stats(`[{"timestamp":"01/15/2024 10:00:01 AM","disk":${disk}}]`);

describe('a one-line document of the wrong shape is a ParseError naming the place', () => {
  it.each([
    ['hosts holding null', doc('[null]'), 'sysstat.hosts[0] is null', 'an object with "nodename" and "statistics"'],
    ['hosts an object', doc('{"a":1}'), 'sysstat.hosts is an object', 'an array of hosts'],
    [
      'sysstat a string',
      '{"sysstat":"x","disk_device":"x","hosts":1}',
      'sysstat is a string ("x")',
      'an object with "hosts"',
    ],
    ['statistics a number', stats('5'), 'sysstat.hosts[0].statistics is a number (5)', 'an array of reports'],
    [
      'a report that is an array',
      stats('[[]]'),
      'sysstat.hosts[0].statistics[0] is an array of 0',
      'an object with "timestamp" and "disk"',
    ],
    [
      'disk an object',
      disks('{"disk_device":"sda"}'),
      'sysstat.hosts[0].statistics[0].disk is an object',
      'an array of disk objects',
    ],
    [
      'disk a string',
      disks('"sda"'),
      'sysstat.hosts[0].statistics[0].disk is a string ("sda")',
      'an array of disk objects',
    ],
    [
      'a second host false',
      doc('[{"nodename":"h","statistics":[]},false]'),
      'sysstat.hosts[1] is a boolean (false)',
      'an object with "nodename" and "statistics"',
    ],
  ])('%s', async (_what, text, problem, expected) => {
    const error = await parseError(text);
    expect(error.line).toBe(1);
    expect(error.problem).toBe(`sysstat JSON of the wrong shape: ${problem}`);
    expect(error.expected).toContain(expected);
    expect(error.message).toMatch(/^x\.json:1: sysstat JSON of the wrong shape: /);
  });
});

describe('a one-line document with no disk_device anywhere is checked the same', () => {
  it.each([
    [
      'statistics a number',
      '{"sysstat":{"hosts":[{"nodename":"h","statistics":7}]}}',
      'sysstat JSON of the wrong shape: sysstat.hosts[0].statistics is a number (7)',
    ],
    [
      'disk an object',
      '{"sysstat":{"hosts":[{"nodename":"h","statistics":[{"disk":{"a":1}}]}]}}',
      'sysstat JSON of the wrong shape: sysstat.hosts[0].statistics[0].disk is an object',
    ],
    ['no disk at all', '{"sysstat":{"hosts":[{"nodename":"h","statistics":[]}]}}', 'sysstat JSON with no disk entries'],
  ])('%s', async (_what, text, problem) => {
    const error = await parseError(`\n${text}\n`);
    expect(error.line).toBe(2);
    expect(error.problem).toBe(problem);
  });
});

describe('disk entries that cannot be read are skipped, and named when nothing else is left', () => {
  it.each([
    ['[null]', 'sysstat.hosts[0].statistics[0].disk[0] is null, not a disk object; ignored'],
    ['[[1,2]]', 'sysstat.hosts[0].statistics[0].disk[0] is an array of 2, not a disk object; ignored'],
    [
      '[{"disk_device":7,"r/s":1}]',
      'sysstat.hosts[0].statistics[0].disk[0] has "disk_device" a number (7), not a device name; ignored',
    ],
    ['[{"disk_device":"sda","r/s":{"v":1}}]', 'row skipped: r/s is not a number'],
    ['[{"disk_device":"sda","r/s":true}]', 'row skipped: r/s is not a number'],
    [
      '[{"disk_device":"sda","r/s":1e400}]',
      'row skipped: r/s is Infinity, more than any disk does (values stay under 1000000000000000)',
    ],
  ])('disk %s', async (disk, message) => {
    const error = await parseError(disks(disk));
    expect(error.line).toBe(1);
    expect(error.problem).toBe(`no disk entry could be read: ${message}`);
  });

  it('the readable entries of the same report are kept, the others warned about', async () => {
    const file = await parseText(
      disks('[null,{"disk_device":"sda","r/s":"1.50","w/s":2},"x",{"disk_device":"sdb","r/s":[1]}]'),
      'x.json',
    );
    const run = file.runs[0] as IostatRun;
    expect(run.series.map((s) => [s.device, s.samples![0]!.raw])).toEqual([['sda', { 'r/s': 1.5, 'w/s': 2 }]]);
    expect(run.warnings.map((w) => [w.line, w.message])).toEqual([
      [1, 'sysstat.hosts[0].statistics[0].disk[0] is null, not a disk object; ignored'],
      [1, 'sysstat.hosts[0].statistics[0].disk[2] is a string ("x"), not a disk object; ignored'],
      [1, 'row skipped: r/s is not a number'],
    ]);
  });

  it('a key "__proto__" is ignored with a warning, not taken for the prototype of the values', async () => {
    const file = await parseText(disks('[{"disk_device":"sda","__proto__":{"r/s":99},"w/s":2}]'), 'x.json');
    const run = file.runs[0] as IostatRun;
    const sample = run.series[0]!.samples![0]!;
    expect(sample.raw).toEqual({ 'w/s': 2 });
    expect(Object.getPrototypeOf(sample.raw)).toBe(Object.prototype);
    expect(run.columns.map((c) => c.name)).toEqual(['w/s']);
    expect(run.warnings.map((w) => w.message)).toEqual([
      'key "__proto__" of sysstat.hosts[0].statistics[0].disk[0] ignored: no iostat column is called that',
    ]);
  });

  it('metadata and time stamps of the wrong type are left out, the time with a warning', async () => {
    const text = doc(
      '[{"nodename":["h"],"number-of-cpus":-4,"statistics":[{"timestamp":12,"disk":[{"disk_device":"sda","r/s":1}]}]}]',
    );
    const run = (await parseText(text, 'x.json')).runs[0] as IostatRun;
    expect(run.name).toBe('');
    expect(run.meta).toEqual({});
    expect(run.series[0]!.samples![0]!.time).toBeUndefined();
    expect(run.warnings.map((w) => w.message)).toEqual([
      'timestamp a number (12) is not a date and time benchdrop reads; the report is kept without a time',
    ]);
  });
});

describe('the line-by-line form', () => {
  const lines = (disk: string) =>
    [
      '{"sysstat": {',
      '"hosts": [',
      '{',
      '"nodename": "h",',
      '"statistics": [',
      '{',
      '"timestamp": "01/15/2024 10:00:01 AM",',
      '"disk": [',
      disk,
      ']',
      '}',
      ']',
      '}',
      ']',
      '}}',
    ].join('\n');

  it('a disk line holding an array, or a disk_device that is no name, is skipped at its line', async () => {
    const text = lines('["disk_device", 1],\n{"disk_device": null, "r/s": 1},\n{"disk_device": "sda", "r/s": 1.0}');
    const run = (await parseText(text, 'x.json')).runs[0] as IostatRun;
    expect(run.series.map((s) => s.device)).toEqual(['sda']);
    expect(run.warnings.map((w) => [w.line, w.message])).toEqual([
      [9, 'the disk entry is an array of 2, not a disk object; ignored'],
      [10, 'the disk entry has "disk_device" null, not a device name; ignored'],
    ]);
  });

  it('a line holding a whole document is walked; broken, it is a ParseError at its line', async () => {
    const error = await parseError(`prose\n${disks('[{"disk_device":"sda","r/s":1}')}`);
    expect([error.line, error.problem]).toEqual([2, 'a sysstat JSON document that does not parse']);
  });
});

describe('runs of a one-line document', () => {
  it('every host is a run on line 1, the one before it ending there too', async () => {
    const entry = (host: string) => `{"nodename":"${host}","statistics":[{"disk":[{"disk_device":"sda","r/s":1}]}]}`;
    const file = await parseText(doc(`[${entry('a')},${entry('b')},{}]`), 'x.json');
    expect(file.runs.map((r) => [r.name, r.startLine, r.endLine])).toEqual([
      ['a', 1, 1],
      ['b', 1, 1],
    ]);
  });
});
