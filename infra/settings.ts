/**
 * Per-lab settings from CDK context (`-c lab=NAME -c maxUploadMB=200 ...`), checked
 * before any construct exists so that a typo fails the synth with a message naming
 * the key, instead of a CloudFormation error at deploy time.
 *
 * Values come either from the command line (always strings) or from cdk.json /
 * cdk.context.json (JSON numbers and booleans): both are accepted.
 */
import { LAB_DEFAULTS, LAB_NAME, wholeNumber, type LabSettings } from '../shared/config.ts';

/**
 * Settings only the AWS stack has (the local lab serves its API on loopback without
 * API Gateway): the HTTP API's default stage throttling, for every route together.
 */
export interface ApiSettings {
  /** Steady-state requests per second the API accepts before it answers 429. */
  apiRateLimit: number;
  /** Requests the API accepts at once above the steady rate (token bucket size). */
  apiBurstLimit: number;
}

/** Everything one lab's stack is built from. */
export interface StackSettings extends LabSettings, ApiSettings {}

/**
 * Modest on purpose: the API serves a lab's CLI and report page, not the public,
 * and every lab of an account shares the regional API Gateway quota.
 */
export const API_DEFAULTS: ApiSettings = {
  apiRateLimit: 50,
  apiBurstLimit: 100,
};

/** A bad or missing context value; the message names the key and what is expected. */
export class LabSettingsError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
    this.name = 'LabSettingsError';
  }
}

/** Reads one context value (`app.node.tryGetContext` in the app; a plain object in tests). */
export type ContextReader = (key: string) => unknown;

/** The context keys this app reads, besides CDK's own. */
export const CONTEXT_KEYS = [
  'lab',
  'maxUploadMB',
  'maxSeriesPerFile',
  'noncurrentVersionDays',
  'alarmEmail',
  'retainData',
  'deletionProtection',
  'apiRateLimit',
  'apiBurstLimit',
] as const;

/** Largest accepted maxUploadMB: S3's 5 TB object limit. */
const MAX_UPLOAD_MB_LIMIT = 5_000_000;
/**
 * Largest accepted maxSeriesPerFile: ten times the default. The limit is what keeps
 * one file's series within the ingest function's memory, which the stack fixes
 * (INGEST.memoryMB) rather than the lab; a cap far above the default would trade an
 * upload failed with a reason for one killed out of memory, so it is a bound on the
 * knob, not a measured capacity.
 */
const MAX_SERIES_PER_FILE_LIMIT = 10 * LAB_DEFAULTS.maxSeriesPerFile;
/** Largest accepted noncurrentVersionDays: a century is plenty and keeps the number sane. */
const NONCURRENT_DAYS_LIMIT = 36_500;
/**
 * Largest accepted apiRateLimit and apiBurstLimit: API Gateway's default account-wide
 * quota per region (10,000 requests per second, burst 5,000). A stage limit above
 * the account's own cannot take effect.
 */
