/**
 * The HTTP API's contract (DESIGN.md section 7), shared by the API functions, the
 * CLI and the tests: routes, query parameters (zod, so a bad one is a 400 naming
 * what is allowed) and response shapes.
 *
 *   GET  /devices                      { devices: DeviceEntry[] }
 *   GET  /runs?device=GLOB&format=F    { runs: RunListing[] }
 *   GET  /runs/{id}                    { run: RunItem, series: SeriesItem[] }
 *   GET  /compare?a=SEL&b=SEL&metric=M Comparison (shared/compare.ts)
 *   GET  /uploads?status=S             { uploads: UploadListing[] }
 *   POST /uploads {key, device?, tags?, size?}  PresignedUpload
 *   errors: { error: { code, message } } with 400, 403, 404 (never a stack trace)
 */
import * as z from 'zod';
import { isMetricSpec, METRIC_SPEC_HELP } from './compare.ts';
import { FORMATS } from './model.ts';
import { MAX_SELECTOR_LENGTH } from './selectors.ts';
import { UPLOAD_STATUSES, type RunItem, type SeriesItem, type UploadStatus } from './store/records.ts';

export const ROUTES = {
  devices: 'GET /devices',
  runs: 'GET /runs',
  run: 'GET /runs/{id}',
  compare: 'GET /compare',
  uploads: 'GET /uploads',
  createUpload: 'POST /uploads',
} as const;

export const MAX_PAGE = 500;

export const RunsQuery = z.object({
  device: z.string().min(1).max(128).optional(),
  format: z.enum(FORMATS).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(100),
});

export const CompareQuery = z.object({
  a: z.string().min(1).max(MAX_SELECTOR_LENGTH),
  b: z.string().min(1).max(MAX_SELECTOR_LENGTH),
  metric: z
    .string()
    .default('all')
    .refine(isMetricSpec, { message: `expected ${METRIC_SPEC_HELP}` }),
});

export const UploadsQuery = z.object({
  status: z.enum(UPLOAD_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(100),
});

/** Keys may hold any printable text (DESIGN.md section 3) up to S3's 1024 bytes. */
export const CreateUploadBody = z.object({
  key: z
    .string()
    .min(1)
    .refine((k) => Buffer.byteLength(k, 'utf8') <= 1024, { message: 'at most 1024 bytes' })
    .refine((k) => !/[\u0000-\u001f\u007f]/.test(k), { message: 'no control characters' }),
  device: z.string().min(1).max(128).optional(),
  tags: z.record(z.string().max(64), z.string().max(64)).optional(),
  /** Bytes the client will send: checked against the lab's limit before signing. */
  size: z.number().int().min(0).optional(),
});

export interface DeviceEntry {
  label: string;
  format: string;
  lastSeen: string;
}

export interface RunListing {
  runId: string;
  device: string;
  format: string;
  name: string;
  host?: string;
  time: string;
  tags: Record<string, string>;
  context: string[];
  source: { bucket: string; key: string; version: string };
}

export interface RunDetail {
  run: RunItem;
  series: SeriesItem[];
}

export interface UploadListing {
  bucket: string;
  key: string;
  version: string;
  status: UploadStatus;
  runCount: number;
  runIds: string[];
  message?: string;
  line?: number;
  device?: string;
  format?: string;
  updatedAt: string;
}

export interface PresignedUpload {
  url: string;
  method: 'PUT';
  /** Send these headers with the PUT, exactly: they are signed. */
  headers: Record<string, string>;
  bucket: string;
  key: string;
  expiresIn: number;
}

export interface ApiError {
  error: { code: string; message: string };
}
