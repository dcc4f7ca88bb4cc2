/**
 * Reading the table back in tests: whole scans (tests may Scan; the code may not),
 * one partition, one index partition, and every item that belongs to one S3 key.
 */
import { GetCommand, QueryCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { objectPk, OBJECT_SK, runId, runPk, uploadPk, uploadSk } from '../shared/store/keys.ts';

export type Item = Record<string, unknown> & { pk: string; sk: string };

export interface TableRef {
  db: DynamoDBDocumentClient;
  tableName: string;
}

export async function scanAll(t: TableRef): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await t.db.send(new ScanCommand({ TableName: t.tableName, ExclusiveStartKey: start }));
    items.push(...((page.Items ?? []) as Item[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items.sort(byKey);
}

export async function queryAll(
  t: TableRef,
  pk: string,
  index?: { name: string; partitionKey: string },
): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  const keyName = index?.partitionKey ?? 'pk';
  do {
    const page = await t.db.send(
      new QueryCommand({
        TableName: t.tableName,
        ...(index ? { IndexName: index.name } : {}),
        KeyConditionExpression: '#k = :k',
        ExpressionAttributeNames: { '#k': keyName },
        ExpressionAttributeValues: { ':k': pk },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...((page.Items ?? []) as Item[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

export async function getItem(t: TableRef, pk: string, sk: string): Promise<Item | undefined> {
  const result = await t.db.send(new GetCommand({ TableName: t.tableName, Key: { pk, sk }, ConsistentRead: true }));
  return result.Item as Item | undefined;
}

export const getUpload = (t: TableRef, bucket: string, key: string, version: string) =>
  getItem(t, uploadPk(bucket, key), uploadSk(version));
export const getCurrent = (t: TableRef, bucket: string, key: string) => getItem(t, objectPk(bucket, key), OBJECT_SK);
export const runItems = (t: TableRef, id: string) => queryAll(t, runPk(id));

/**
 * Every item that belongs to one key: its upload records, its CURRENT pointer and
 * the items of every run any of its versions could have produced (orphans
 * included: run ids are derived from bucket, key, version and position).
 */
export async function itemsOfKey(
  t: TableRef,
  bucket: string,
  key: string,
  maxRunsPerVersion = 64,
  scanned?: Item[],
): Promise<Item[]> {
  const all = scanned ?? (await scanAll(t));
  const uploads = all.filter((i) => i.pk === uploadPk(bucket, key));
  const runPks = new Set<string>();
  for (const upload of uploads) {
    const version = String(upload['version']);
    for (let index = 0; index < maxRunsPerVersion; index++) runPks.add(runPk(runId(bucket, key, version, index)));
  }
  return all.filter((i) => i.pk === uploadPk(bucket, key) || i.pk === objectPk(bucket, key) || runPks.has(i.pk));
}

/** Table order: by pk, then sk. */
export function byKey(a: Item, b: Item): number {
  return a.pk < b.pk ? -1 : a.pk > b.pk ? 1 : a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0;
}

/** Size of an item as JSON, in bytes: a close, slightly pessimistic stand-in for DynamoDB's item size. */
export function jsonBytes(item: unknown): number {
  return Buffer.byteLength(JSON.stringify(item), 'utf8');
}
