/**
 * Creates the lab's table (or a test's) in dynalite and returns once it is ACTIVE.
 * dynalite answers CreateTable with the table CREATING and flips it a timer later,
 * even with createTableMs 0: a Scan or Query sent in between gets ResourceNotFound.
 */
import {
  CreateTableCommand,
  DynamoDBClient,
  waitUntilTableExists,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import { createTableInput } from '../../shared/store/table.ts';

export interface LocalTableOptions {
  region: string;
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Keep a table of that name that already exists (the lab restarting on its data), instead of failing. */
  keepExisting?: boolean;
  /** Another definition than shared/store/table.ts's (a test of an older table). */
  input?: CreateTableCommandInput;
}

/** The longest a local emulator takes to make a table ACTIVE before this gives up, in seconds. */
const ACTIVE_WITHIN_S = 30;

export async function createLocalTable(tableName: string, options: LocalTableOptions): Promise<void> {
  const client = new DynamoDBClient({
    region: options.region,
    endpoint: options.endpoint,
    credentials: options.credentials,
  });
  try {
    try {
      await client.send(new CreateTableCommand(options.input ?? createTableInput(tableName)));
    } catch (error) {
      if (!options.keepExisting || (error as { name?: string }).name !== 'ResourceInUseException') throw error;
    }
    await waitUntilTableExists(
      { client, maxWaitTime: ACTIVE_WITHIN_S, minDelay: 0.02, maxDelay: 0.2 },
      { TableName: tableName },
    );
  } finally {
    client.destroy();
  }
}
