/**
 * Source maps cut down to the project's own sources (infra/source-map.ts): what
 * mapped to a kept source maps there still, what mapped to a dropped one maps to
 * nothing (never to the nearest earlier mapping of a kept source).
 */
import { SourceMap, type SourceMapPayload } from 'node:module';
import { describe, expect, it } from 'vitest';
import { decodeSegment, encodeValue, isOwnSource, keepSources, type RawSourceMap } from '../../infra/source-map.ts';

/** A map from absolute segments [generated line, column, source, line, column, name?]. */
function mapOf(sources: string[], names: string[], segments: number[][]): RawSourceMap {
  const lines: string[][] = [];
  let previous = [0, 0, 0, 0];
  let lastLine = -1;
  let column = 0;
  for (const [line, generated, source, origLine, origColumn, name] of segments as [number, number, number, number, number, number | undefined][]) {
    while (lines.length <= line) lines.push([]);
    if (line !== lastLine) column = 0;
    lastLine = line;
    let text = encodeValue(generated - column) + encodeValue(source - previous[0]!) + encodeValue(origLine - previous[1]!) + encodeValue(origColumn - previous[2]!);
    if (name !== undefined) text += encodeValue(name - previous[3]!);
    previous = [source, origLine, origColumn, name ?? previous[3]!];
    column = generated;
    lines[line]!.push(text);
  }
  return { version: 3, sources, names, mappings: lines.map((l) => l.join(',')).join(';') };
}

const lookup = (map: RawSourceMap, line: number, column: number) => {
  const entry = new SourceMap({ file: '', sourceRoot: '', sourcesContent: [], ...map } as SourceMapPayload).findEntry(line, column) as { originalSource?: string; originalLine?: number; originalColumn?: number; name?: string };
  return entry.originalSource === undefined ? undefined : [entry.originalSource, entry.originalLine, entry.originalColumn, entry.name];
};

describe('source map VLQ', () => {
  it('decodes what it encodes, signs and large values included', () => {
    const values = [0, 1, -1, 15, -16, 16, 31, 32, -33, 1023, 123456, -987654, 2 ** 31 - 1, -(2 ** 31)];
    expect(decodeSegment(values.map(encodeValue).join(''))).toEqual(values);
    expect(decodeSegment('AAgBC')).toEqual([0, 0, 16, 1]);
  });

  it('refuses what is not base64 VLQ', () => {
    expect(() => decodeSegment('A!A')).toThrow(/not a base64 VLQ digit/);
    expect(() => decodeSegment('g')).toThrow(/ends inside a number/);
  });
});

describe('keepSources', () => {
  const sources = ['../../shared/a.ts', '../../node_modules/dep/index.js', '../../functions/b.ts'];
  const names = ['alpha', 'depName', 'beta'];
  const map = mapOf(sources, names, [
    [0, 0, 0, 0, 0],
    [0, 10, 0, 3, 4, 0],
    [0, 20, 1, 100, 7, 1],
    [0, 30, 1, 101, 0],
    [1, 0, 1, 102, 0],
    [1, 5, 2, 9, 2, 2],
    [1, 15, 0, 7, 1],
  ]);

  it('keeps the mappings of kept sources exactly and unmaps the dropped ones', () => {
    const trimmed = keepSources(map, isOwnSource);
    expect(trimmed.sources).toEqual(['../../shared/a.ts', '../../functions/b.ts']);
    expect(trimmed.names).toEqual(['alpha', 'beta']);
    // Kept: same original position (and name) as in the whole map.
    for (const [line, column] of [[0, 0], [0, 12], [1, 6], [1, 15], [1, 40]] as const) expect(lookup(trimmed, line, column), `${line}:${column}`).toEqual(lookup(map, line, column));
    expect(lookup(trimmed, 0, 12)).toEqual(['../../shared/a.ts', 3, 4, 'alpha']);
    expect(lookup(trimmed, 1, 7)).toEqual(['../../functions/b.ts', 9, 2, 'beta']);
    // Dropped: nothing, including on the next line before the next kept segment.
    for (const [line, column] of [[0, 20], [0, 35], [1, 0], [1, 4]] as const) expect(lookup(trimmed, line, column), `${line}:${column}`).toBeUndefined();
    expect(lookup(map, 0, 35)?.[0]).toBe('../../node_modules/dep/index.js');
  });

  it('keeps everything when every source is kept, and drops everything when none is', () => {
    expect(keepSources(map, () => true).mappings).toBe(map.mappings);
    const none = keepSources(map, () => false);
    expect(none.sources).toEqual([]);
    expect(none.names).toEqual([]);
    expect(lookup(none, 1, 6)).toBeUndefined();
  });

  it('tells dependencies from the project', () => {
    expect(isOwnSource('../../shared/parsers/index.ts')).toBe(true);
    expect(isOwnSource('../../node_modules/@aws-sdk/client-s3/dist-es/index.js')).toBe(false);
    expect(isOwnSource('node_modules/zod/v4/core/core.js')).toBe(false);
  });
});
