/**
 * Frozen reports: POST /reports keeps a comparison as it was when it was
 * shared, GET /reports/{id} serves it back byte for byte, whatever was
 * uploaded since. Two objects in the lab's results bucket (never the drop
 * bucket, whose events would ingest them):
 *
 *   reports/<id>.json   { id, createdAt, query: { a, b, metric }, comparison }
 *   reports/<id>.html   the report page with that JSON embedded: self-contained, it fetches nothing
 *
 * The JSON is written first and the HTML last, so a report that can be served
 * is whole. Ids are 12 random base58 characters (70 bits): short enough to
 * type, too many to guess.
 */
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import type { Comparison } from './comparison/index.ts';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const ID_LENGTH = 12;
export const REPORT_ID_RULE = `${ID_LENGTH} characters of ${BASE58}`;
const REPORT_ID = new RegExp(`^[${BASE58}]{${ID_LENGTH}}$`);

export type ReportFormat = 'html' | 'json';

export const isReportId = (id: string): boolean => REPORT_ID.test(id);

/** The key prefix of every report object in the results bucket. */
export const REPORTS_PREFIX = 'reports/';

/** Where a report's objects live in the results bucket. */
export const reportKey = (id: string, format: ReportFormat) => `${REPORTS_PREFIX}${id}.${format}`;

const CONTENT_TYPES: Record<ReportFormat, string> = {
  html: 'text/html; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/** A fresh id: rejection sampling keeps every character equally likely. */
export function newReportId(): string {
  let id = '';
  while (id.length < ID_LENGTH) {
    for (const byte of randomBytes(ID_LENGTH * 2)) {
      if (byte < 232 && id.length < ID_LENGTH) id += BASE58[byte % 58];
    }
  }
  return id;
}

export interface ReportDeps {
  s3: S3Client;
  /** The lab's results bucket. */
  resultsBucket: string;
  /** The clock, epoch ms (tests move it). */
  now?: () => number;
}

/** What a frozen report's JSON holds. */
export interface FrozenReport {
  id: string;
  createdAt: string;
  query: { a: string; b: string; metric: string };
  comparison: Comparison;
}

/** Turns a frozen report into its self-contained page (report/ renders it; the API is given one). */
export type ReportRenderer = (report: FrozenReport) => Promise<string> | string;

/** Stores the comparison as a report: its JSON, then its page; answers the report without the comparison. */
export async function freezeReport(
  deps: ReportDeps,
  query: FrozenReport['query'],
  comparison: Comparison,
  render: ReportRenderer,
): Promise<Omit<FrozenReport, 'comparison'>> {
  const id = newReportId();
  const createdAt = new Date((deps.now ?? Date.now)()).toISOString();
  const report: FrozenReport = { id, createdAt, query, comparison };
  const html = await render(report);
  await putReport(deps, id, 'json', JSON.stringify(report));
  await putReport(deps, id, 'html', html);
  return { id, createdAt, query };
}

async function putReport(deps: ReportDeps, id: string, format: ReportFormat, body: string): Promise<void> {
  await deps.s3.send(
    new PutObjectCommand({
      Bucket: deps.resultsBucket,
      Key: reportKey(id, format),
      Body: body,
      ContentType: CONTENT_TYPES[format],
    }),
  );
}

/** A stored report as served, or undefined when there is none (a page only once its JSON is stored). */
export async function readReport(
  deps: ReportDeps,
  id: string,
  format: ReportFormat,
): Promise<{ body: string; contentType: string } | undefined> {
  try {
    const answer = await deps.s3.send(new GetObjectCommand({ Bucket: deps.resultsBucket, Key: reportKey(id, format) }));
    const body = (await answer.Body?.transformToString('utf-8')) ?? '';
    return { body, contentType: CONTENT_TYPES[format] };
  } catch (error) {
    if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
    throw error;
  }
}
