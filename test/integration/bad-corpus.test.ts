/**
 * The bad input corpus (test/fixtures/bad/expected.json) through the real ingest
 * handler, against dynalite and s3rver: every committed case and the quick
 * generated ones, seven to an SQS batch with three good logs, each batch
 * delivered twice. Per case: the upload record ends as the table says (status,
 * line, message words, runs, warnings), no message goes back to the queue for a
 * retry, a redelivery writes nothing, a failed upload leaves nothing but its
 * record, and every item fits DynamoDB's key and item limits. The big generated
 * cases run in `npm run test:stress` (test/stress/bad-input.stress.ts).
 */
import '../support/quiet.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BAD, BAD_CORPUS, committedBadFiles, runCorpus, type CorpusRun } from '../support/bad-corpus.ts';
import { startEmulators, type Emulators } from '../support/emulators.ts';

const NOW = '2024-06-01T08:00:00.000Z';
const QUICK = BAD_CORPUS.filter((c) => !c.stress);

let env: Emulators;
let run: CorpusRun;

beforeAll(async () => {
  env = await startEmulators({ maxUploadBytes: 10_000_000 });
  run = await runCorpus({ env, cases: QUICK, maxUploadBytes: 10_000_000, now: NOW });
}, 180_000);

afterAll(async () => {
  await env?.stop();
});

describe('the corpus table', () => {
  it('holds at least 40 cases with distinct names; every committed file is a case and has a README row', () => {
    expect(BAD_CORPUS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(BAD_CORPUS.map((c) => c.name)).size).toBe(BAD_CORPUS.length);
    const readme = readFileSync(join(BAD, 'README.md'), 'utf8');
    const used = new Set(BAD_CORPUS.map((c) => c.file).filter((f) => f?.startsWith('bad/')).map((f) => f!.slice(4)));
    for (const file of committedBadFiles()) {
      expect(used.has(file), `${file} is in no case`).toBe(true);
      expect(readme.includes(`| \`${file}\` |`), `${file} has no README row`).toBe(true);
    }
    for (const c of BAD_CORPUS.filter((x) => x.generate !== undefined)) expect(readme.includes(`\`${c.generate}\``), `${c.generate} is not described`).toBe(true);
  });
});

describe('every case through the ingest pipeline', () => {
  it.each(QUICK.map((c) => [c.name, c] as const))('%s', (name) => {
    expect(run.mismatches.get(name)).toEqual([]);
  });

  it('the good logs delivered in the same batches are ready with all their runs', () => {
    expect(run.good.length).toBeGreaterThanOrEqual(Math.ceil(QUICK.length / 7) * 3);
    expect(run.goodMismatches).toEqual([]);
  });

  it('no case is lost: every upload ends ready or failed', () => {
    expect(run.lost).toEqual([]);
  });
});
