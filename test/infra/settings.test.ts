/**
 * Lab settings from CDK context: defaults, both spellings of values (strings from
 * `-c key=value`, JSON values from cdk.json), and an error naming the key for
 * anything else, including through the real `infra/app.ts` entry point.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LAB_DEFAULTS } from '../../shared/config.ts';
import { buildLab } from '../../infra/lab.ts';
import {
  API_DEFAULTS,
  CONTEXT_KEYS,
  LabSettingsError,
  labSettings,
  parseLabSettings,
  stackNameOf,
} from '../../infra/settings.ts';
import { buildTestLab, testApp } from './synth.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function errorOf(values: Record<string, unknown>): LabSettingsError {
  try {
    labSettings(values);
  } catch (error) {
    expect(error).toBeInstanceOf(LabSettingsError);
    return error as LabSettingsError;
  }
  throw new Error(`no error for ${JSON.stringify(values)}`);
}

describe('lab settings', () => {
  it('uses LAB_DEFAULTS and API_DEFAULTS for everything but the lab name', () => {
    expect(labSettings({ lab: 'alpha' })).toEqual({ lab: 'alpha', ...LAB_DEFAULTS, ...API_DEFAULTS });
    expect(API_DEFAULTS).toEqual({ apiRateLimit: 50, apiBurstLimit: 100 });
    expect(labSettings({ lab: 'alpha' }).alarmEmail).toBeUndefined();
    expect(stackNameOf('alpha')).toBe('Benchdrop-alpha');
  });

  it('reads command-line strings and cdk.json values alike', () => {
    const expected = {
      lab: 'lab-2',
      maxUploadMB: 200,
      maxSeriesPerFile: 5000,
      noncurrentVersionDays: 30,
      alarmEmail: 'ops@example.org',
      retainData: false,
      deletionProtection: false,
      apiRateLimit: 20,
      apiBurstLimit: 40,
    };
    expect(
      labSettings({
        lab: 'lab-2',
        maxUploadMB: '200',
        maxSeriesPerFile: '5000',
        noncurrentVersionDays: '30',
        alarmEmail: 'ops@example.org',
        retainData: 'false',
        deletionProtection: 'FALSE',
        apiRateLimit: '20',
        apiBurstLimit: ' 40 ',
      }),
    ).toEqual(expected);
    expect(
      labSettings({
        lab: 'lab-2',
        maxUploadMB: 200,
        maxSeriesPerFile: 5000,
        noncurrentVersionDays: 30,
        alarmEmail: ' ops@example.org ',
        retainData: false,
        deletionProtection: false,
        apiRateLimit: 20,
        apiBurstLimit: 40,
      }),
    ).toEqual(expected);
    // `-c alarmEmail=` (empty) means unset.
    expect(labSettings({ lab: 'x', alarmEmail: '', maxUploadMB: '', apiRateLimit: '' })).toEqual({
      lab: 'x',
      ...LAB_DEFAULTS,
      ...API_DEFAULTS,
    });
    expect(labSettings({ lab: 'x', deletionProtection: 'false' }).retainData).toBe(true);
  });

  it('refuses a missing lab name with a hint how to pass it', () => {
    for (const values of [{}, { lab: '' }, { lab: '   ' }]) {
      const error = errorOf(values);
      expect(error.key).toBe('lab');
      expect(error.message).toMatch(/missing lab name: pass -c lab=NAME/);
    }
  });

  it.each(['Alpha', '1lab', 'a_b', 'lab.x', 'a b', '-a', 'x'.repeat(32), 'ünï'])('refuses the lab name %j', (lab) => {
    const error = errorOf({ lab });
    expect(error.key).toBe('lab');
    expect(error.message).toContain(`lab='${lab}' is invalid`);
  });

  it('accepts lab names up to 31 characters of lowercase letters, digits and dashes', () => {
    for (const lab of ['a', 'alpha', 'lab-2', 'x'.repeat(31), 'team-a-disk-lab'])
      expect(labSettings({ lab }).lab).toBe(lab);
    expect(errorOf({ lab: 42 }).message).toContain('lab=42 is invalid');
  });

  it.each([
    ['maxUploadMB', 'abc'],
    ['maxUploadMB', '0'],
    ['maxUploadMB', '-5'],
    ['maxUploadMB', '1.5'],
    ['maxUploadMB', '1e3'],
    ['maxUploadMB', 1.5],
    ['maxUploadMB', '5000001'],
    ['maxSeriesPerFile', '0'],
    ['maxSeriesPerFile', '-1'],
    ['maxSeriesPerFile', '2.5'],
    ['maxSeriesPerFile', 'many'],
    ['maxSeriesPerFile', 200_001],
    ['maxSeriesPerFile', false],
    ['noncurrentVersionDays', '0'],
    ['noncurrentVersionDays', 'ninety'],
    ['noncurrentVersionDays', true],
    ['retainData', 'yes'],
    ['retainData', 1],
    ['deletionProtection', 'maybe'],
    ['alarmEmail', 'not-an-email'],
    ['alarmEmail', 'a@b'],
    ['alarmEmail', 'two@example.org,three@example.org'],
    ['apiRateLimit', '0'],
    ['apiRateLimit', '2.5'],
    ['apiRateLimit', 'fast'],
    ['apiRateLimit', '10001'],
    ['apiBurstLimit', '0'],
    ['apiBurstLimit', -1],
    ['apiBurstLimit', '5001'],
  ])('names the key of a bad value: %s=%j', (key, value) => {
    const error = errorOf({ lab: 'alpha', [key]: value });
    expect(error.key).toBe(key);
    expect(error.message).toMatch(new RegExp(`^context value ${key}=.* is invalid: expected `));
  });

  it('accepts API throttling up to the account-wide regional defaults (10,000 per second, burst 5,000)', () => {
    expect(labSettings({ lab: 'alpha', apiRateLimit: '1', apiBurstLimit: '1' })).toMatchObject({
      apiRateLimit: 1,
      apiBurstLimit: 1,
    });
    expect(labSettings({ lab: 'alpha', apiRateLimit: 10_000, apiBurstLimit: 5_000 })).toMatchObject({
      apiRateLimit: 10_000,
      apiBurstLimit: 5_000,
    });
    expect(errorOf({ lab: 'alpha', apiRateLimit: '0' }).message).toBe(
      "context value apiRateLimit='0' is invalid: expected a whole number of requests per second from 1 to 10000 (default 50)",
    );
  });

  it('accepts maxSeriesPerFile from 1 to ten times its default of 20,000', () => {
    expect(LAB_DEFAULTS.maxSeriesPerFile).toBe(20_000);
    expect(labSettings({ lab: 'alpha', maxSeriesPerFile: '1' }).maxSeriesPerFile).toBe(1);
    expect(labSettings({ lab: 'alpha', maxSeriesPerFile: 200_000 }).maxSeriesPerFile).toBe(200_000);
    expect(errorOf({ lab: 'alpha', maxSeriesPerFile: '200001' }).message).toBe(
      "context value maxSeriesPerFile='200001' is invalid: expected a whole number of series from 1 to 200000 (default 20000)",
    );
  });

  it('reads exactly the context keys of CONTEXT_KEYS, one for each setting', () => {
    const asked: string[] = [];
    const settings = parseLabSettings((key) => {
      asked.push(key);
      return key === 'lab' ? 'alpha' : key === 'alarmEmail' ? 'ops@example.org' : undefined;
    });
    expect([...new Set(asked)].sort()).toEqual([...CONTEXT_KEYS].sort());
    expect(Object.keys(settings).sort()).toEqual([...CONTEXT_KEYS].sort());
  });

  it('refuses retainData=false while the table keeps its deletion protection', () => {
    const implicit = errorOf({ lab: 'alpha', retainData: 'false' });
    expect(implicit.key).toBe('retainData');
    expect(implicit.message).toContain('-c deletionProtection=false');
    expect(errorOf({ lab: 'alpha', retainData: false, deletionProtection: true }).key).toBe('deletionProtection');
  });

  it('reads the settings from the app context when none are given', () => {
    const { app, dispose } = testApp({ lab: 'delta', maxUploadMB: '64' });
    try {
      const stack = buildTestLab(app);
      expect(stack.stackName).toBe('Benchdrop-delta');
      expect(stack.settings).toEqual({ ...LAB_DEFAULTS, ...API_DEFAULTS, lab: 'delta', maxUploadMB: 64 });
    } finally {
      dispose();
    }
    const bad = testApp({ lab: 'Delta' });
    try {
      expect(() => buildLab(bad.app)).toThrow(LabSettingsError);
    } finally {
      bad.dispose();
    }
  });
});

describe('infra/app.ts', () => {
  /** Runs the app as the CDK CLI does (context in CDK_CONTEXT_JSON), output in a temp dir. */
  function runApp(context: Record<string, unknown>) {
    const outdir = mkdtempSync(join(tmpdir(), 'benchdrop-cdk-'));
    try {
      const result = spawnSync(process.execPath, ['--import', 'tsx', 'infra/app.ts'], {
        cwd: ROOT,
        env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify(context), CDK_OUTDIR: outdir },
        encoding: 'utf8',
        timeout: 60_000,
      });
      return { status: result.status, stderr: result.stderr, files: readdirSync(outdir) };
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }

  it('exits 1 with a one-line message, no stack trace, for a missing lab or a bad value', () => {
    const missing = runApp({});
    expect(missing.status).toBe(1);
    expect(missing.stderr.trim()).toMatch(/^benchdrop: missing lab name: pass -c lab=NAME/);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    expect(missing.files).toEqual([]);

    const bad = runApp({ lab: 'alpha', noncurrentVersionDays: 'soon' });
    expect(bad.status).toBe(1);
    expect(bad.stderr.trim()).toMatch(/^benchdrop: context value noncurrentVersionDays='soon' is invalid/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});
