/**
 * What a handler prints, read the way CloudWatch reads it: Powertools writes its
 * metrics (Embedded Metric Format) and its JSON log lines to stdout, warnings and
 * errors to stderr, one object a line, and Lambda sends both to the log group. The integration tests of the thin handlers capture them to check that the
 * metrics the stack's alarms watch are the ones the functions send.
 */
import { vi } from 'vitest';

/** One EMF object: its namespace, dimension names and values, and each metric's values. */
export interface EmfMetrics {
  namespace: string;
  dimensions: Record<string, string>;
  values: Record<string, number[]>;
}

export interface Printed {
  /** JSON lines that are not metrics: the log. */
  logs: Record<string, unknown>[];
  metrics: EmfMetrics[];
}

function emfOf(line: Record<string, unknown>): EmfMetrics[] {
  const aws = line['_aws'] as {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[];
  };
  return aws.CloudWatchMetrics.map((directive) => ({
    namespace: directive.Namespace,
    dimensions: Object.fromEntries(directive.Dimensions.flat().map((name) => [name, String(line[name])])),
    values: Object.fromEntries(
      directive.Metrics.map(({ Name }) => [Name, ([] as number[]).concat(line[Name] as number | number[])]),
    ),
  }));
}

/** Runs `body` with stdout and stderr captured (nothing reaches the terminal); its result and what it printed. */
export async function capturePrinted<T>(body: () => Promise<T>): Promise<{ result: T; printed: Printed }> {
  const chunks: string[] = [];
  const capture = (chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(capture),
    vi.spyOn(process.stderr, 'write').mockImplementation(capture),
  ];
  try {
    const result = await body();
    // Each write is one whole line (Console writes a line per call), so interleaving keeps lines intact.
    const lines = chunks
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    return {
      result,
      printed: {
        logs: lines.filter((line) => !('_aws' in line)),
        metrics: lines.filter((line) => '_aws' in line).flatMap(emfOf),
      },
    };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

/** The sum of a metric over everything printed with exactly these namespace and dimensions. */
export function metricSum(
  printed: Printed,
  namespace: string,
  dimensions: Record<string, string>,
  name: string,
): number | undefined {
  const matching = printed.metrics.filter(
    (m) =>
      m.namespace === namespace &&
      JSON.stringify(Object.entries(m.dimensions).sort()) === JSON.stringify(Object.entries(dimensions).sort()) &&
      name in m.values,
  );
  return matching.length === 0 ? undefined : matching.flatMap((m) => m.values[name]!).reduce((a, b) => a + b, 0);
}
