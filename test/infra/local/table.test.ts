/**
 * infra/local/table.ts: the table it creates answers a Scan as soon as it returns,
 * though dynalite keeps a new table CREATING for a while (here 300 ms, so the
 * wait is seen); a second create keeps the table when asked, and fails when not.
 */
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalTable } from '../../../infra/local/table.ts';

const region = 'us-east-1';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let server: Server;
let endpoint: string;

beforeAll(async () => {
  server = dynalite({ createTableMs: 300 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('createLocalTable', () => {
  it('returns once the table is ACTIVE: a Scan right after is answered', async () => {
    const started = Date.now();
    await createLocalTable('fresh', { region, endpoint, credentials });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    const client = new DynamoDBClient({ region, endpoint, credentials });
    try {
      const page = await client.send(new ScanCommand({ TableName: 'fresh' }));
      expect(page.Count).toBe(0);
    } finally {
      client.destroy();
    }
  });

  it('keeps an existing table with keepExisting, and fails naming it without', async () => {
    await createLocalTable('kept', { region, endpoint, credentials });
    await expect(
      createLocalTable('kept', { region, endpoint, credentials, keepExisting: true }),
    ).resolves.toBeUndefined();
    await expect(createLocalTable('kept', { region, endpoint, credentials })).rejects.toMatchObject({
      name: 'ResourceInUseException',
    });
  });
});
