/**
 * Item keys of the single table (schema in ./table.ts). Every key is built here,
 * and no other file holds key text (test/shared/store/key-text.test.ts checks).
 *
 *   pk                         sk                     what
 *   UPLOAD#<bucket>/<key>      VERSION#<version>      an upload record (one per object version)
 *   OBJECT#<bucket>/<key>      CURRENT                which version of a key is current, its runs
 *   RUN#<runId>                META                   a run: metadata, diskperf rows, series summaries, the
 *                                                     samples object it names (iostat); written last, so its
 *                                                     presence marks the run complete
 *   RUN#<runId>                SERIES#<native>        an iostat series' summary (indexed by device)
 *   RUN#<runId>                TAG#<key>=<value>      one tag of the run (indexed by tag), removed with the run
 *   DEVICES                    <label>                a device label that has runs (GET /devices; counts come
 *                                                     from the byDevice index) and the stamp of its runs'
 *                                                     last change; dropped with its last run
 *
 * Indexes: byDevice (gsi1pk DEVICE#<label>, gsi1sk <time>#<runId>) holds diskperf
 * run META items, iostat run META items (under their upload's label) and iostat
 * SERIES items (under `<label>/<native>`); byStatus (gsi2pk STATUS#<status>,
 * gsi2sk <updatedAt>#<object>) holds the upload records that are their key's
 * current state, and gsi2pk STATUS#<status>#PAST the ones that are only its
 * history (replaced versions, a deleted key's older versions); byTag (gsi3pk
 * TAG#<key>=<value>, gsi3sk <time>#<runId>) holds the TAG items of runs.
 */
import { createHash } from 'node:crypto';
import { KEY_SEPARATOR } from '../labels.ts';
import { RUN_ID_HEX_DIGITS } from '../model.ts';

export { KEY_SEPARATOR };

/** Every key is its parts joined by the separator labels.ts reserves: no label can hold it. */
const key = (...parts: string[]) => parts.join(KEY_SEPARATOR);

export const uploadPk = (bucket: string, object: string) => key('UPLOAD', `${bucket}/${object}`);
export const uploadSk = (version: string) => key('VERSION', version);
export const objectPk = (bucket: string, object: string) => key('OBJECT', `${bucket}/${object}`);
export const OBJECT_SK = 'CURRENT';
export const runPk = (runId: string) => key('RUN', runId);
export const RUN_META_SK = 'META';
export const seriesSk = (native: string) => key('SERIES', native);
export const DEVICES_PK = 'DEVICES';
export const devicePk = (label: string) => key('DEVICE', label);
export const deviceSk = (time: string, runId: string) => key(time, runId);
/** A TAG item's sort key and its byTag partition: tag keys and values never hold `=` (labels.ts parseTags). */
export const tagKey = (name: string, value: string) => key('TAG', `${name}=${value}`);
export const statusPk = (status: string) => key('STATUS', status);
/** The byStatus partition of records that are no longer their key's current state. */
export const pastStatusPk = (status: string) => key('STATUS', status, 'PAST');
/** One item per table upgrade done (migrations.ts), so a start on an upgraded table skips its scan. */
export const MIGRATIONS_PK = 'MIGRATION';
export const migrationSk = (name: string) => key('DONE', name);
/** DynamoDB's limit on a sort key value, index keys included (UTF-8 bytes). */
export const MAX_SORT_KEY_BYTES = 1024;
export const statusSk = (updatedAt: string, bucket: string, object: string, version: string) =>
  boundedSortKey(key(updatedAt, `${bucket}/${object}`, version));

/**
 * A sort key cut to MAX_SORT_KEY_BYTES: an S3 key alone may take 1,024 bytes.
 * The cut keeps the order-giving start and ends in a hash of the whole, so
 * different long keys still sort apart.
 */
export function boundedSortKey(text: string): string {
  if (Buffer.byteLength(text) <= MAX_SORT_KEY_BYTES) return text;
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const room = MAX_SORT_KEY_BYTES - hash.length - 1;
  // Cut on a character boundary: whole UTF-16 code points only, within `room` bytes.
  let cut = '';
  let bytes = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char);
    if (bytes + size > room) break;
    cut += char;
    bytes += size;
  }
  return key(cut, hash);
}

/**
 * A run's id: the same object version and position always give the same id, so a
 * replayed event rewrites the same items instead of adding new ones.
 */
export function runId(bucket: string, key: string, version: string, index: number): string {
  const hash = createHash('sha256').update(`${bucket}\0${key}\0${version}\0${index}`).digest('hex');
  return `r${hash.slice(0, RUN_ID_HEX_DIGITS)}`;
}

/** The ids of a version's runs: they are numbered 0..count-1, so the count is all a pointer keeps. */
export function runIdsOf(bucket: string, key: string, version: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => runId(bucket, key, version, index));
}

/** S3 sequencers are hex strings of varying length: padded, they compare as strings. */
export function sortableSequencer(sequencer: string | undefined): string {
  return (sequencer ?? '').toUpperCase().padStart(32, '0');
}
