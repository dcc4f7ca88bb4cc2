/**
 * The fio fixtures (test/fixtures/fio/): each output beside its `.expected.json`, the
 * records parseFioText must yield for it, and the ParseError a bad output ends with.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../shared/parsers/errors.ts';
import { parseFioText } from '../../shared/parsers/fio.ts';

const DIR = join(import.meta.dirname, '../fixtures/fio');
const EXPECTED = '.expected.json';

export const readFio = (name: string): string => readFileSync(join(DIR, name), 'utf8');

/** The outputs whose names match, without their expected files. */
export const fioFixtures = (pattern: RegExp): string[] =>
  readdirSync(DIR).filter((name) => pattern.test(name) && !name.endsWith(EXPECTED));

const expectedOf = (name: string): unknown => JSON.parse(readFio(name.replace(/\.(json|txt)$/, EXPECTED)));

/** A describe block: at least `least` fixtures match (`cases` says which), each yields its expected records. */
export function describeFioFixtures(title: string, pattern: RegExp, least: number, cases: string): void {
  const names = fioFixtures(pattern);
  describe(title, () => {
    it(`has one for each case: ${cases}`, () => {
      expect(names.length).toBeGreaterThanOrEqual(least);
    });
    for (const name of names) {
      it(`${name} yields its expected records`, () => {
        expect(parseFioText(readFio(name), name)).toEqual(expectedOf(name));
      });
    }
  });
}

/** The ParseError parsing `text` ends with; a test failure when it parses, or fails otherwise. */
export function fioFailure(text: string, source = 'run.txt'): ParseError {
  try {
    parseFioText(text, source);
  } catch (error) {
    if (error instanceof ParseError) return error;
    throw error;
  }
  throw new Error('parsed without an error');
}