const API_RATE_LIMIT = 10_000;
const API_BURST_LIMIT = 5_000;
/** Deliberately loose: one @, no spaces, a dot in the domain. SNS does the real check. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function show(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value));
}

/** A value passed as `-c key=` (empty) counts as unset. */
function isUnset(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/** A whole number of `unit` from `min` to `max`. */
interface IntegerRange {
  min: number;
  max: number;
  unit: string;
}

function integerSetting(read: ContextReader, key: string, fallback: number, range: IntegerRange): number {
  const { min, max, unit } = range;
  const raw = read(key);
  if (isUnset(raw)) return fallback;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? wholeNumber(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new LabSettingsError(
      key,
      `context value ${key}=${show(raw)} is invalid: ` +
        `expected a whole number of ${unit} from ${min} to ${max} (default ${fallback})`,
    );
  }
  return value;
}

function booleanSetting(read: ContextReader, key: string, fallback: boolean): { value: boolean; explicit: boolean } {
  const raw = read(key);
  if (isUnset(raw)) return { value: fallback, explicit: false };
  if (raw === true || raw === false) return { value: raw, explicit: true };
  if (typeof raw === 'string' && /^(true|false)$/i.test(raw.trim()))
    return { value: raw.trim().toLowerCase() === 'true', explicit: true };
  throw new LabSettingsError(
    key,
    `context value ${key}=${show(raw)} is invalid: expected true or false (default ${fallback})`,
  );
}

/** The lab name alone: stack name and tag value. */
export function parseLabName(raw: unknown): string {
  if (isUnset(raw)) {
    throw new LabSettingsError(
      'lab',
      'missing lab name: pass -c lab=NAME (lowercase letters, digits and dashes, starting with a letter, ' +
        'at most 31 characters), e.g. npx cdk synth -c lab=alpha',
    );
  }
  if (typeof raw !== 'string' || !LAB_NAME.test(raw)) {
    throw new LabSettingsError(
      'lab',
      `context value lab=${show(raw)} is invalid: a lab name is 1 to 31 lowercase letters, digits and dashes, ` +
        `starting with a letter (pattern ${LAB_NAME.source})`,
    );
  }
  return raw;
}

/** The range of each whole-number setting. */
const UPLOAD_MB: IntegerRange = { min: 1, max: MAX_UPLOAD_MB_LIMIT, unit: 'MB' };
const SERIES_PER_FILE: IntegerRange = { min: 1, max: MAX_SERIES_PER_FILE_LIMIT, unit: 'series' };
const DAYS: IntegerRange = { min: 1, max: NONCURRENT_DAYS_LIMIT, unit: 'days' };
const RATE: IntegerRange = { min: 1, max: API_RATE_LIMIT, unit: 'requests per second' };
const BURST: IntegerRange = { min: 1, max: API_BURST_LIMIT, unit: 'requests' };

/** All per-lab settings, validated, with LAB_DEFAULTS and API_DEFAULTS for whatever is not given. */
export function parseLabSettings(read: ContextReader): StackSettings {
  const lab = parseLabName(read('lab'));
  const defaults = LAB_DEFAULTS;
  const maxUploadMB = integerSetting(read, 'maxUploadMB', defaults.maxUploadMB, UPLOAD_MB);
  const maxSeriesPerFile = integerSetting(read, 'maxSeriesPerFile', defaults.maxSeriesPerFile, SERIES_PER_FILE);
  const noncurrentVersionDays = integerSetting(read, 'noncurrentVersionDays', defaults.noncurrentVersionDays, DAYS);
  const alarmEmail = alarmEmailSetting(read);
  const { retainData, deletionProtection } = dataSettings(read);
  // At least 1 (0 would shut the API); both count the requests of all routes together.
  const apiRateLimit = integerSetting(read, 'apiRateLimit', API_DEFAULTS.apiRateLimit, RATE);
  const apiBurstLimit = integerSetting(read, 'apiBurstLimit', API_DEFAULTS.apiBurstLimit, BURST);
  return {
    lab,
    maxUploadMB,
    maxSeriesPerFile,
    noncurrentVersionDays,
    ...(alarmEmail ? { alarmEmail } : {}),
    retainData,
    deletionProtection,
    apiRateLimit,
    apiBurstLimit,
  };
}

function alarmEmailSetting(read: ContextReader): string | undefined {
  const raw = read('alarmEmail');
  if (isUnset(raw)) return undefined;
  if (typeof raw !== 'string' || !EMAIL.test(raw.trim())) {
    throw new LabSettingsError(
      'alarmEmail',
      `context value alarmEmail=${show(raw)} is invalid: expected one e-mail address such as ops@example.org`,
    );
  }
  return raw.trim();
}

/** retainData and deletionProtection, which must agree. */
function dataSettings(read: ContextReader): { retainData: boolean; deletionProtection: boolean } {
  const retainData = booleanSetting(read, 'retainData', LAB_DEFAULTS.retainData).value;
  const deletionProtection = booleanSetting(read, 'deletionProtection', LAB_DEFAULTS.deletionProtection);
  if (!retainData && deletionProtection.value) {
    // The table would be deleted with the stack, but its deletion protection refuses:
    // the stack deletion would fail half-way. Ask for both settings together.
    throw new LabSettingsError(
      deletionProtection.explicit ? 'deletionProtection' : 'retainData',
      deletionProtection.explicit
        ? 'context values retainData=false and deletionProtection=true contradict each other: ' +
            'the table is deleted with the stack but protected from deletion; drop one of them'
        : 'context value retainData=false deletes the table with the stack, but deletionProtection is on by default: ' +
            'pass -c deletionProtection=false as well',
    );
  }
  return { retainData, deletionProtection: deletionProtection.value };
}

/** Settings from a plain object, as tests and scripts write them. */
export function labSettings(values: Record<string, unknown>): StackSettings {
  return parseLabSettings((key) => values[key]);
}

/** The stack name of a lab. */
export function stackNameOf(lab: string): string {
  return `Benchdrop-${lab}`;
}
