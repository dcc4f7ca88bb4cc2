/**
 * Fuzz (issue 7, item 4; issue 13): the properties of test/shared/fuzz.test.ts and
 * test/integration/api-fuzz.test.ts at full size: 100,000 damaged real logs per
 * parser format, 100,000 sysstat JSON documents of any shape, 20,000 logs cut into
 * parts, 100,000 selector texts and patterns, thousands of API requests (counts in
 * test/support/fuzz/cases.ts). Only ParseError / SelectorError / 4xx may come back,
 * never another exception (an InternalParseError, a TypeError), a 5xx, a result
 * that does not hold up or a parse slower than CASE_TIME_LIMIT_MS; a parser target
 * that hangs is stopped with its process. Every target runs to its end or its first
 * counterexample (shrunk, and written to a file named in the failure); the summary
 * line counts the cases tried.
 */
import '../../harness/quiet.ts';
import { describe, expect, it } from 'vitest';
import { fuzz, fuzzCases, type FuzzFinding } from '../support/fuzz/cases.ts';
import { apiProperty, startApiFuzzBench } from '../support/fuzz/api.ts';
import { fuzzParsersInProcesses, JSON_STRUCTURE, parserTargets } from '../support/fuzz/parsers.ts';
import { globProperty, selectorProperty } from '../support/fuzz/selectors.ts';
import { recordStressSummary } from '../support/stress-summary.ts';

function summarise(findings: readonly FuzzFinding[]): {
  cases: number;
  failures: number;
  detail: string;
  reports: string;
} {
  return {
    cases: findings.reduce((n, f) => n + f.cases, 0),
    failures: findings.filter((f) => f.failed).length,
    detail: findings.map((f) => `${f.target} ${f.cases} in ${(f.ms / 1000).toFixed(0)} s`).join(', '),
    reports: findings
      .filter((f) => f.failed)
      .map((f) => f.report)
      .join('\n\n'),
  };
}

/** Every parser target, two processes at a time (they take both cores); started once, read by the two parser sections. */
let parserFindings: Promise<FuzzFinding[]> | undefined;
const PARSER_TARGETS = parserTargets().map((t) => t.name);

function parserFindingsOf(names: readonly string[]): Promise<FuzzFinding[]> {
  parserFindings ??= fuzzParsersInProcesses(PARSER_TARGETS, 'stress', 2, 600_000);
  return parserFindings.then((all) => all.filter((f) => names.includes(f.target)));
}

describe('fuzz', () => {
  it('parsers: every format, damaged real logs and garbage, through every entry, and cut into parts', async (context) => {
    const findings = await parserFindingsOf(PARSER_TARGETS.filter((name) => name !== JSON_STRUCTURE));
    const s = summarise(findings);
    recordStressSummary(context, {
      section: 'fuzz: parsers',
      cases: s.cases,
      failures: s.failures,
      lost: 0,
      detail: s.detail,
    });
    expect(s.failures, s.reports).toBe(0);
  });

  it('sysstat JSON: documents of any shape around real ones', async (context) => {
    const findings = await parserFindingsOf([JSON_STRUCTURE]);
    const s = summarise(findings);
    recordStressSummary(context, {
      section: 'fuzz: sysstat JSON structure',
      cases: s.cases,
      failures: s.failures,
      lost: 0,
      detail: s.detail,
    });
    expect(findings).toHaveLength(1);
    expect(s.failures, s.reports).toBe(0);
  });

  it('selectors: any text, and patterns against a reference matcher', async (context) => {
    const findings = [
      await fuzz('selector texts', selectorProperty(), fuzzCases('stress', 'selectors')),
      await fuzz('patterns', globProperty(), fuzzCases('stress', 'selectors')),
    ];
    const s = summarise(findings);
    recordStressSummary(context, {
      section: 'fuzz: selectors',
      cases: s.cases,
      failures: s.failures,
      lost: 0,
      detail: s.detail,
    });
    expect(s.failures, s.reports).toBe(0);
  });

  it('API: query parameters, paths, methods and bodies against the handler with real data', async (context) => {
    const bench = await startApiFuzzBench();
    try {
      const statuses = new Map<number, number>();
      const finding = await fuzz(
        'API requests',
        apiProperty(bench.known, bench.internalNames, statuses),
        fuzzCases('stress', 'api'),
      );
      const s = summarise([finding]);
      const answered = [...statuses]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${n} x ${status}`)
        .join(', ');
      recordStressSummary(context, {
        section: 'fuzz: API query',
        cases: s.cases,
        failures: s.failures,
        lost: 0,
        detail: `${s.detail}; answered ${answered}`,
      });
      expect(s.failures, s.reports).toBe(0);
      expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    } finally {
      await bench.stop();
    }
  });
});
