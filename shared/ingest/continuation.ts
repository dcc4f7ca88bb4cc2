/**
 * The messages a step sends to the ingest queue when it stops at its deadline,
 * for the next delivery to go on where it stopped. They travel beside S3's own
 * notifications on the same queue; `benchdrop: 'continue'` tells them apart.
 *
 *   {"benchdrop":"continue","step":"end-version","bucket":"b","key":"k","version":"v",
 *    "status":"failed","message":"line 12: ...","line":12,"details":"..."}
 *   {"benchdrop":"continue","step":"remove-replaced","bucket":"b","key":"k"}
 */
import type { UploadRecord } from '../store/items.ts';

/** The statuses a step ends a version with (the version's runs, if any, removed). */
export const ENDING_STATUSES = ['ready', 'failed', 'replaced', 'deleted'] as const;

/** What a version ends as once its items are removed (UploadRecord fields). */
export interface Ending {
  status: (typeof ENDING_STATUSES)[number];
  message: string;
  line: number;
  fields?: Pick<Partial<UploadRecord>, 'format' | 'device' | 'tags' | 'warnings' | 'details' | 'replacedBy'>;
}

export type Continuation =
  | ({ benchdrop: 'continue'; step: 'end-version'; bucket: string; key: string; version: string } & Ending)
  | { benchdrop: 'continue'; step: 'remove-replaced'; bucket: string; key: string };

export function continuationBody(continuation: Continuation): string {
  return JSON.stringify(continuation);
}

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** The continuation a message body holds, or undefined when it is not one. */
export function parseContinuation(body: unknown): Continuation | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const c = body as Record<string, unknown>;
  if (c['benchdrop'] !== 'continue' || !isText(c['bucket']) || !isText(c['key'])) return undefined;
  if (c['step'] === 'remove-replaced')
    return { benchdrop: 'continue', step: 'remove-replaced', bucket: c['bucket'], key: c['key'] };
  const status = ENDING_STATUSES.find((s) => s === c['status']);
  if (c['step'] !== 'end-version' || !isText(c['version']) || status === undefined) return undefined;
  if (typeof c['message'] !== 'string' || typeof c['line'] !== 'number') return undefined;
  const fields =
    typeof c['fields'] === 'object' && c['fields'] !== null ? (c['fields'] as Ending['fields']) : undefined;
  return {
    benchdrop: 'continue',
    step: 'end-version',
    bucket: c['bucket'],
    key: c['key'],
    version: c['version'],
    status,
    message: c['message'],
    line: c['line'],
    ...(fields ? { fields } : {}),
  };
}
