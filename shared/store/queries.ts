/**
 * The bounded reads every reader is made of: a Query's items up to a maximum,
 * BatchGets of 100 keys (their UnprocessedKeys retried by retry.ts), and the
 * projections readers ask for.
 */
import { BatchGetCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { runPk, RUN_META_SK } from './keys.ts';
import { untilProcessed } from './retry.ts';
import { queryPages, type ReadStore } from './store.ts';

const BATCH_GET_SIZE = 100;

/**
 * A ProjectionExpression of these attributes, or nested ones (`meta.parameters`),
 * every name aliased (some are reserved words: `meta.parameters` is `#p0.#p1`).
 */
export function projection(paths: readonly string[]): {
  ProjectionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
} {
  const aliases = new Map<string, string>();
  const alias = (name: string) => {
    let a = aliases.get(name);
    if (a === undefined) aliases.set(name, (a = `#p${aliases.size}`));
    return a;
  };
  const ProjectionExpression = paths.map((path) => path.split('.').map(alias).join('.')).join(', ');
  return {
    ProjectionExpression,
    ExpressionAttributeNames: Object.fromEntries([...aliases].map(([name, a]) => [a, name])),
  };
}

/** Every page of a query, or the first `max` items (more pages are read only while needed), from `start` on. */
export async function queryItems<T>(
  store: ReadStore,
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>,
  max = Infinity,
  from?: Record<string, unknown>,
): Promise<T[]> {
  const items: T[] = [];
  for await (const page of queryPages<T>(store, input, from)) {
    items.push(...page);
    if (items.length >= max) break;
  }
  return items.length > max ? items.slice(0, max) : items;
}

/**
 * Items by key, these attributes of each (a key with no item is left out), in BatchGets of 100 with
 * UnprocessedKeys retried.
 */
export async function batchGetItems<T>(
  store: ReadStore,
  keys: readonly { pk: string; sk: string }[],
  attributes: readonly string[],
  options: { consistent?: boolean } = {},
): Promise<T[]> {
  const out: T[] = [];
  const { ProjectionExpression, ExpressionAttributeNames } = projection(attributes);
  const send = async (batch: Record<string, unknown>[]) => {
    const request = {
      Keys: batch,
      ProjectionExpression,
      ExpressionAttributeNames,
      ...(options.consistent ? { ConsistentRead: true } : {}),
    };
    const result = await store.db.send(new BatchGetCommand({ RequestItems: { [store.tableName]: request } }));
    out.push(...((result.Responses?.[store.tableName] ?? []) as T[]));
    return (result.UnprocessedKeys?.[store.tableName]?.Keys ?? []) as Record<string, unknown>[];
  };
  for (let i = 0; i < keys.length; i += BATCH_GET_SIZE)
    await untilProcessed(keys.slice(i, i + BATCH_GET_SIZE), send, 'keys');
  return out;
}

/** Run METAs by id, these attributes of each (absent: no META, so no complete run). */
export async function batchGetMetas<T extends { runId: string }>(
  store: ReadStore,
  runIds: readonly string[],
  attributes: readonly string[],
): Promise<Map<string, T>> {
  const items = await batchGetItems<T>(
    store,
    runIds.map((id) => ({ pk: runPk(id), sk: RUN_META_SK })),
    attributes,
  );
  return new Map(items.map((item) => [item.runId, item]));
}
