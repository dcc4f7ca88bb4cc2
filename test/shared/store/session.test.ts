/**
 * The parts of the read side the emulators cannot provoke: BatchGet's
 * UnprocessedKeys (DynamoDB throttling) and its 100-key limit, and the label
 * plans. The rest is tested against dynalite in test/integration/api.test.ts.
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { runPk } from '../../../shared/store/keys.ts';
import { parsePattern } from '../../../shared/selectors.ts';
import { planLabels } from '../../../shared/label-plans.ts';
import { ReadSession } from '../../../shared/store/session.ts';

type Key = { pk: string; sk: string };

/** A client answering BatchGet from a set of run ids, leaving the last `unprocessed` keys of the first call unprocessed. */
function batchGetOnly(existing: Set<string>, unprocessed: number) {
  const calls: number[] = [];
  const send = async (command: unknown) => {
    if (!(command instanceof BatchGetCommand)) throw new Error(`unexpected ${(command as object).constructor.name}`);
    const [table, request] = Object.entries(command.input.RequestItems!)[0]!;
    const keys = request.Keys as Key[];
    if (keys.length > 100) throw new Error('more than 100 keys in one BatchGet');
    calls.push(keys.length);
    const held = calls.length === 1 ? keys.slice(keys.length - unprocessed) : [];
    const answered = keys.slice(0, keys.length - held.length);
    const responses = answered
      .filter((k) => existing.has(k.pk.slice(4)))
      .map((k) => ({ pk: k.pk, sk: k.sk, runId: k.pk.slice(4), context: ['ctx'], reports: 2 }));
    return { Responses: { [table]: responses }, UnprocessedKeys: held.length > 0 ? { [table]: { Keys: held } } : {} };
  };
  return { db: { send } as unknown as DynamoDBDocumentClient, calls };
}

const id = (i: number) => `r${i.toString(16).padStart(24, '0')}`;

describe('ReadSession.runHeads', () => {
  it('reads 100 keys per BatchGet, retries unprocessed keys and leaves out runs without META', async () => {
    const ids = Array.from({ length: 250 }, (_, i) => id(i));
    const existing = new Set(ids.filter((_, i) => i % 5 !== 0));
    const fake = batchGetOnly(existing, 30);
    const session = new ReadSession({ db: fake.db, tableName: 't' });
    const heads = await session.runHeads(ids);
    expect([...heads.keys()].sort()).toEqual([...existing].sort());
    expect(fake.calls).toEqual([100, 30, 100, 50]);
    expect(heads.get(id(1))).toMatchObject({ context: ['ctx'], reports: 2 });

    // Asked again (the other side of a comparison), nothing is read.
    const again = await session.runHeads([id(1), id(5), id(1)]);
    expect([...again.keys()]).toEqual([id(1)]);
    expect(fake.calls).toHaveLength(4);
    expect(runPk(id(1))).toBe(`RUN#${id(1)}`);
  });
});

describe('planLabels', () => {
  const plan = (text: string) => planLabels(parsePattern(text));
  it('reads one label, the labels under a literal prefix, or all labels', () => {
    expect(plan('x4100/c0t0d0')).toEqual({ by: 'device', exact: 'x4100/c0t0d0' });
    expect(plan('x4100/c0t*')).toEqual({ by: 'devicePrefix', prefix: 'x4100/c0t' });
    expect(plan('300G?10K')).toEqual({ by: 'devicePrefix', prefix: '300G' });
    expect(plan('*redux')).toEqual({ by: 'allDevices' });
    expect(planLabels(undefined)).toEqual({ by: 'allDevices' });
  });

  it('takes escaped wildcards as literal text: the exact label, or a longer literal prefix', () => {
    expect(plan('raid\\*5')).toEqual({ by: 'device', exact: 'raid*5' });
    expect(plan('what\\?-*')).toEqual({ by: 'devicePrefix', prefix: 'what?-' });
    // The GET /runs parameter is no selector: its , = ~ are plain characters.
    expect(plan('a,b=c~d')).toEqual({ by: 'device', exact: 'a,b=c~d' });
    expect(plan('\\*x')).toEqual({ by: 'device', exact: '*x' });
  });
});
