/**
 * infra/local/dynalite-iterators.ts: every LevelDB iterator dynalite opens for a
 * Query or a Scan is closed once the request is answered, on disk (the lab's
 * classic-level) and in memory (the tests' memory-level). Without the fix each
 * request left one open: the lab's memory grew with every write while the API
 * was read. Open iterators are counted where abstract-level lists them on their
 * database (attachResource / detachResource).
 */
import '../../../infra/local/dynalite-iterators.ts';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abstractLevelOf } from '../../../infra/local/dynalite-iterators.ts';
import { createLocalTable } from '../../../infra/local/table.ts';
import { INDEXES } from '../../../shared/store/table.ts';

const TABLE = 'iterators';
const open = new Set<object>();
const restores: (() => void)[] = [];

beforeAll(() => {
  for (const store of ['classic-level', 'memory-level'] as const) {
    const proto = abstractLevelOf(store).AbstractLevel.prototype;
    const { attachResource, detachResource } = proto;
    const isIterator = (resource: object) => typeof (resource as { next?: unknown }).next === 'function';
    proto.attachResource = function (resource) {
      if (isIterator(resource)) open.add(resource);
      return attachResource.call(this, resource);
    };
    proto.detachResource = function (resource) {
      open.delete(resource);
      return detachResource.call(this, resource);
    };
    restores.push(() => Object.assign(proto, { attachResource, detachResource }));
  }
});

afterAll(() => {
  for (const restore of restores.splice(0)) restore();
});

/** Closing is asynchronous: a few turns of the event loop after the answer. */
async function settled(): Promise<number> {
  for (let i = 0; i < 20 && open.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
  return open.size;
}

describe.each([
  ['on disk (classic-level, as the lab runs it)', true],
  ['in memory (memory-level, as the tests run it)', false],
])('dynalite %s', (_name, onDisk) => {
  let server: Server;
  let db: DynamoDBDocumentClient;
  let directory: string | undefined;

  beforeAll(async () => {
    directory = onDisk ? mkdtempSync(join(tmpdir(), 'benchdrop-dynalite-')) : undefined;
    server = dynalite({ createTableMs: 0, ...(directory ? { path: directory } : {}) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const region = 'us-east-1';
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    await createLocalTable(TABLE, { region, endpoint, credentials });
    const client = new DynamoDBClient({ region, endpoint, credentials });
    db = DynamoDBDocumentClient.from(client);
    for (let batch = 0; batch < 4; batch++) {
      const items = Array.from({ length: 25 }, (_, i) => ({
        pk: 'P',
        sk: String(batch * 25 + i).padStart(3, '0'),
        gsi2pk: 'S',
        gsi2sk: String(i),
      }));
      await db.send(
        new BatchWriteCommand({ RequestItems: { [TABLE]: items.map((Item) => ({ PutRequest: { Item } })) } }),
      );
    }
  });

  afterAll(async () => {
    db?.destroy();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  it('leaves no iterator open after queries read to the end, stopped by a Limit, or paged, and after a scan', async () => {
    const before = await settled();
    const all = await db.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :p',
        ExpressionAttributeValues: { ':p': 'P' },
      }),
    );
    expect(all.Items).toHaveLength(100);
    const limited = await db.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :p',
        ExpressionAttributeValues: { ':p': 'P' },
        Limit: 3,
      }),
    );
    expect(limited.Items).toHaveLength(3);
    let start: Record<string, unknown> | undefined;
    let pages = 0;
    do {
      const page = await db.send(
        new QueryCommand({
          TableName: TABLE,
          IndexName: INDEXES.byStatus.name,
          KeyConditionExpression: 'gsi2pk = :s',
          ExpressionAttributeValues: { ':s': 'S' },
          Limit: 30,
          ExclusiveStartKey: start,
        }),
      );
      start = page.LastEvaluatedKey;
      pages++;
    } while (start);
    expect(pages).toBeGreaterThan(1);
    expect((await db.send(new ScanCommand({ TableName: TABLE }))).Items).toHaveLength(100);
    expect(before).toBe(0);
    expect(await settled()).toBe(0);
  });
});
