/**
 * The listing use cases of the API, one module each: GET /devices
 * (listings/devices.ts), GET /runs (listings/runs.ts), GET /runs/{id}
 * (listings/run-detail.ts), GET /runs/{id}/samples (listings/samples.ts, from
 * the run's samples object) and GET /uploads (listings/uploads.ts). Each reads
 * the store's items and answers the contract's shapes (shared/api.ts).
 */
export { listDevices, pageDevices } from './listings/devices.ts';
export { getRun, MAX_SERIES_IN_DETAIL } from './listings/run-detail.ts';
export {
  LIST_INDEX_QUERIES,
  LIST_LABELS_SCANNED,
  LIST_READ_MS,
  listRuns,
  pageRuns,
  type RunsRequest,
} from './listings/runs.ts';
export {
  getSamples,
  SAMPLE_METRIC_HELP,
  SamplesError,
  type SamplesDeps,
  type SamplesRequest,
} from './listings/samples.ts';
export { listUploads, pageUploads, type UploadsRequest } from './listings/uploads.ts';
export type { PageRequest } from './listings/pages.ts';
