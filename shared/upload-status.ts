/**
 * What became of an object version, as the pipeline records it and the API
 * lists it: `processing`, then `ready` (its runs) or `failed`; `replaced` once a
 * newer version of its key is current (its runs removed), `deleted` once its key
 * (or the version itself) was deleted.
 */
export const UPLOAD_STATUSES = ['processing', 'ready', 'failed', 'replaced', 'deleted'] as const;
export type UploadStatus = (typeof UPLOAD_STATUSES)[number];
