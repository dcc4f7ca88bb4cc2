/**
 * The wrapper rules (shared/parsers/wrappers.ts, applied by lines.ts and the iostat
 * header reader): each rule on its own, and the property that every text fixture
 * wrapped in any of the ways pastes wrap logs (a C comment, `#` comments, Perl strings
 * in comments, `> ` quoting, indentation, HTML tags, a header token split in two)
 * parses to the same records as the bare log, in chunks of any size.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IostatRun, Run } from '../../../shared/model.ts';
import { parseStream, parseText } from '../../../shared/parsers/index.ts';
import { headerLayout } from '../../../shared/parsers/iostat-sessions.ts';
import { rejoinSplitToken, splitPrefix, stripEdgeTags, stripPrefix } from '../../../shared/parsers/wrappers.ts';
import { fixtureLogs } from '../../support/fixtures.ts';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS) > 0 ? Number(process.env.FC_NUM_RUNS) : 120;

describe('the rules one by one', () => {
  it('finds the block prefixes a line may carry, longest first, and the text behind each', () => {
    expect(splitPrefix('\t *     r/s    w/s device')).toEqual([
      { prefix: { core: '*', quoted: false }, body: 'r/s    w/s device' },
    ]);
    expect(splitPrefix('#   "    0.1    0.3 d5",')).toEqual([
      { prefix: { core: '#   "', quoted: true }, body: '0.1    0.3 d5' },
      { prefix: { core: '#', quoted: false }, body: '"    0.1    0.3 d5",' },
    ]);
    expect(splitPrefix(' * --Device: r/s').map((s) => s.prefix.core)).toEqual(['*']);
    expect(splitPrefix('-- Device: r/s').map((s) => s.prefix.core)).toEqual(['--']);
    expect(splitPrefix('    0.1 0.3 d5')).toEqual([]);
    expect(splitPrefix('-1.5 2.0 sda')).toEqual([]);
  });

  it('takes a block prefix off the lines that carry it and says when one does not', () => {
    const star = { core: '*', quoted: false };
    expect(stripPrefix('\t *     0.9    2.8 d0', star)).toBe('     0.9    2.8 d0');
    expect(stripPrefix('\t *', star)).toBe('');
    expect(stripPrefix('\t */', star)).toBe('/');
    expect(stripPrefix('int main(void)', star)).toBeUndefined();
    const perl = { core: '#   "', quoted: true };
    expect(stripPrefix('#   "    0.3   23.8 c0t0d0\\n",', perl)).toBe('    0.3   23.8 c0t0d0');
  });

  it('strips HTML tags at the ends of a line, entities decoded', () => {
    expect(stripEdgeTags('  134.4  353.2   0  56 c0t21d0</pre>')).toEqual({
      text: '  134.4  353.2   0  56 c0t21d0',
      tags: '</pre>',
    });
    expect(stripEdgeTags('<p><tt>iostat &#45;xzn 5</tt></p>')?.text).toBe('iostat -xzn 5');
    expect(stripEdgeTags('sda 1.0 2.0')).toBeUndefined();
    expect(stripEdgeTags('a < b and c > d')).toBeUndefined();
  });

  it('joins a header token split in two only where the header then reads', () => {
    const tokens = 'Device: rrqm/s wrqm/s r/s w/s rkB/s wkB/s a vgrq-sz avgqu-sz await svctm %util'.split(' ');
    const joined = rejoinSplitToken(tokens, headerLayout);
    expect(joined?.joined).toBe('avgrq-sz');
    expect(joined?.result.columns.map((c) => c.name)).toContain('avgrq-sz');
    expect(headerLayout(tokens)?.repair).toBe('header token "a vgrq-sz" read as "avgrq-sz"');
    expect(headerLayout('the quick brown fox jumps'.split(' '))).toBeUndefined();
  });
});

describe('pastes as they come', () => {
  it('a Solaris table quoted in a C comment keeps its rows and devices', async () => {
    const text = [
      '/*',
      ' * BEGINDATA',
      ' *     r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device',
      ' *     0.9    2.8    7.3    1.8  0.0  0.0    2.7    9.3   1   2 d0',
      ' *     0.1    0.3    0.8    0.5  0.0  0.0    5.2   11.0   0   0 d5',
      ' * ENDDATA',
      ' */',
    ].join('\n');
    const [run] = (await parseText(text, 'c.txt')).runs as IostatRun[];
    expect(run!.series.map((s) => s.device)).toEqual(['d0', 'd5']);
    expect(run!.series[1]!.samples![0]!.raw['w/s']).toBe(0.3);
  });

  it('a row with a closing tag glued to its device keeps the device and warns', async () => {
    const text = [
      '<pre>$ iostat -xn 5',
      '    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device',
      '  130.6  351.8  367.2 5040.3  0.0  2.1    0.0    4.3   0  55 c0t17d0',
      '  134.4  353.2  372.7 5033.1  0.0  2.1    0.0    4.3   0  56 c0t21d0</pre>',
    ].join('\n');
    const [run] = (await parseText(text, 'page.html')).runs as IostatRun[];
    expect(run!.series.map((s) => s.device)).toEqual(['c0t17d0', 'c0t21d0']);
    expect(run!.context).toEqual(['iostat -xn 5']);
    expect(run!.warnings.map((w) => [w.line, w.message])).toEqual([[4, 'HTML tags taken off the line: </pre>']]);
  });

  it('a header mangled by the paste (`--Device:`) is read', async () => {
    const text = [
      '--Device: rrqm/s wrqm/s r/s w/s rkB/s wkB/s avgrq-sz avgqu-sz await svctm %util',
      'sda 0.00 1.00 2.00 3.00 16.00 24.00 8.00 0.10 1.50 0.40 0.90',
    ].join('\n');
    const [run] = (await parseText(text, 'm.txt')).runs as IostatRun[];
    expect(run!.series[0]!.samples![0]!.values.write_kBps).toBe(24);
  });
});

