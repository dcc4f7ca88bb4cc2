/**
 * Bringing a table written by an earlier version up to the current item shapes.
 * The local lab runs these when it starts on an existing data folder; each is
 * idempotent and touches only items that lack what it adds.
 */
import { GetCommand, PutCommand, ScanCommand, UpdateCommand, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { devicePk, deviceSk, MIGRATIONS_PK, migrationSk, RUN_META_SK } from './keys.ts';
import { isConditionFailure, type Store } from './store.ts';
import { deviceItem, type StoredSeries } from './items.ts';
import { packSeriesMeans } from './packing.ts';
import { settleVersions } from './uploads.ts';

/**
 * iostat run METAs indexed under their upload's label (IostatRunItem.gsi1pk)
 * with their series' means packed (seriesMeans), and that label listed in
 * DEVICES (its stamp keeps answers), which runs stored before lack: without
 * them a selector naming the label finds them only through their series
 * labels, one more read per run. Returns how many runs were updated.
 */
export async function indexIostatRunsByLabel(store: Store): Promise<number> {
  let indexed = 0;
  const pages = scanPages<Record<string, unknown>>(store, {
    FilterExpression:
      'sk = :meta AND #format = :iostat AND ' +
      '(attribute_not_exists(gsi1pk) OR (attribute_exists(#series) AND attribute_not_exists(seriesMeans)))',
    ExpressionAttributeNames: { '#format': 'format', '#label': 'label', '#time': 'time', '#series': 'series' },
    ExpressionAttributeValues: { ':meta': RUN_META_SK, ':iostat': 'iostat' },
    ProjectionExpression: 'pk, sk, runId, #label, #time, #series',
  });
  for await (const page of pages) {
    for (const item of page) {
      const series = item['series'] as StoredSeries[] | undefined;
      await store.db
        .send(
          new UpdateCommand({
            TableName: store.tableName,
            Key: { pk: item['pk'], sk: item['sk'] },
            UpdateExpression: `SET gsi1pk = :pk, gsi1sk = :sk${series ? ', seriesMeans = :means' : ''}`,
            // A run deleted meanwhile stays deleted.
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: {
              ':pk': devicePk(item['label'] as string),
              ':sk': deviceSk(item['time'] as string, item['runId'] as string),
              ...(series ? { ':means': packSeriesMeans(series) } : {}),
            },
          }),
        )
        .catch(ignoreConditionFailure);
      const label = deviceItem(item['label'] as string, 'iostat', item['time'] as string, item['runId'] as string);
      await store.db
        .send(
          new PutCommand({ TableName: store.tableName, Item: label, ConditionExpression: 'attribute_not_exists(pk)' }),
        )
        .catch(ignoreConditionFailure);
      indexed++;
    }
  }
  return indexed;
}

/** A Scan's pages, one at a time. Here and not in store.ts: only the lab's table upgrades scan, no function does. */
async function* scanPages<T>(
  store: Store,
  input: Omit<ScanCommandInput, 'TableName' | 'ExclusiveStartKey'>,
): AsyncGenerator<T[]> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.db.send(
      new ScanCommand({ ...input, TableName: store.tableName, ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    yield (page.Items ?? []) as T[];
    start = page.LastEvaluatedKey;
  } while (start);
}

function ignoreConditionFailure(error: unknown): void {
  if (!isConditionFailure(error)) throw error;
}

const UPLOAD_STATES = 'upload-states-v1';

/**
 * Upload records written before versions could be `replaced`: an overwritten
 * key's older versions stayed `ready` (or ended `ready`, "superseded"), and a
 * deleted key's versions kept their last state, all listed as current. Each
 * key is settled once against its OBJECT pointer (settleVersions), then a
 * marker item records that the table is upgraded. Returns how many keys were
 * settled (0 when the marker was there).
 */
export async function settleUploadStates(store: Store, now: string): Promise<number> {
  const marker = { pk: MIGRATIONS_PK, sk: migrationSk(UPLOAD_STATES) };
  const done = await store.db.send(new GetCommand({ TableName: store.tableName, Key: marker, ConsistentRead: true }));
  if (done.Item) return 0;
  const keys = new Map<string, { bucket: string; key: string }>();
  const pages = scanPages<{ bucket: string; key: string }>(store, {
    FilterExpression: '#type = :upload',
    ExpressionAttributeNames: { '#type': 'type', '#bucket': 'bucket', '#key': 'key' },
    ExpressionAttributeValues: { ':upload': 'upload' },
    ProjectionExpression: '#bucket, #key',
  });
  for await (const page of pages) for (const { bucket, key } of page) keys.set(`${bucket}/${key}`, { bucket, key });
  for (const { bucket, key } of keys.values()) await settleVersions(store, bucket, key, now);
  await store.db.send(
    new PutCommand({ TableName: store.tableName, Item: { ...marker, type: 'migration', doneAt: now } }),
  );
  return keys.size;
}
