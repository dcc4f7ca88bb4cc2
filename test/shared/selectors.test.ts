import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_LABEL_LENGTH } from '../../shared/labels.ts';
import { MAX_DEVICE_NAME_BYTES } from '../../shared/model.ts';
import {
  exactPattern,
  globMatches,
  matches,
  MAX_PATTERN_LENGTH,
  MAX_SELECTOR_LENGTH,
  parsePattern,
  parseSelector,
  SELECTOR_HELP,
  SelectorError,
  type SelectorCandidate,
} from '../../shared/selectors.ts';
import { planSelector } from '../../shared/label-plans.ts';
import { exactNameProperty, referenceGlobMatch } from '../support/fuzz/selectors.ts';

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

  it('format=fio selects fio runs, and the help names every format', () => {
    const fio: SelectorCandidate = { ...candidate, device: 'nvme-ssd', format: 'fio' };
    expect(matches(parseSelector('nvme-*,format=fio'), fio)).toBe(true);
    expect(matches(parseSelector('format=fio'), candidate)).toBe(false);
    expect(SELECTOR_HELP).toContain('format=diskperf|iostat|fio');
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
    expect(() => parseSelector('format=zfs')).toThrow(/format is one of diskperf, iostat, fio/);
    expect(() => parseSelector('colour=red')).toThrow(/unknown term "colour"; expected comma-separated terms/);
    expect(() => parseSelector('run=42')).toThrow(/r followed by 24 hex digits/);
    expect(() => parseSelector('tag.k=v v')).toThrow(/tag keys and values/);
    expect(() => parseSelector('a,'.repeat(11))).toThrow(/at most 10/);
    expect(() => parseSelector('x'.repeat(MAX_SELECTOR_LENGTH + 1))).toThrow(
      new RegExp(`longer than ${MAX_SELECTOR_LENGTH}`),
    );
    expect(() => parseSelector('device=a=b')).toThrow(/an = or ~ in it ends a term name: write \\= or \\~/);
    expect(() => parseSelector('host~x')).toThrow(/only context~TEXT/);
  });

  it('plans a lookup by run, exact device, tag, device prefix or all devices, narrowest first', () => {
    expect(planSelector(parseSelector('run=r0123456789abcdef01234567,sas'))).toEqual({
      by: 'run',
      runId: 'r0123456789abcdef01234567',
    });
    expect(planSelector(parseSelector('sas10k'))).toEqual({ by: 'device', exact: 'sas10k' });
    expect(planSelector(parseSelector('x4100/c*'))).toEqual({ by: 'devicePrefix', prefix: 'x4100/c' });
    expect(planSelector(parseSelector('*/c0t0d0'))).toEqual({ by: 'allDevices' });
    expect(planSelector(parseSelector('format=iostat,host=isen*'))).toEqual({ by: 'allDevices' });
    // A tag term is looked up in the tag index, unless the selector names one device or run.
    expect(planSelector(parseSelector('tag.interface=SAS'))).toEqual({ by: 'tag', key: 'interface', value: 'SAS' });
    expect(planSelector(parseSelector('*/c0t0d0,tag.rpm=10000,tag.interface=SAS'))).toEqual({
      by: 'tag',
      key: 'rpm',
      value: '10000',
    });
    expect(planSelector(parseSelector('x4100/c*,tag.interface=SAS'))).toEqual({
      by: 'tag',
      key: 'interface',
      value: 'SAS',
    });
    expect(planSelector(parseSelector('tag.interface=SAS,sas10k'))).toEqual({ by: 'device', exact: 'sas10k' });
    // Any exact device term names the label; else the longest literal prefix among the patterns.
    expect(planSelector(parseSelector('x4100/*,x4100/c0t0d0'))).toEqual({ by: 'device', exact: 'x4100/c0t0d0' });
    expect(planSelector(parseSelector('*d0,x4100/c*,x4*'))).toEqual({ by: 'devicePrefix', prefix: 'x4100/c' });
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
    for (const [glob, text] of cases)
      expect(globMatches(glob, text), `${glob} ~ ${text}`).toBe(referenceGlobMatch(glob, text));
    expect(cases.filter(([g, t]) => globMatches(g, t)).map(([g]) => g)).toEqual([
      'x4100/*',
      'x4100/c?t0d0',
      'a+b (2)',
      '*',
      'a*b*c',
      '*a*',
      '**a',
    ]);
  });
});

