/**
 * What the parser tests ask of a text: its iostat runs (and which parser detection
 * chose), the ParseError it fails with, a series by its device.
 */
import { expect } from 'vitest';
import type { IostatRun, IostatSeries } from '../../shared/model.ts';
import { ParseError, parseStream } from '../../shared/parsers/index.ts';

/** The iostat runs of `text`, checking that detection chose `detected` (e.g. `iostat-aix`). */
export async function detectedRuns(text: string, detected: string, source = 'test.txt'): Promise<IostatRun[]> {
  const runs: IostatRun[] = [];
  const result = await parseStream([Buffer.from(text, 'utf8')], {
    source,
    onRun: (run) => runs.push(run as IostatRun),
  });
  expect(result.dialect).toBe(detected);
  return runs;
}

/** The ParseError parsing `text` ends with; the test fails if it ends otherwise. */
export async function parseFails(text: string, source = 'test.txt'): Promise<ParseError> {
  try {
    await parseStream([Buffer.from(text, 'utf8')], { source, onRun: () => {} });
  } catch (error) {
    expect(error).toBeInstanceOf(ParseError);
    return error as ParseError;
  }
  throw new Error('expected a ParseError');
}

/** The run's series of this device; the test fails if there is none. */
export function seriesOf(run: IostatRun, device: string): IostatSeries {
  const found = run.series.find((s) => s.device === device);
  expect(found, `series ${device}`).toBeDefined();
  return found!;
}
