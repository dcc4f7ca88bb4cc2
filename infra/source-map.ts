/**
 * A bundle's source map cut down to the sources worth mapping: the Lambda bundles'
 * maps are over a megabyte, nearly all of it for the bundled AWS SDK, and with
 * `--enable-source-maps` Node reads, parses and indexes the whole map at every
 * cold start. Kept to the project's own files (a tenth of the size), stack frames
 * in benchdrop's code still map to their .ts file and line; frames inside a
 * dependency show the bundle's position instead.
 *
 * Mappings (source map v3, base64 VLQ): each segment is [generated column,
 * source, original line, original column, name?], every field relative to the
 * previous segment's (the column only within its line). A segment of a dropped
 * source becomes a column-only segment, unmapped, where the previous one was
 * mapped, so a lookup in a dependency's code finds nothing rather than the
 * nearest earlier mapping of the project's code.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export interface RawSourceMap {
  version: number;
  file?: string;
  sourceRoot?: string;
  sources: string[];
  sourcesContent?: (string | null)[];
  names: string[];
  mappings: string;
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]));

/** The signed integers of one segment. */
export function decodeSegment(segment: string): number[] {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of segment) {
    const digit = DIGIT.get(char);
    if (digit === undefined) throw new Error(`source map: ${JSON.stringify(char)} is not a base64 VLQ digit (segment ${JSON.stringify(segment)})`);
    value += (digit & 31) * 2 ** shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    values.push(value % 2 === 1 ? -(value - 1) / 2 : value / 2);
    value = 0;
    shift = 0;
  }
  if (shift !== 0) throw new Error(`source map: segment ${JSON.stringify(segment)} ends inside a number`);
  return values;
}

export function encodeValue(n: number): string {
  let rest = n < 0 ? -n * 2 + 1 : n * 2;
  let out = '';
  do {
    let digit = rest % 32;
    rest = Math.floor(rest / 32);
    if (rest > 0) digit |= 32;
    out += BASE64[digit];
  } while (rest > 0);
  return out;
}

/** The map with only the sources `keep` accepts (and the names their segments use). */
export function keepSources(map: RawSourceMap, keep: (source: string) => boolean): RawSourceMap {
  const kept = map.sources.map((source) => keep(source));
  const newIndex: number[] = [];
  let next = 0;
  for (const k of kept) newIndex.push(k ? next++ : -1);
  const names: string[] = [];
  const nameIndex = new Map<number, number>();

  // Absolute fields of the input as it is read, and of the output as it is written.
  let source = 0;
  let line = 0;
  let column = 0;
  let name = 0;
  let outSource = 0;
  let outLine = 0;
  let outColumn = 0;
  let outName = 0;
  let lastWasMapped = false;
  const lines = map.mappings.split(';').map((text) => {
    let generated = 0;
    let outGenerated = 0;
    const segments: string[] = [];
    for (const segment of text === '' ? [] : text.split(',')) {
      const fields = decodeSegment(segment);
      generated += fields[0]!;
      if (fields.length >= 4) {
        source += fields[1]!;
        line += fields[2]!;
        column += fields[3]!;
        if (fields.length >= 5) name += fields[4]!;
      }
      if (fields.length < 4 || !kept[source]) {
        // Unmapped here: say so once, where a mapped stretch ends.
        if (lastWasMapped) {
          segments.push(encodeValue(generated - outGenerated));
          outGenerated = generated;
          lastWasMapped = false;
        }
        continue;
      }
      let out = encodeValue(generated - outGenerated) + encodeValue(newIndex[source]! - outSource) + encodeValue(line - outLine) + encodeValue(column - outColumn);
      outGenerated = generated;
      outSource = newIndex[source]!;
      outLine = line;
      outColumn = column;
      if (fields.length >= 5) {
        let index = nameIndex.get(name);
        if (index === undefined) {
          index = names.push(map.names[name]!) - 1;
          nameIndex.set(name, index);
        }
        out += encodeValue(index - outName);
        outName = index;
      }
      segments.push(out);
      lastWasMapped = true;
    }
    return segments.join(',');
  });
  const trimmed: RawSourceMap = { ...map, sources: map.sources.filter((_, i) => kept[i]), names, mappings: lines.join(';') };
  if (map.sourcesContent) trimmed.sourcesContent = map.sourcesContent.filter((_, i) => kept[i]);
  return trimmed;
}

/** Is this source one of the project's own files (not a dependency's)? */
export const isOwnSource = (source: string): boolean => !/(^|\/)node_modules\//.test(source);

/** Rewrite a bundle's map file in place with the project's own sources only. */
export function trimSourceMapFile(path: string): { before: number; after: number; sources: number } {
  const text = readFileSync(path, 'utf8');
  const trimmed = keepSources(JSON.parse(text) as RawSourceMap, isOwnSource);
  const out = JSON.stringify(trimmed);
  writeFileSync(path, out);
  return { before: Buffer.byteLength(text), after: Buffer.byteLength(out), sources: trimmed.sources.length };
}
