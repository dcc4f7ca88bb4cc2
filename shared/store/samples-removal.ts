/**
 * Deleting runs' samples objects from the results bucket (samples-schema.ts
 * names them): a run's object goes with its items (removal.ts). Writing them
 * is samples.ts.
 */
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { samplesKey } from './samples-schema.ts';

/** The results bucket and a client for it: where samples objects are written and deleted. */
export interface ResultsBucket {
  s3: S3Client;
  resultsBucket: string;
}

/** Delete the samples objects of these runs (a run without one is fine: S3 deletes nothing). */
export async function deleteSamples(bucket: ResultsBucket, runIds: readonly string[]): Promise<void> {
  for (const runId of runIds)
    await bucket.s3.send(new DeleteObjectCommand({ Bucket: bucket.resultsBucket, Key: samplesKey(runId) }));
}
