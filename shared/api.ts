/**
 * The HTTP API's contract (DESIGN.md section 7), shared by the API functions, the
 * CLI and the tests: routes, query parameters (zod, so a bad one is a 400 naming
 * what is allowed) and response shapes.
 *
 *   GET  /devices                      { devices: DeviceEntry[] }
 *   GET  /runs?device=GLOB&format=F    { runs: RunListing[] }
 *   GET  /runs/{id}                    { run: RunRecord, series: SeriesItem[] }
 *   GET  /compare?a=SEL&b=SEL&metric=M Comparison (shared/compare.ts)
 *   GET  /uploads?status=S             { uploads: UploadListing[] }
 *   POST /uploads {key, size, device?, tags?}  PresignedUpload
 *   errors: { error: { code, message } } with 400, 403, 404; a 500 says only
 *   "internal error" and a request id (never a stack trace or an internal name)
 */
import * as z from 'zod';
import { isMetricSpec, METRIC_SPEC_HELP } from './compare.ts';
import { FORBIDDEN_IN_LABELS, MAX_LABEL_LENGTH } from './labels.ts';
import { FORMATS } from './model.ts';
import { MAX_PATTERN_LENGTH, MAX_SELECTOR_LENGTH } from './selectors.ts';
import { KEY_SEPARATOR } from './store/keys.ts';
import { UPLOAD_STATUSES, type RunRecord, type SeriesItem, type UploadStatus } from './store/records.ts';

export const ROUTES = {
  devices: 'GET /devices',
  runs: 'GET /runs',
  run: 'GET /runs/{id}',
  compare: 'GET /compare',
  uploads: 'GET /uploads',
  createUpload: 'POST /uploads',
} as const;

export const MAX_PAGE = 500;

/** GET /devices takes no parameters: any is refused, like an unknown one elsewhere. */
export const DevicesQuery = z.object({});

/** No control characters and no key separator: see shared/labels.ts. */
const noForbidden = { message: `no control characters and no "${KEY_SEPARATOR}"` };

export const RunsQuery = z.object({
  device: z
    .string()
    .min(1)
    .max(MAX_PATTERN_LENGTH)
    .refine((d) => !FORBIDDEN_IN_LABELS.test(d), noForbidden)
    .optional(),
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

/** S3's limit on a key, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

/**
 * Keys may hold any printable text (DESIGN.md section 3) up to S3's 1024 bytes,
 * but not a `.` or `..` segment or a leading `/`: URL normalisation would send
 * the PUT to another path than the one signed (on an emulator, another bucket).
 */
export const CreateUploadBody = z.object({
  key: z
    .string()
    .min(1)
    .refine((k) => Buffer.byteLength(k, 'utf8') <= MAX_KEY_BYTES, { message: `at most ${MAX_KEY_BYTES} bytes` })
    // eslint-disable-next-line no-control-regex
    .refine((k) => !/[\u0000-\u001f\u007f]/.test(k), { message: 'no control characters' })
    .refine((k) => !k.startsWith('/'), { message: 'no leading /' })
    .refine((k) => !k.split('/').some((segment) => segment === '.' || segment === '..'), { message: 'no . or .. path segments' }),
  /**
   * Bytes the client will send: at most the lab's limit, and signed as the PUT's
   * Content-Length, so S3 refuses a body of any other size.
   */
  size: z.number().int().min(0),
  device: z.string().min(1).max(MAX_LABEL_LENGTH).refine((d) => !FORBIDDEN_IN_LABELS.test(d), noForbidden).optional(),
  tags: z.record(z.string().max(64), z.string().max(64)).optional(),
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
  run: RunRecord;
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
  /** Send these headers with the PUT, exactly: they are signed (content-length among them). */
  headers: Record<string, string>;
  bucket: string;
  key: string;
  expiresIn: number;
}

export interface ApiError {
  /** `requestId` on a 500 only: what to quote when reporting it (the logs carry the details). */
  error: { code: string; message: string; requestId?: string };
}
