/** What every store module writes through: the table and its client. */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

export interface Store {
  db: DynamoDBDocumentClient;
  tableName: string;
}

/** A conditional write whose condition did not hold (the SDK's class, or its name from a bundled copy). */
export function isConditionFailure(error: unknown): boolean {
  return (
    error instanceof ConditionalCheckFailedException ||
    (error as { name?: string })?.name === 'ConditionalCheckFailedException'
  );
}

/** A Query's pages, one at a time: a caller that has seen enough stops asking. */
export async function* queryPages<T>(
  store: Store,
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>,
  from?: Record<string, unknown>,
): AsyncGenerator<T[]> {
  let start = from;
  do {
    const page = await store.db.send(
      new QueryCommand({ ...input, TableName: store.tableName, ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    yield (page.Items ?? []) as T[];
    start = page.LastEvaluatedKey;
  } while (start);
}

/** fn over items, `limit` at a time; after a failure no new item is started. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** What the readers need of the store: the same table and client. */
export type ReadStore = Store;