// ---------------------------------------------------------------- the property

type Wrap = (lines: string[], bits: number) => string[];

const WRAPS: Record<string, Wrap> = {
  'C comment': (lines) => ['\t/*', ...lines.map((l) => (l.length > 0 ? `\t * ${l}` : '\t *')), '\t */'],
  '# comments': (lines) => lines.map((l) => (l.length > 0 ? `# ${l}` : '#')),
  'Perl strings in comments': (lines) => lines.map((l) => `#   "${l}",`),
  '> quoting': (lines) => lines.map((l) => `> ${l}`),
  indentation: (lines) => lines.map((l) => `    ${l}`),
  'HTML pre': (lines) => [`<pre class="code">${lines[0] ?? ''}`, ...lines.slice(1, -1), `${lines.at(-1) ?? ''}</pre>`],
  'a tag after every row': (lines) => lines.map((l) => (l.trim().length > 0 ? `${l}<br/>` : l)),
  'an indented tag before every line': (lines) => lines.map((l) => `  <span class="log">${l.trimStart()}`),
  'a header token split': splitHeaderTokens,
};

/** Every header line with one of its tokens split by a space at the same place (the paste's damage). */
function splitHeaderTokens(lines: string[], bits: number): string[] {
  return lines.map((line) => {
    const tokens = line.trim().split(/\s+/);
    if (headerLayout(tokens) === undefined) return line;
    const candidates = tokens.map((t, i) => [t, i] as const).filter(([t]) => t.length >= 3 && /[a-z]/i.test(t));
    if (candidates.length === 0) return line;
    const [token, at] = candidates[bits % candidates.length]!;
    const cut = 1 + ((bits >>> 8) % (token.length - 1));
    const split = [...tokens.slice(0, at), `${token.slice(0, cut)} ${token.slice(cut)}`, ...tokens.slice(at + 1)];
    // Some cuts leave a header of its own (`%util` -> `% util`? no; `r/s` -> `r /s`): only those that do not are damage.
    return headerLayout(split.join(' ').split(' ')) !== undefined ? split.join(' ') : line;
  });
}

/** What a run says about the disks, without where in the file it said it (the wrapping moves lines). */
function records(runs: Run[]): unknown[] {
  return runs.map((run) => {
    if (run.format !== 'iostat') return run;
    return {
      platform: run.platform,
      dialect: run.dialect,
      name: run.name,
      context: run.context,
      meta: run.meta,
      columns: run.columns,
      reports: run.reports,
      series: run.series.map((s) => ({
        device: s.device,
        mount: s.mount,
        sampleCount: s.sampleCount,
        summary: s.summary,
        samples: s.samples?.map(({ report, sinceBoot, values, raw, time }) => ({
          report,
          sinceBoot,
          values,
          raw,
          time,
        })),
      })),
    };
  });
}

async function parseLines(lines: string[], chunk: number): Promise<unknown[]> {
  const bytes = Buffer.from(lines.join('\n'), 'utf8');
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) chunks.push(bytes.subarray(i, i + chunk));
  const runs: Run[] = [];
  await parseStream(chunks, { source: 'wrapped.txt', onRun: (run) => runs.push(run) });
  return records(runs);
}

/** The bare logs: the fixtures that are themselves wrapped (a page, a comment, strings) are what this makes. */
const WRAPPED_FIXTURE = /html|c-comment|perl-strings|hash-commented/;
const TEXT_LOGS = fixtureLogs().filter(
  (f) => f.parses && f.platform !== 'irix' && !f.name.endsWith('.json') && !WRAPPED_FIXTURE.test(f.name),
);

describe('any log wrapped in any of these ways parses to the same records as the bare log', () => {
  it('every iostat text fixture, every wrapping, chunks of any size', async () => {
    const bare = new Map<string, unknown[]>();
    for (const log of TEXT_LOGS) bare.set(log.name, await parseLines(lines(log.log), 1 << 20));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...TEXT_LOGS),
        fc.constantFrom(...Object.keys(WRAPS)),
        fc.nat(),
        fc.oneof(fc.constant(1 << 20), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 65, max: 4096 })),
        async (log, wrap, bits, chunk) => {
          const wrapped = WRAPS[wrap]!(lines(log.log), bits);
          expect(await parseLines(wrapped, chunk), `${log.name} in ${wrap}`).toEqual(bare.get(log.name));
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});

function lines(path: string): string[] {
  return readFileSync(path, 'utf8').replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
}
