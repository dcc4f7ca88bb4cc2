/**
 * The HTTP API's contract (README, "Comparing"), shared by the API functions, the
 * CLI and the tests: routes, query parameters (zod, so a bad one is a 400 naming
 * what is allowed; unknown ones are refused; one given empty counts as not
 * given) and response shapes.
 *
 *   GET  /devices?limit=N&next=C                    { devices: DeviceEntry[], next? }
 *   GET  /runs?device=GLOB&format=F&limit=N&next=C  { runs: RunListing[], next? }
 *   GET  /runs/{id}                                 { run: RunInfo, series: SeriesInfo[] }
 *   GET  /runs/{id}/samples?series=S&metric=M&limit=N&next=C  RunSamples
 *   GET  /compare?a=SEL&b=SEL&metric=M              Comparison (shared/compare.ts)
 *        &format=csv|md                             its table as text/csv, text/markdown
 *   GET  /uploads?status=S&history=B&limit=N&next=C { uploads: UploadListing[], next? }
 *   POST /uploads {key, size, device?, tags?}       PresignedUpload
 *   POST /reports {a, b, metric?}                   CreatedReport: the comparison frozen (shared/reports.ts)
 *   GET  /reports/{id}?format=html|json             the frozen page (text/html) or its JSON, as stored
 *   errors: { error: { code, message } } with 400, 403, 404; a 500 says only
 *   "internal error" and a request id (never a stack trace or an internal name)
 *
 * Every listing pages: at most `limit` items (default 100, at most MAX_PAGE)
 * and at most MAX_PAGE_BYTES of them, and `next` when there may be more: the
 * same request with `next` added gives the following page. Follow `next` until
 * it is absent; GET /runs over many labels may answer a short (even empty) page
 * with a `next`, as it reads a bounded number of labels per request.
 *
 * GET /uploads lists each key's current state: the record of its current
 * version (`deleted` for a deleted key), and beside it a newer version still
 * `processing` or `failed` (the current one's runs still stand). With
 * `history=true` it lists every version's record, `replaced` ones (naming
 * `replacedBy`) and a deleted key's older versions too. Both newest update
 * first; `status` filters either.
 *
 * GET /runs lists each run once (RunListing): an iostat run under its upload's
 * label, unless the device pattern names disk labels only (`x4100/*`,
 * `x4100/sda`): then once per disk it matches, under the disk's label.
 * GET /runs/{id} answers RunInfo and SeriesInfo exactly: they are built field
 * by field from the stored items (shared/listings/), so no key, index
 * attribute or packed column of the store ever reaches a client.
 */
// zod's mini build, a seventh of the classic one's size: these schemas go into
// the API function's bundle, which Node compiles at every cold start.
import * as z from 'zod/mini';
import { isMetricSpec, METRIC_SPEC_HELP } from './metrics.ts';
import { ANSWER_FORMATS } from './comparison/table.ts';
import { FORBIDDEN_IN_LABELS, KEY_SEPARATOR, MAX_LABEL_LENGTH, MAX_TAG_LENGTH } from './labels.ts';
import type { DiskperfMetric, FioMetric, IostatMetric } from './metrics.ts';
import {
  FORMATS,
  type DiskperfMeta,
  type FioMeta,
  type FioRow,
  type Format,
  type IostatColumn,
  type IostatMeta,
  type MetricSummary,
  type ParseWarning,
  type Platform,
} from './model.ts';
import { MAX_PATTERN_LENGTH, MAX_SELECTOR_LENGTH } from './selectors.ts';
import { MAX_CURSOR_LENGTH } from './store/cursors.ts';
import { DEFAULT_PAGE, MAX_PAGE } from './store/pages.ts';
import type { DiskperfRows } from './store/items.ts';
import type { SeriesSamples } from './store/sample-reader.ts';
import { UPLOAD_STATUSES, type UploadStatus } from './upload-status.ts';

export const ROUTES = {
  devices: 'GET /devices',
  runs: 'GET /runs',
  run: 'GET /runs/{id}',
  samples: 'GET /runs/{id}/samples',
  compare: 'GET /compare',
  uploads: 'GET /uploads',
  createUpload: 'POST /uploads',
  createReport: 'POST /reports',
  report: 'GET /reports/{id}',
} as const;

/**
 * GET /compare's response header: whether its answer was computed for this request or reused
 * (`computed`, `cached`).
 */
export const ANSWER_HEADER = 'x-benchdrop-answer';

