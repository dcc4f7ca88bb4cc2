/**
 * Key text lives in shared/store/keys.ts alone (SECURITY.md: a value from a user
 * can only ever be the last part of a key whose prefix the code chose). Every
 * string and template literal of the product's sources is checked for a key
 * prefix (`DEVICE#`, `STATUS#` ...) or a fixed key (`DEVICES`, `META` ...), as
 * keys.ts builds them: a key written anywhere else fails here, naming file:line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as keys from '../../../shared/store/keys.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// Everything but the tests, which assert on keys as they are written.
const SCANNED = ['shared', 'functions', 'infra', 'cli', 'report', 'bench', 'harness'];
const KEYS_FILE = join('shared', 'store', 'keys.ts');

/** The prefixes keys.ts builds keys from: what each builder puts before its first separator, when that is a word. */
function keyPrefixes(): string[] {
  const built = [
    keys.uploadPk('b', 'k'),
    keys.uploadSk('v'),
    keys.objectPk('b', 'k'),
    keys.runPk('r'),
    keys.seriesSk('n'),
    keys.devicePk('l'),
    keys.tagKey('k', 'v'),
    keys.statusPk('s'),
    keys.pastStatusPk('s'),
    keys.migrationSk('m'),
  ];
  const prefixes = built
    .map((key) => key.slice(0, key.indexOf(keys.KEY_SEPARATOR) + 1))
    .filter((p) => /^[A-Z]+.$/.test(p));
  return [...new Set(prefixes)];
}

const FIXED_KEYS = [keys.OBJECT_SK, keys.RUN_META_SK, keys.DEVICES_PK, keys.MIGRATIONS_PK];

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'cdk.out' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

interface Literal {
  text: string;
  line: number;
}

/** The string and template literals of a TypeScript source, comments skipped (a regular expression counts as code). */
function literalsOf(source: string): Literal[] {
  const out: Literal[] = [];
  let line = 1;
  let i = 0;
  const advance = (to: number) => {
    for (; i < to; i++) if (source[i] === '\n') line++;
  };
  while (i < source.length) {
    const c = source[i]!;
    if (c === '/' && source[i + 1] === '/')
      advance(source.indexOf('\n', i) === -1 ? source.length : source.indexOf('\n', i));
    else if (c === '/' && source[i + 1] === '*')
      advance(source.indexOf('*/', i + 2) === -1 ? source.length : source.indexOf('*/', i + 2) + 2);
    else if (c === "'" || c === '"' || c === '`') {
      const start = line;
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1;
      out.push({ text: source.slice(i + 1, j), line: start });
      advance(j + 1);
    } else advance(i + 1);
  }
  return out;
}

/** Where a literal holds key text: a key prefix in it, or a fixed key as the whole of it. */
function keyTextIn(literal: string, prefixes: readonly string[]): string | undefined {
  const prefix = prefixes.find((p) => new RegExp(`(^|[^A-Za-z_])${p}`).test(literal));
  if (prefix !== undefined) return prefix;
  return FIXED_KEYS.find((key) => literal === key);
}

describe('key text', () => {
  const prefixes = keyPrefixes();

  it('reads the prefixes from keys.ts', () => {
    expect(prefixes).toEqual(expect.arrayContaining(['UPLOAD#', 'RUN#', 'DEVICE#', 'STATUS#', 'TAG#']));
  });

  it('finds a key prefix or a fixed key in a literal, and not in a comment', () => {
    const found = literalsOf(
      "// 'DEVICE#x' in a comment\nconst a = 'DEVICE#';\n/* `STATUS#` */ const b = `STATUS#${s}`, c = 'DEVICES';",
    )
      .map((l) => [l.line, keyTextIn(l.text, prefixes)])
      .filter(([, key]) => key !== undefined);
    expect(found).toEqual([
      [2, 'DEVICE#'],
      [3, 'STATUS#'],
      [3, 'DEVICES'],
    ]);
  });

  it('appears in no source file but shared/store/keys.ts', () => {
    const offences: string[] = [];
    for (const dir of SCANNED) {
      for (const path of sourceFiles(join(ROOT, dir))) {
        const file = relative(ROOT, path);
        if (file === KEYS_FILE) continue;
        for (const literal of literalsOf(readFileSync(path, 'utf8'))) {
          const key = keyTextIn(literal.text, prefixes);
          if (key !== undefined) offences.push(`${file}:${literal.line}: ${key} (build it with shared/store/keys.ts)`);
        }
      }
    }
    expect(offences).toEqual([]);
  });
});
