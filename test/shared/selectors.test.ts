import { describe, expect, it } from 'vitest';
import { globMatches, matches, parseSelector, planSelector, SelectorError, type SelectorCandidate } from '../../shared/selectors.ts';
import { referenceGlobMatch } from '../support/fuzz/selectors.ts';

const candidate: SelectorCandidate = {
  device: 'x4100/c0t0d0',
  runId: 'r0123456789abcdef01234567',
  host: 'isengard',
  format: 'iostat',
  tags: { interface: 'SAS', rpm: '10000' },
  context: ['tunefs -a 1 /opt', 'iostat -xnz 5 2'],
};

describe('selectors', () => {
  it('a bare word is a device glob; terms must all hold', () => {
    expect(matches(parseSelector('x4100/*'), candidate)).toBe(true);
    expect(matches(parseSelector('x4100/c?t0d0, tag.interface=SAS, format=iostat'), candidate)).toBe(true);
    expect(matches(parseSelector('x4100/*,tag.interface=SCSI'), candidate)).toBe(false);
    expect(matches(parseSelector('device=x4100'), candidate)).toBe(false);
  });

  it('host globs, run ids and context substrings', () => {
    expect(matches(parseSelector('host=isen*'), candidate)).toBe(true);
    expect(matches(parseSelector('run=r0123456789abcdef01234567'), candidate)).toBe(true);
    expect(matches(parseSelector('context~tunefs -a 1 '), candidate)).toBe(true);
    expect(matches(parseSelector('context~tunefs -a 16'), candidate)).toBe(false);
  });

  it('glob characters other than * and ? are literal', () => {
    expect(matches(parseSelector('x4100/c0t0d0.'), { ...candidate, device: 'x4100/c0t0d0x' })).toBe(false);
    expect(matches(parseSelector('a+b (2)'), { ...candidate, device: 'a+b (2)' })).toBe(true);
  });

  it('bad terms are errors that say what is allowed', () => {
    expect(() => parseSelector('')).toThrow(SelectorError);
    expect(() => parseSelector('format=zfs')).toThrow(/format is one of diskperf, iostat/);
    expect(() => parseSelector('colour=red')).toThrow(/unknown term "colour"; expected comma-separated terms/);
    expect(() => parseSelector('run=42')).toThrow(/r followed by 24 hex digits/);
    expect(() => parseSelector('tag.k=v v')).toThrow(/tag keys and values/);
    expect(() => parseSelector('a,'.repeat(11))).toThrow(/at most 10/);
    expect(() => parseSelector('x'.repeat(600))).toThrow(/longer than 512/);
    expect(() => parseSelector('host~x')).toThrow(/only context~TEXT/);
  });

  it('plans a lookup by run, exact device, tag, device prefix or all devices, narrowest first', () => {
    expect(planSelector(parseSelector('run=r0123456789abcdef01234567,sas'))).toEqual({ by: 'run', runId: 'r0123456789abcdef01234567' });
    expect(planSelector(parseSelector('sas10k'))).toEqual({ by: 'device', exact: 'sas10k' });
    expect(planSelector(parseSelector('x4100/c*'))).toEqual({ by: 'devicePrefix', prefix: 'x4100/c' });
    expect(planSelector(parseSelector('*/c0t0d0'))).toEqual({ by: 'allDevices' });
    expect(planSelector(parseSelector('format=iostat,host=isen*'))).toEqual({ by: 'allDevices' });
    // A tag term is looked up in the tag index, unless the selector names one device or run.
    expect(planSelector(parseSelector('tag.interface=SAS'))).toEqual({ by: 'tag', key: 'interface', value: 'SAS' });
    expect(planSelector(parseSelector('*/c0t0d0,tag.rpm=10000,tag.interface=SAS'))).toEqual({ by: 'tag', key: 'rpm', value: '10000' });
    expect(planSelector(parseSelector('x4100/c*,tag.interface=SAS'))).toEqual({ by: 'tag', key: 'interface', value: 'SAS' });
    expect(planSelector(parseSelector('tag.interface=SAS,sas10k'))).toEqual({ by: 'device', exact: 'sas10k' });
  });

  it('a pattern that made the regular expression backtrack for hours (found by fuzzing) matches in microseconds', () => {
    const glob = `${'*a'.repeat(60)}*b`;
    const started = performance.now();
    expect(globMatches(glob, 'a'.repeat(128))).toBe(false);
    expect(matches(parseSelector(`device=${glob}`), { ...candidate, device: 'a'.repeat(128) })).toBe(false);
    expect(performance.now() - started).toBeLessThan(50);
    expect(globMatches(glob, `${'a'.repeat(60)}b`)).toBe(true);
  });

  it('patterns match as the obvious dynamic-programming matcher says', () => {
    const cases: [string, string][] = [
      ['x4100/*', 'x4100/c0t0d0'],
      ['x4100/c?t0d0', 'x4100/c1t0d0'],
      ['a+b (2)', 'a+b (2)'],
      ['x4100/c0t0d0.', 'x4100/c0t0d0x'],
      ['*', ''],
      ['?', ''],
      ['a*b*c', 'abbbc'],
      ['a*b*c', 'acb'],
      ['*a*', 'bab'],
      ['**a', 'xa'],
      ['[a]', 'a'],
      ['.*', 'x'],
    ];
    for (const [glob, text] of cases) expect(globMatches(glob, text), `${glob} ~ ${text}`).toBe(referenceGlobMatch(glob, text));
    expect(cases.filter(([g, t]) => globMatches(g, t)).map(([g]) => g)).toEqual(['x4100/*', 'x4100/c?t0d0', 'a+b (2)', '*', 'a*b*c', '*a*', '**a']);
  });
});