export { DEFAULT_PAGE, MAX_PAGE, MAX_PAGE_BYTES } from './store/pages.ts';

/** No control characters and no key separator: see shared/labels.ts. */
const noForbidden = { message: `no control characters and no "${KEY_SEPARATOR}"` };

/**
 * A parameter given empty (`?status=`, `?device=&format=`, as a form or a URL
 * copied from the README sends it) is read as not given at all: an empty filter
 * filters nothing, an empty limit is the default one.
 */
type EmptyIsAbsent<T extends z.core.$ZodType> = z.ZodMiniPipe<z.ZodMiniTransform<unknown, unknown>, T>;
const emptyIsAbsent = <T extends z.core.$ZodType>(schema: T): EmptyIsAbsent<T> =>
  z.pipe(
    z.transform((value: unknown) => (value === '' ? undefined : value)),
    schema,
  );

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

/** Samples in one answer of GET /runs/{id}/samples: by default, and at most. */
export const DEFAULT_SAMPLES = 10_000;
export const MAX_SAMPLES = 50_000;

/**
 * One series' samples of one metric; the series and the metric are checked
 * against the run (shared/listings/samples.ts), so a 404 can name the ones it has.
 */
export const SamplesQuery = querySchema({
  /** The series' native name (`sda`) or its label (`<label>/sda`), as GET /runs/{id} lists it. */
  series: z.string().check(z.minLength(1), z.maxLength(2 * MAX_LABEL_LENGTH)),
  /** A canonical iostat metric (shared/metrics.ts IOSTAT_METRICS). */
  metric: z.string().check(z.minLength(1), z.maxLength(64)),
  limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(MAX_SAMPLES)), DEFAULT_SAMPLES),
  next: pageCursor(),
});

export const CompareQuery = querySchema({
  a: z.string().check(z.minLength(1), z.maxLength(MAX_SELECTOR_LENGTH)),
  b: z.string().check(z.minLength(1), z.maxLength(MAX_SELECTOR_LENGTH)),
  metric: z._default(z.string(), 'all').check(z.refine(isMetricSpec, { message: `expected ${METRIC_SPEC_HELP}` })),
  /** json (the Comparison), or its table as csv or md (shared/comparison/table.ts). */
  format: z._default(z.enum(ANSWER_FORMATS), 'json'),
});

/** POST /reports: the comparison to freeze, as GET /compare takes it. */
export const CreateReportBody = z.strictObject({
  a: z.string().check(z.minLength(1), z.maxLength(MAX_SELECTOR_LENGTH)),
  b: z.string().check(z.minLength(1), z.maxLength(MAX_SELECTOR_LENGTH)),
  metric: z._default(z.string(), 'all').check(z.refine(isMetricSpec, { message: `expected ${METRIC_SPEC_HELP}` })),
});

/** GET /reports/{id}: the page (html, the default) or the JSON it embeds. */
export const ReportQuery = querySchema({
  format: z._default(z.enum(['html', 'json']), 'html'),
});

/** POST /reports' answer: the id, and the path that serves the report (GET /reports/{id}). */
export interface CreatedReport {
  id: string;
  path: string;
  createdAt: string;
  query: { a: string; b: string; metric: string };
}

export const UploadsQuery = querySchema({
  status: z.optional(z.enum(UPLOAD_STATUSES)),
  /** `true`: every version's record; `false` (the default): each key's current state. */
  history: z.optional(z.enum(['true', 'false'])),
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
    z.refine((k) => !k.split('/').some((segment) => segment === '.' || segment === '..'), {
      message: 'no . or .. path segments',
    }),
  ),
  /**
   * Bytes the client will send: at most the lab's limit, and signed as the PUT's
   * Content-Length, so S3 refuses a body of any other size.
   */
  size: z.number().check(z.int(), z.minimum(0)),
  device: z.optional(
    z.string().check(
      z.minLength(1),
      z.maxLength(MAX_LABEL_LENGTH),
      z.refine((d) => !FORBIDDEN_IN_LABELS.test(d), noForbidden),
    ),
  ),
  tags: z.optional(
    z.record(z.string().check(z.maxLength(MAX_TAG_LENGTH)), z.string().check(z.maxLength(MAX_TAG_LENGTH))),
  ),
});

export interface DeviceEntry {
  label: string;
  format: string;
  lastSeen: string;
}

/** The S3 object version a run was read from. */
export interface RunSource {
  bucket: string;
  key: string;
  version: string;
}

