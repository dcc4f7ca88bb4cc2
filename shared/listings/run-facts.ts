/**
 * What a run says of itself to a client, listed (RunListing) or read whole
 * (RunInfo): copied field by field from the store's items, so no key, index
 * attribute or packed column of the store ever reaches a client.
 */
import type { RunFacts, RunSource } from '../api.ts';
import type { ObjectRef } from '../store/items.ts';
import type { RunHead } from '../store/session.ts';

/** What a run says of itself, listed (RunListing) or read whole (RunInfo), copied field by field. */
export function runFacts(
  run: Pick<RunHead, 'runId' | 'format' | 'name' | 'host' | 'time' | 'from' | 'to' | 'tags' | 'context' | 'source'>,
): RunFacts {
  return {
    runId: run.runId,
    format: run.format,
    name: run.name,
    ...(run.host !== undefined ? { host: run.host } : {}),
    time: run.time,
    ...(run.from !== undefined ? { from: run.from } : {}),
    ...(run.to !== undefined ? { to: run.to } : {}),
    tags: run.tags ?? {},
    context: run.context ?? [],
    source: runSource(run.source),
  };
}

/** The part of an object version a client is shown: the store's event bookkeeping (sequencer, eTag) stays behind. */
export function runSource(ref: ObjectRef): RunSource {
  return { bucket: ref.bucket, key: ref.key, version: ref.version };
}
