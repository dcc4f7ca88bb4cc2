/**
 * Which lab the CLI talks to, and how: target resolution from flags, environment
 * and stack outputs; SigV4 on requests to an AWS API, checked against an
 * independent computation of the signature from the request as sent.
 */
import { createHash, createHmac } from 'node:crypto';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.ts';
import { runCli } from '../../cli/program.ts';
import { Target, type StackOutputs } from '../../cli/target.ts';
import { captureOutput, startFakeApi, type FakeApi } from './fake-api.ts';

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const WHEN = new Date('2024-01-02T03:04:05Z');

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text).digest();

/** SigV4 for execute-api, written out from the specification: what API Gateway checks. */
function expectedSignature(
  url: string,
  method: string,
  headers: Record<string, string>,
  signedHeaders: string[],
  region: string,
  body = '',
): string {
  const u = new URL(url);
  const query = u.search
    .slice(1)
    .split('&')
    .filter(Boolean)
    .map((pair) => (pair.includes('=') ? pair : `${pair}=`))
    .sort()
    .join('&');
  const all: Record<string, string> = { ...headers, host: u.host };
  const canonicalHeaders = signedHeaders.map((h) => `${h}:${all[h]!.trim()}\n`).join('');
  const canonical = [method, u.pathname, query, canonicalHeaders, signedHeaders.join(';'), sha256(body)].join('\n');
  const date = headers['x-amz-date']!;
  const scope = `${date.slice(0, 8)}/${region}/execute-api/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, sha256(canonical)].join('\n');
  let key = hmac(`AWS4${CREDENTIALS.secretAccessKey}`, date.slice(0, 8));
  for (const part of [region, 'execute-api', 'aws4_request']) key = hmac(key, part);
  return createHmac('sha256', key).update(toSign).digest('hex');
}

describe('SigV4 for an AWS API', () => {
  it("signs a request to an https API: AWS4-HMAC-SHA256, execute-api scope in the URL's region, x-amz-date", async () => {
    const target = await new Target(
      { api: 'https://abc123.execute-api.eu-west-1.amazonaws.com/' },
      { env: { AWS_REGION: 'us-west-2' } },
    ).api();
    expect(target).toEqual({
      url: 'https://abc123.execute-api.eu-west-1.amazonaws.com',
      sign: true,
      region: 'eu-west-1',
      source: '--api',
    });
    const client = new ApiClient(target, { credentials: CREDENTIALS, signingDate: WHEN });
    const request = await client.build('GET', '/compare', {
      a: 'device=scsi*',
      b: 'context~tunefs -a 16',
      metric: 'all',
    });
    expect(request.url).toBe(
      'https://abc123.execute-api.eu-west-1.amazonaws.com/compare?a=device%3Dscsi%2A&b=context~tunefs%20-a%2016&metric=all',
    );
    expect(request.headers['x-amz-date']).toBe('20240102T030405Z');
    const auth = request.headers['authorization']!;
    expect(auth).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20240102\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/,
    );
    const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)![1]!.split(';');
    expect(signedHeaders).toContain('host');
    expect(signedHeaders).toContain('x-amz-date');
    expect(auth.slice(-64)).toBe(expectedSignature(request.url, 'GET', request.headers, signedHeaders, 'eu-west-1'));
  });

  it('carries the session token of temporary credentials', async () => {
    const client = new ApiClient(
      { url: 'https://api.example.org/lab', sign: true, region: 'ap-southeast-2', source: '--api' },
      { credentials: { ...CREDENTIALS, sessionToken: 'TOKEN' }, signingDate: WHEN },
    );
    const request = await client.build('GET', '/devices');
    expect(request.url).toBe('https://api.example.org/lab/devices');
    expect(request.headers['x-amz-security-token']).toBe('TOKEN');
    expect(request.headers['authorization']).toContain('/ap-southeast-2/execute-api/aws4_request');
  });

  it('a local http API gets plain requests', async () => {
    const target = await new Target({ api: 'http://127.0.0.1:8787' }, { env: {} }).api();
    expect(target.sign).toBe(false);
    const request = await new ApiClient(target).build('GET', '/devices');
    expect(request.headers).toEqual({ accept: 'application/json' });
  });
});

describe('--stack', () => {
  let api: FakeApi;
  const describeStack = async (name: string): Promise<StackOutputs> => {
    if (name !== 'Benchdrop-mylab') throw new Error(`Stack with id ${name} does not exist`);
    return {
      outputs: { ApiUrl: `${api.url}/`, BucketName: 'benchdrop-mylab-bucket-1x2y3z', TableName: 't' },
      region: 'eu-central-1',
    };
  };

  beforeAll(async () => {
    api = await startFakeApi({ 'GET /devices': { body: { devices: [] } } });
  });
  afterAll(() => api?.close());

  it('reads ApiUrl and BucketName from the stack outputs, and signs requests to its API', async () => {
    const output = captureOutput();
    const code = await runCli(['devices', '--stack', 'Benchdrop-mylab'], output.io, {
      env: {},
      describeStack,
      credentials: CREDENTIALS,
    });
    expect(output.err).toBe('');
    expect(code).toBe(0);
    expect(output.out).toContain('no devices yet');
    const headers = api.requests.at(-1)!.headers;
    expect(headers['authorization']).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-central-1\/execute-api\/aws4_request, /,
    );
    expect(headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    const bucket = await new Target(
      { stack: 'Benchdrop-mylab' },
      { env: { BENCHDROP_S3_ENDPOINT: 'http://127.0.0.1:1' }, describeStack },
    ).bucket();
    expect(bucket).toEqual({
      bucket: 'benchdrop-mylab-bucket-1x2y3z',
      region: 'eu-central-1',
      source: 'stack Benchdrop-mylab',
    });
  });

  it('a stack that cannot be read is an error naming it, with the naming hint', async () => {
    const output = captureOutput();
    const code = await runCli(['runs', '--stack', 'mylab'], output.io, { env: {}, describeStack });
    expect(code).toBe(1);
    expect(output.err).toBe(
      'error: could not read stack mylab: Stack with id mylab does not exist (lab stacks are named Benchdrop-<lab>, e.g. Benchdrop-mylab)',
    );
  });

  it('a stack without the output says so', async () => {
    const target = new Target(
      { stack: 'Benchdrop-old' },
      { env: {}, describeStack: async () => ({ outputs: { BucketName: 'b' }, region: 'eu-west-1' }) },
    );
    await expect(target.api()).rejects.toThrow('stack Benchdrop-old has no ApiUrl output (outputs: BucketName)');
  });
});

describe('the bucket', () => {
  // The test file's own folder holds no .benchdrop: only the environment given counts.
  const cwd = dirname(fileURLToPath(import.meta.url));

  it("with an endpoint: s3rver's credentials, unless AWS keys are set", async () => {
    const local = await new Target(
      {},
      { env: { BENCHDROP_BUCKET: 'drop', BENCHDROP_S3_ENDPOINT: 'http://127.0.0.1:4569' }, cwd },
    ).bucket();
    expect(local).toEqual({
      bucket: 'drop',
      endpoint: 'http://127.0.0.1:4569',
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      source: 'BENCHDROP_BUCKET',
    });
    const keyed = await new Target(
      { bucket: 'drop', endpoint: 'http://minio:9000' },
      { env: { AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret' } },
    ).bucket();
    expect(keyed.credentials).toEqual({ accessKeyId: 'id', secretAccessKey: 'secret' });
  });

  it('without an endpoint: AWS, with the default credential chain', async () => {
    const aws = await new Target({ bucket: 'drop', region: 'eu-west-1' }, { env: {} }).bucket();
    expect(aws).toEqual({ bucket: 'drop', region: 'eu-west-1', source: '--bucket' });
  });
});
