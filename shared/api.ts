/**
 * The HTTP API's contract (README, "Comparing"), shared by the API functions, the
 * CLI and the tests: routes, query parameters (zod, so a bad one is a 400 naming
 * what is allowed; unknown ones are refused; one given empty counts as not
 * given) and response shapes.
 *
 *   GET  /devices?limit=N&next=C                    { devices: DeviceEntry[], next? }
 *   GET  /runs?device=GLOB&format=F&limit=N&next=C  { runs: RunListing[], next? }
 *   GET  /runs/{id}                                 { run: RunRecord, series: SeriesItem[] }
 *   GET  /compare?a=SEL&b=SEL&metric=M              Comparison (shared/compare.ts)
 *   GET  /uploads?status=S&limit=N&next=C           { uploads: UploadListing[], next? }
 *   POST /uploads {key, size, device?, tags?}       PresignedUpload
 *   errors: { error: { code, message } } with 400, 403, 404; a 500 says only
 *   "internal error" and a request id (never a stack trace or an internal name)
 *
 * Every listing pages: at most `limit` items (default 100, at most MAX_PAGE)
 * and at most MAX_PAGE_BYTES of them, and `next` when there may be more: the
 * same request with `next` added gives the following page. Follow `next` until
 * it is absent; GET /runs over many labels may answer a short (even empty) page
 * with a `next`, as it reads a bounded number of labels per request.
 */
// zod's mini build, a seventh of the classic one's size: these schemas go into
// the API function's bundle, which Node compiles at every cold start.
import * as z from 'zod/mini';
import { isMetricSpec, METRIC_SPEC_HELP } from './compare.ts';
import { FORBIDDEN_IN_LABELS, MAX_LABEL_LENGTH } from './labels.ts';
import { FORMATS } from './model.ts';
import { MAX_PATTERN_LENGTH, MAX_SELECTOR_LENGTH } from './selectors.ts';
import { MAX_CURSOR_LENGTH } from './store/cursors.ts';
import { DEFAULT_PAGE, MAX_PAGE } from './store/pages.ts';
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

export { DEFAULT_PAGE, MAX_PAGE, MAX_PAGE_BYTES } from './store/pages.ts';

/** No control characters and no key separator: see shared/labels.ts. */
const noForbidden = { message: `no control characters and no "${KEY_SEPARATOR}"` };

/**
 * A parameter given empty (`?status=`, `?device=&format=`, as a form or a URL
 * copied from the README sends it) is read as not given at all: an empty filter
 * filters nothing, an empty limit is the default one.
 */
type EmptyIsAbsent<T extends z.core.$ZodType> = z.ZodMiniPipe<z.ZodMiniTransform<unknown, unknown>, T>;
const emptyIsAbsent = <T extends z.core.$ZodType>(schema: T): EmptyIsAbsent<T> => z.pipe(z.transform((value: unknown) => (value === '' ? undefined : value)), schema);

/** A query's parameters, each read by emptyIsAbsent first; unknown ones are refused. */
function querySchema<Shape extends Record<string, z.core.$ZodType>>(shape: Shape) {
  const params = Object.fromEntries(Object.entries(shape).map(([name, schema]) => [name, emptyIsAbsent(schema)]));
  return z.strictObject(params as { [Name in keyof Shape]: EmptyIsAbsent<Shape[Name]> });
}

const pageLimit = () => z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(MAX_PAGE)), DEFAULT_PAGE);
/** What the listing's answer gave as `next`; the listing checks it (shared/store/cursors.ts). */
const pageCursor = () => z.optional(z.string().check(z.minLength(1), z.maxLength(MAX_CURSOR_LENGTH)));

export const DevicesQuery = querySchema({
  limit: pageLimit(),
  next: pageCursor(),
});

export const RunsQuery = querySchema({
  /** A label or pattern (shared/selectors.ts parsePattern checks it); escaped, every character may take two. */
  device: z.optional(z.string().check(z.minLength(1), z.maxLength(2 * MAX_PATTERN_LENGTH))),
  format: z.optional(z.enum(FORMATS)),
  limit: pageLimit(),
  next: pageCursor(),
});

export const CompareQuery = querySchema({
  a: z.string().check(z.minLength(1), z.maxLength(MAX_SELECTOR_LENGTH)),
  b: z.string().check(z.minLength(1), z.maxLength(MAX_SELECTOR_LENGTH)),
  metric: z._default(z.string(), 'all').check(z.refine(isMetricSpec, { message: `expected ${METRIC_SPEC_HELP}` })),
});

export const UploadsQuery = querySchema({
  status: z.optional(z.enum(UPLOAD_STATUSES)),
  limit: pageLimit(),
  next: pageCursor(),
});

/** S3's limit on a key, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

/**
 * Keys may hold any printable text (README, "Upload conventions") up to S3's 1024 bytes,
 * but not a `.` or `..` segment or a leading `/`: URL normalisation would send
 * the PUT to another path than the one signed (on an emulator, another bucket).
 */
export const CreateUploadBody = z.strictObject({
  key: z.string().check(
    z.minLength(1),
    z.refine((k) => Buffer.byteLength(k, 'utf8') <= MAX_KEY_BYTES, { message: `at most ${MAX_KEY_BYTES} bytes` }),
    // eslint-disable-next-line no-control-regex
    z.refine((k) => !/[\u0000-\u001f\u007f]/.test(k), { message: 'no control characters' }),
    z.refine((k) => !k.startsWith('/'), { message: 'no leading /' }),
    z.refine((k) => !k.split('/').some((segment) => segment === '.' || segment === '..'), { message: 'no . or .. path segments' }),
  ),
  /**
   * Bytes the client will send: at most the lab's limit, and signed as the PUT's
   * Content-Length, so S3 refuses a body of any other size.
   */
  size: z.number().check(z.int(), z.minimum(0)),
  device: z.optional(z.string().check(z.minLength(1), z.maxLength(MAX_LABEL_LENGTH), z.refine((d) => !FORBIDDEN_IN_LABELS.test(d), noForbidden))),
  tags: z.optional(z.record(z.string().check(z.maxLength(64)), z.string().check(z.maxLength(64)))),
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

/** One page of a listing: `next` (absent on the last page) asks for the following one. */
export interface DevicesPage {
  devices: DeviceEntry[];
  next?: string;
}

export interface RunsPage {
  runs: RunListing[];
  next?: string;
}

export interface UploadsPage {
  uploads: UploadListing[];
  next?: string;
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
