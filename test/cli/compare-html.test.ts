/**
 * `benchdrop compare A B --html [FILE] [--out FILE]` against a real HTTP peer:
 * without a file the report goes to a new file in the OS temp folder (never the
 * working tree), or to --out, and the path is said on stderr; the file holds the
 * comparison alone (no uploads are asked for or embedded) and stdout keeps the
 * table or JSON only.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/program.ts';
import { compareObservations, type Comparison, type Observation } from '../../shared/compare.ts';
import { captureOutput, startFakeApi, type FakeApi } from './fake-api.ts';

/** An upload key no report may carry: the uploads are not the comparison. */
const UPLOAD_KEY = 'secret-uploads/never-in-a-report.txt';

let api: FakeApi;
let cwd: string;
let comparison: Comparison;

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'benchdrop-compare-html-'));
  const obs = (runId: string, reads: number): Observation => ({
    runId,
    device: 'tuned/sda',
    format: 'iostat',
    values: { read_iops: reads },
    samples: 10,
  });
  comparison = compareObservations([obs('a1', 200), obs('a2', 210)], [obs('b1', 100), obs('b2', 104)], {
    labels: { a: 'tuned', b: 'stock' },
  });
  api = await startFakeApi({
    'GET /compare': { body: comparison },
    'GET /uploads': {
      body: {
        uploads: [
          {
            bucket: 'drop',
            key: UPLOAD_KEY,
            version: 'v1',
            status: 'ready',
            runCount: 1,
            runIds: ['r1'],
            updatedAt: '2024-01-01T00:00:00Z',
          },
        ],
      },
    },
  });
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

/** The path a `wrote PATH` line on stderr names. */
const written = (err: string) => /^wrote (.+)$/m.exec(err)?.[1];

/** What the report embeds, read back from its data script. */
function embedded(html: string): Record<string, unknown> {
  const json = /window\.__BENCHDROP__ = (.*?);<\/script>/s.exec(html)?.[1];
  return JSON.parse(json!.replace(/<\\\//g, '</').replace(/<\\!--/g, '<!--')) as Record<string, unknown>;
}

function expectComparisonOnly(html: string): void {
  expect(embedded(html)).toEqual({ comparison });
  expect(html).toContain(`<title>benchdrop: ${comparison.sentence}</title>`);
  for (const part of ['id="uploads', 'id="controls"', 'id="empty"', UPLOAD_KEY]) expect(html).not.toContain(part);
}

describe('compare --html', () => {
  it('without a file: a new file in the temp folder, named after the selectors, its path on stderr; nothing in the working folder, no uploads asked', async () => {
    const before = api.requests.length;
    const { code, out, err } = await run(
      'compare',
      'x4100/c0t0d0,context~tunefs -a 1 /opt',
      '../etc/passwd',
      '--html',
      '--api',
      api.url,
    );
    expect(code).toBe(0);
    expect(out).toContain(comparison.sentence);
    const path = written(err)!;
    expect(dirname(dirname(path))).toBe(tmpdir());
    expect(basename(dirname(path))).toMatch(/^benchdrop-compare-/);
    expect(basename(path)).toBe('benchdrop-compare-x4100_c0t0d0_context_tunefs_-a_1_opt-vs-etc_passwd.html');
    expect(existsSync(path)).toBe(true);
    expectComparisonOnly(readFileSync(path, 'utf8'));
    expect(readdirSync(cwd)).toEqual([]);
    expect(api.requests.slice(before).map((r) => r.path)).toEqual(['/compare']);
    rmSync(dirname(path), { recursive: true, force: true });
  });

  it('each run gets a folder of its own: the same comparison twice is two files', async () => {
    const first = written((await run('compare', 'tuned', 'stock', '--html', '--api', api.url)).err)!;
    const second = written((await run('compare', 'tuned', 'stock', '--html', '--api', api.url)).err)!;
    expect(basename(first)).toBe('benchdrop-compare-tuned-vs-stock.html');
    expect(second).not.toBe(first);
    for (const path of [first, second]) rmSync(dirname(path), { recursive: true, force: true });
  });

  it('--html --out FILE and --out FILE alone write there (relative to the working folder, said as typed); --html FILE as before', async () => {
    mkdirSync(join(cwd, 'reports'));
    for (const [args, name] of [
      [['--html', '--out', 'reports/ab.html'], join('reports', 'ab.html')],
      [['--out', 'out-only.html'], 'out-only.html'],
      [['--html', 'named.html'], 'named.html'],
      [['--html', 'temp'], 'temp'],
    ] as const) {
      const { code, err } = await run('compare', 'tuned', 'stock', ...args, '--api', api.url);
      expect(code).toBe(0);
      expect(written(err)).toBe(name);
      expectComparisonOnly(readFileSync(join(cwd, name), 'utf8'));
    }
  });

  it('--json with --html: stdout is the JSON alone, the path on stderr', async () => {
    const { code, out, err } = await run('compare', 'tuned', 'stock', '--json', '--html', '--api', api.url);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual(comparison);
    const path = written(err)!;
    expect(existsSync(path)).toBe(true);
    rmSync(dirname(path), { recursive: true, force: true });
  });

  it('--html FILE with --out OTHER is refused before the lab is asked, saying to name the file once; nothing is written', async () => {
    const before = api.requests.length;
    const { code, err } = await run(
      'compare',
      'tuned',
      'stock',
      '--html',
      'one.html',
      '--out',
      'two.html',
      '--api',
      api.url,
    );
    expect(code).toBe(1);
    expect(err).toContain(
      'error: --html one.html and --out two.html: name the file once (--html FILE, or --html --out FILE)',
    );
    expect(existsSync(join(cwd, 'one.html')) || existsSync(join(cwd, 'two.html'))).toBe(false);
    expect(api.requests.length).toBe(before);
  });

  it('a folder --out names that does not exist is an error naming the path', async () => {
    const { code, err } = await run('compare', 'tuned', 'stock', '--out', 'missing/dir/r.html', '--api', api.url);
    expect(code).toBe(1);
    expect(err).toMatch(/^error: .*missing\/dir\/r\.html/m);
  });
});
