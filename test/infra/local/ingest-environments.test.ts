/**
 * The lab's ingest execution environments (one per queue worker) are separate
 * copies of functions/ingest/handler.ts: each keeps its own module state, as
 * each concurrent Lambda invocation has its own environment. Shown with the real
 * handler on the emulators: two environments given different tables, invoked at
 * the same time, each write only to their own.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3EventRecord, sqsEvent } from '../../../infra/local/events.ts';
import { ingestEnvironments } from '../../../infra/local/ingest-environments.ts';
import { handler as sharedHandler } from '../../../functions/ingest/handler.ts';
import { uploadPk } from '../../../shared/store/keys.ts';
import { startEmulators, type Emulators } from '../../../harness/emulators.ts';
import { lambdaContext } from '../../../harness/lambda.ts';

let env: Emulators;
beforeAll(async () => {
  env = await startEmulators();
  await env.createTable('second-table');
});
afterAll(async () => {
  await env?.stop();
});

const LOG =
  'Diskperf V1.2\n# req_size  fwd_wt  fwd_rd  bwd_wt  bwd_rd  rnd_wt  rnd_rd\n       4096    2.84    5.96    2.64    4.27    0.18    0.35\n';

/** Whether the table holds an upload record (any version) of the key. */
async function hasUpload(tableName: string, key: string): Promise<boolean> {
  const page = await env.db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': uploadPk(env.bucket, key) },
    }),
  );
  return (page.Items ?? []).length > 0;
}

describe('ingest environments', () => {
  it('are module copies of their own: separate handlers, separate deps, at the same time', async () => {
    const [first, second] = await ingestEnvironments(2, env.deps);
    expect(first!.handler).not.toBe(second!.handler);
    expect(first!.handler).not.toBe(sharedHandler);
    second!.setIngestDeps({ ...env.deps, tableName: 'second-table' });

    const event = async (key: string) => {
      const put = await env.put(key, LOG);
      return sqsEvent([
        s3EventRecord({ eventName: 'ObjectCreated:Put', bucket: env.bucket, key, size: put.size, eTag: put.eTag }),
      ]);
    };
    const [a, b] = await Promise.all([event('first/run.txt'), event('second/run.txt')]);
    const answers = await Promise.all([first!.handler(a, lambdaContext()), second!.handler(b, lambdaContext())]);
    expect(answers).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);

    expect(await hasUpload(env.tableName, 'first/run.txt')).toBe(true);
    expect(await hasUpload('second-table', 'first/run.txt')).toBe(false);
    expect(await hasUpload('second-table', 'second/run.txt')).toBe(true);
    expect(await hasUpload(env.tableName, 'second/run.txt')).toBe(false);
  });
});
