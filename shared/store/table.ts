/**
 * The DynamoDB table, defined once: the CDK stack, the local lab and the tests
 * all build it from here. One table per lab holds uploads, runs, their series
 * and tags, and the device index (single-table design; keys in keys.ts, the
 * items in docs/table.md; samples are objects in the results bucket).
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export const TABLE_KEY = { partitionKey: 'pk', sortKey: 'sk' } as const;

export interface IndexDefinition {
  name: string;
  partitionKey: string;
  sortKey: string;
}

/** Runs by device label (newest first by sort key), upload records by status, and runs by tag. */
export const INDEXES = {
  byDevice: { name: 'byDevice', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  byStatus: { name: 'byStatus', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  byTag: { name: 'byTag', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
} as const satisfies Record<string, IndexDefinition>;

/** CreateTable input for emulators and the local lab (the stack builds the same shape with CDK). */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const indexes = Object.values(INDEXES);
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [
      { AttributeName: TABLE_KEY.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE_KEY.sortKey, KeyType: 'RANGE' },
    ],
    AttributeDefinitions: [
      TABLE_KEY.partitionKey,
      TABLE_KEY.sortKey,
      ...indexes.flatMap((i) => [i.partitionKey, i.sortKey]),
    ].map((name) => ({
      AttributeName: name,
      AttributeType: 'S',
    })),
    GlobalSecondaryIndexes: indexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    })),
  };
}
