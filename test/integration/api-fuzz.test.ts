/**
 * Fuzzing the API handler against the emulators with real data (a sample of the
 * stress run's requests: test/support/fuzz/api.ts says what is generated and
 * checked), and the counterexamples the fuzzers found, kept as plain requests.
 */
import '../../harness/quiet.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Comparison } from '../../shared/compare.ts';
import { fuzz, fuzzCases } from '../support/fuzz/cases.ts';
import { apiHoldsUp, apiProperty, leaks, startApiFuzzBench, type ApiFuzzBench } from '../support/fuzz/api.ts';

let bench: ApiFuzzBench;

beforeAll(async () => {
  bench = await startApiFuzzBench();
}, 60_000);

afterAll(async () => {
  await bench?.stop();
});

describe('fuzzing the API', () => {
  it('any query, path, method or body: a 2xx or a 4xx with the error shape, never a 5xx or a stack trace', async () => {
    const statuses = new Map<number, number>();
    const finding = await fuzz(
      'API query',
      apiProperty(bench.known, bench.internalNames, statuses),
      fuzzCases('test', 'api'),
    );
    expect(finding.failed, finding.report).toBe(false);
    // The requests reach the routes' answers, not only their refusals.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
  }, 60_000);
});

describe('counterexamples the fuzzers found', () => {
  it('GET /runs/%E0%A4%A (not valid percent-encoding) is a 400 naming the id, not a URIError and a 500 from the lab', async () => {
    const answer = await apiHoldsUp({ method: 'GET', url: '/runs/%E0%A4%A', headers: {} }, bench.internalNames);
    expect(answer).toEqual({
      status: 400,
      body: {
        error: { code: 'bad_request', message: expect.stringMatching(/^id: a run id is r followed by 24 hex digits/) },
      },
    });
  });

  it('a compare whose pattern made the matcher backtrack for hours is answered at once', async () => {
    const glob = `${'*a'.repeat(60)}*b`.slice(0, 128);
    const started = Date.now();
    const answer = await apiHoldsUp(
      { method: 'GET', url: `/compare?${new URLSearchParams({ a: glob, b: bench.known.devices[0]! })}`, headers: {} },
      bench.internalNames,
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(answer.status).toBe(400);
  });

  it('the checks themselves: a real comparison passes, a stack trace or an internal name is caught', async () => {
    const [a, b] = bench.known.devices.filter((d) => !d.includes('/'));
    const answer = await apiHoldsUp(
      { method: 'GET', url: `/compare?${new URLSearchParams({ a: a!, b: b! })}`, headers: {} },
      bench.internalNames,
    );
    expect(answer.status).toBe(200);
    expect((answer.body as Comparison).ratio).toBeGreaterThan(0);
    expect(leaks('TypeError: x is undefined\n    at compare (/work/main/shared/compare.ts:12:3)', [])).toBe(
      'a stack trace',
    );
    expect(leaks('could not read table benchdrop-fuzz-table', bench.internalNames)).toBe(
      'the internal name "benchdrop-fuzz-table"',
    );
    expect(leaks('a: "x4100/*" matches no device', bench.internalNames)).toBeUndefined();
  });
});
