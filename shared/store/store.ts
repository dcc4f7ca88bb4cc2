/** What every store module writes through: the table and its client. */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface Store {
  db: DynamoDBDocumentClient;
  tableName: string;
}

/** A conditional write whose condition did not hold (the SDK's class, or its name from a bundled copy). */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof ConditionalCheckFailedException || (error as { name?: string })?.name === 'ConditionalCheckFailedException';
}