/** What a run says of itself, listed or read whole. */
export interface RunFacts {
  runId: string;
  format: Format;
  /** diskperf: the test name (-n); iostat: the host its banner names, or empty. */
  name: string;
  /** The machine, from the log's header (IRIX machine line, Linux banner, JSON nodename). */
  host?: string;
  /** The listing's order (newest first): the first sample's time, a diskperf run's start, else when it was ingested. */
  time: string;
  /**
   * The samples' own time range, ISO 8601: in UTC (`Z`) when the log gave a
   * zone or offset, else as printed with no zone. A diskperf run has `from`
   * alone (its start); neither when the log prints no times.
   */
  from?: string;
  to?: string;
  /** From the upload's `tags` metadata. */
  tags: Record<string, string>;
  /** The lines typed before the run (`tunefs -a 32 /opt`). */
  context: string[];
  source: RunSource;
}

/** One entry of GET /runs: a run, under the label it is listed by (shared/listings/runs.ts). */
export interface RunListing extends RunFacts {
  /** The label listed: a diskperf run's, an iostat upload's, or (a listing of disk labels) one disk's. */
  device: string;
  /** iostat: the reports (intervals) of every disk. */
  reports?: number;
  /** An iostat run listed whole, under its upload's label: how many disks it has (absent on one disk's entry). */
  disks?: number;
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

/** A run as GET /runs/{id} gives it: RunListing's facts and what the log said of it, none of the store's keys. */
interface RunInfoBase extends RunFacts {
  /** The device label of the run (diskperf) or of its upload (iostat; its disks are `<label>/<native>`). */
  label: string;
  /** Its place among the runs of its file, from 0. */
  index: number;
  /** Absent for fio, whose outputs do not say which OS they ran on. */
  platform?: Platform;
  /** The layout read: `irix-diskperf`, `solaris-xn`, `linux-sysstat-x-12.1.2` ... */
  dialect: string;
  startLine: number;
  endLine: number;
  warnings: ParseWarning[];
  ingestedAt: string;
}

export interface DiskperfRunInfo extends RunInfoBase {
  format: 'diskperf';
  meta: DiskperfMeta;
  columns: DiskperfMetric[];
  /** The result table, a row per request size. */
  rows: DiskperfRows;
}

export interface IostatRunInfo extends RunInfoBase {
  format: 'iostat';
  meta: IostatMeta;
  columns: IostatColumn[];
  reports: number;
  /**
   * How many disks (series) the run has; `series` holds the first MAX_SERIES_IN_DETAIL
   * (shared/listings/run-detail.ts).
   */
  seriesCount: number;
}

export interface FioRunInfo extends RunInfoBase {
  format: 'fio';
  meta: FioMeta;
  columns: FioMetric[];
  /** The output's table, a row per point (rw, bs, iodepth, numjobs). */
  points: FioRow[];
}

export type RunInfo = DiskperfRunInfo | IostatRunInfo | FioRunInfo;

/** One disk of an iostat run and its summaries. */
export interface SeriesInfo {
  /** Its label, `<label>/<native>`. */
  device: string;
  native: string;
  /** The mount point Solaris `-m` prints, when the run's META holds its series. */
  mount?: string;
  sampleCount: number;
  summary: Partial<Record<IostatMetric, MetricSummary>>;
}

export interface RunDetail {
  run: RunInfo;
  series: SeriesInfo[];
}

/**
 * GET /runs/{id}/samples: one series' samples of one metric, from report
 * `reports[0]` on, the columns side by side (index i is one sample). `times`
 * is null where the log printed no time, `values` null where the platform
 * does not print the metric; `sinceBoot` marks the report that counts since
 * boot (a run's first, when it has more than one). `next`, when present, asks
 * for the following page with the same series and metric.
 */
export interface RunSamples extends Omit<SeriesSamples, 'next'> {
  run: string;
  /** The series' native name, as the run's samples object names it. */
  series: string;
  metric: string;
  /** The metric's unit (shared/metrics.ts). */
  unit: string;
  /** The cursor of the following page. */
  next?: string;
}

export interface UploadListing {
  bucket: string;
  key: string;
  version: string;
  status: UploadStatus;
  runCount: number;
  runIds: string[];
  /** Short: the line (when about one), what is wrong or became of it, what to do; never the key. */
  message?: string;
  /** The line the message is about; absent or 0 when it is not about one. */
  line?: number;
  /** The whole text behind `message`, when there is more of it. */
  details?: string;
  /** `replaced`: the version that replaced this one. */
  replacedBy?: string;
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
