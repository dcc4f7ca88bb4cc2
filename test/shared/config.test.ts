/**
 * The functions' environment reader (shared/config.ts): unset variables take
 * their defaults, anything that is not what the function needs is refused with
 * a message naming the variable and the value, rather than read as NaN.
 */
import { describe, expect, it } from 'vitest';
import { EnvError, ENV, envInteger, envString, LAB_DEFAULTS, MB, uploadLimitsFromEnv } from '../../shared/config.ts';
import { ingestDeps } from '../../functions/ingest/handler.ts';
import { apiDeps } from '../../functions/api/handler.ts';
import { storeFromEnv } from '../../shared/aws.ts';

describe('envInteger', () => {
  it('reads a whole number, and takes the fallback when the variable is unset', () => {
    expect(envInteger({ N: '42' }, 'N', 7)).toBe(42);
    expect(envInteger({ N: ' 42 ' }, 'N', 7)).toBe(42);
    expect(envInteger({}, 'N', 7)).toBe(7);
  });

  it.each(['abc', '-1', '', ' ', '1.5', '1e3', '0x10', 'NaN', 'Infinity', '99999999999999999999'])(
    'refuses %j with a message naming the variable and the value',
    (raw) => {
      const read = () => envInteger({ SOME_LIMIT: raw }, 'SOME_LIMIT', 7);
      expect(read).toThrow(EnvError);
      expect(read).toThrow(`SOME_LIMIT=${JSON.stringify(raw)} is invalid`);
    },
  );

  it('refuses a number out of range', () => {
    expect(() => envInteger({ N: '0' }, 'N', 7, { min: 1 })).toThrow(
      'N="0" is invalid: expected a whole number from 1 to',
    );
    expect(() => envInteger({ N: '11' }, 'N', 7, { max: 10 })).toThrow('from 0 to 10');
    expect(envInteger({ N: '10' }, 'N', 7, { min: 1, max: 10 })).toBe(10);
  });

  it('names the variable on the error', () => {
    try {
      envInteger({ N: 'abc' }, 'N', 7);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(EnvError);
      expect((error as EnvError).variable).toBe('N');
    }
  });
});

describe('envString', () => {
  it('reads a variable that is set, and refuses one unset or blank', () => {
    expect(envString({ T: 'table' }, 'T')).toBe('table');
    expect(() => envString({}, 'T')).toThrow('T is not set');
    expect(() => envString({ T: '' }, 'T')).toThrow('T is not set');
    expect(() => envString({ T: '  ' }, 'T')).toThrow('T is not set');
  });
});

describe('uploadLimitsFromEnv', () => {
  it('takes the lab defaults when unset', () => {
    expect(uploadLimitsFromEnv({})).toEqual({
      maxUploadBytes: LAB_DEFAULTS.maxUploadMB * MB,
      maxSeriesPerFile: LAB_DEFAULTS.maxSeriesPerFile,
    });
  });

  it('reads what the stack sets', () => {
    const env = { [ENV.maxUploadBytes]: '2000000', [ENV.maxSeriesPerFile]: '5' };
    expect(uploadLimitsFromEnv(env)).toEqual({ maxUploadBytes: 2_000_000, maxSeriesPerFile: 5 });
  });

  it.each(['abc', '-1', '', '0'])(
    'refuses %j for either limit: a limit read as NaN or 0 would switch itself off',
    (raw) => {
      expect(() => uploadLimitsFromEnv({ [ENV.maxUploadBytes]: raw })).toThrow(ENV.maxUploadBytes);
      expect(() => uploadLimitsFromEnv({ [ENV.maxSeriesPerFile]: raw })).toThrow(ENV.maxSeriesPerFile);
    },
  );
});

describe('the functions read their environment with it', () => {
  const store = {
    [ENV.tableName]: 'table',
    [ENV.bucketName]: 'bucket',
    [ENV.resultsBucket]: 'results',
    [ENV.dynamodbEndpoint]: 'http://127.0.0.1:1',
    [ENV.s3Endpoint]: 'http://127.0.0.1:1',
  };

  it('ingest refuses a junk size limit instead of switching it off', () => {
    expect(() => ingestDeps({ ...store, [ENV.maxUploadBytes]: 'abc' })).toThrow(
      `${ENV.maxUploadBytes}="abc" is invalid`,
    );
    expect(() => ingestDeps({ ...store, [ENV.maxSeriesPerFile]: '-1' })).toThrow(
      `${ENV.maxSeriesPerFile}="-1" is invalid`,
    );
    expect(ingestDeps({ ...store, [ENV.maxUploadBytes]: '1000' }).maxUploadBytes).toBe(1000);
  });

  it('the API refuses a junk size limit', () => {
    expect(() => apiDeps({ ...store, [ENV.maxUploadBytes]: 'abc' })).toThrow(`${ENV.maxUploadBytes}="abc" is invalid`);
    expect(apiDeps({ ...store }).maxUploadBytes).toBe(LAB_DEFAULTS.maxUploadMB * MB);
  });

  it('the table-only functions (sweeper, dead letters) need the table name', () => {
    expect(() => storeFromEnv({})).toThrow(`${ENV.tableName} is not set`);
    expect(storeFromEnv(store).tableName).toBe('table');
  });
});