describe('naming any label', () => {
  const label = (text: string) => {
    const [term] = parseSelector(text).terms;
    return term?.kind === 'device' ? term : undefined;
  };

  it('a backslash makes , = ~ * ? and itself literal; before anything else it is a backslash', () => {
    expect(label('device=a\\,b\\*')).toMatchObject({ exact: 'a,b*', prefix: 'a,b*' });
    expect(label('tag.x\\=y')).toMatchObject({ exact: 'tag.x=y' });
    expect(label('run\\=1')).toMatchObject({ exact: 'run=1' });
    expect(label('context\\~tunefs')).toMatchObject({ exact: 'context~tunefs' });
    expect(label('what\\?')).toMatchObject({ exact: 'what?' });
    expect(label('C:\\\\disk')).toMatchObject({ exact: 'C:\\disk' });
    // Not before a special character: a label holding a backslash is written as it is, as before escapes.
    expect(label('C:\\disk')).toMatchObject({ exact: 'C:\\disk' });
    expect(label('ends\\')).toMatchObject({ exact: 'ends\\' });
    // Escaped and real wildcards together: the literal prefix runs to the first real one.
    expect(label('raid\\*5*')).toMatchObject({ prefix: 'raid*5' });
    expect(label('raid\\*5*')?.exact).toBeUndefined();
    expect(parseSelector('a\\,b,format=iostat').terms.map((t) => t.kind)).toEqual(['device', 'format']);
    expect(parseSelector('context~a\\,b').terms).toEqual([{ kind: 'context', text: 'a,b' }]);
  });

  it('an escaped wildcard matches only itself', () => {
    const at = (device: string) => ({ ...candidate, device });
    expect(matches(parseSelector('raid\\*5'), at('raid*5'))).toBe(true);
    expect(matches(parseSelector('raid\\*5'), at('raid-05'))).toBe(false);
    expect(matches(parseSelector('raid\\*5*'), at('raid*5/sda'))).toBe(true);
    expect(matches(parseSelector('raid\\*5*'), at('raidX5/sda'))).toBe(false);
    expect(matches(parseSelector('q\\?'), at('q?'))).toBe(true);
    expect(matches(parseSelector('q\\?'), at('qx'))).toBe(false);
    expect(matches(parseSelector('a\\,b'), at('a,b'))).toBe(true);
  });

  it('exactPattern writes any label so that it names that label and no other', () => {
    for (const name of [
      'a,b=c~d*e?f\\g',
      '*',
      '\\',
      'x4100/c0t0d0',
      'tag.rpm=10000',
      'run=r0123456789abcdef01234567',
      'context~x',
      'device=x',
    ]) {
      const written = exactPattern(name);
      expect(planSelector(parseSelector(written)), written).toEqual({ by: 'device', exact: name });
      expect(planSelector(parseSelector(`device=${written}`)), written).toEqual({ by: 'device', exact: name });
    }
    fc.assert(exactNameProperty(), { numRuns: 500, seed: 13 });
  });

  it('a pattern may be as long as the longest series label, every character escaped; not one longer', () => {
    expect(MAX_PATTERN_LENGTH).toBe(MAX_LABEL_LENGTH + 1 + MAX_DEVICE_NAME_BYTES);
    const longest = `${'L'.repeat(MAX_LABEL_LENGTH)}/${'n'.repeat(MAX_DEVICE_NAME_BYTES)}`;
    expect(label(longest)).toMatchObject({ exact: longest });
    expect(label(`device=${longest}`)).toMatchObject({ exact: longest });
    const stars = '*'.repeat(MAX_PATTERN_LENGTH);
    expect(label(exactPattern(stars))).toMatchObject({ exact: stars });
    expect(() => parseSelector(`${longest}x`)).toThrow(
      new RegExp(`\\(${MAX_PATTERN_LENGTH + 1} characters; at most ${MAX_PATTERN_LENGTH} printable characters`),
    );
    expect(() => parseSelector(`host=${'h'.repeat(MAX_PATTERN_LENGTH + 1)}`)).toThrow(SelectorError);
    // Two such terms fit one selector.
    expect(parseSelector(`device=${exactPattern(stars)},device=${exactPattern(stars)}`).terms).toHaveLength(2);
  });

  it('the GET /runs device parameter takes the same wildcards and escapes; , = ~ are plain characters there', () => {
    expect(parsePattern('a,b=c~d')).toEqual({ glob: 'a,b=c~d', exact: 'a,b=c~d', prefix: 'a,b=c~d' });
    expect(parsePattern('raid\\*5*')).toEqual({ glob: 'raid\\*5*', prefix: 'raid*5' });
    expect(parsePattern('a\\,b')).toMatchObject({ exact: 'a,b' });
    expect(() => parsePattern('x#y')).toThrow(/not a device or host pattern \(it holds "#" or a control character/);
    expect(() => parsePattern('x'.repeat(MAX_PATTERN_LENGTH + 1))).toThrow(SelectorError);
  });

  it('the help text says how to escape', () => {
    expect(SELECTOR_HELP).toContain(
      'a backslash makes the next , = ~ * ? or \\ literal (device=a\\,b\\* is the label "a,b*")',
    );
  });
});
