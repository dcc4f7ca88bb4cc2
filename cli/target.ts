/**
 * Which lab a command talks to (README, "Uploading logs").
 *
 * The API:    --api URL, else BENCHDROP_API; or --stack NAME (its ApiUrl output).
 * The bucket: --bucket NAME [--endpoint URL], else BENCHDROP_BUCKET and
 *             BENCHDROP_S3_ENDPOINT; or --stack NAME (its BucketName output).
 *
 * An explicit --api or --bucket wins over the stack's output; the environment is
 * only read when neither a flag nor --stack names the target. With --endpoint (a
 * local lab's s3rver) the S3 credentials are S3RVER/S3RVER unless
 * AWS_ACCESS_KEY_ID is set. Requests to an AWS API (https, or found through
 * --stack) are signed with SigV4 for execute-api; a local http API gets plain
 * requests.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { ENV } from '../shared/config.ts';
import { CliError } from './io.ts';

export const API_ENV = 'BENCHDROP_API';
export const BUCKET_ENV = ENV.bucketName;
export const S3_ENDPOINT_ENV = ENV.s3Endpoint;

/** The flags every lab command accepts. */
export interface TargetFlags {
  api?: string;
  stack?: string;
  bucket?: string;
  endpoint?: string;
  region?: string;
}

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export type CredentialSource = Credentials | (() => Promise<Credentials>);

export interface StackOutputs {
  outputs: Record<string, string>;
  region: string;
}

/** What target resolution may be given instead of the real world (tests, embedding). */
export interface TargetDeps {
  env?: NodeJS.ProcessEnv;
  /** DescribeStacks, by default through @aws-sdk/client-cloudformation. */
  describeStack?: (name: string, region: string | undefined) => Promise<StackOutputs>;
}

export interface ApiTarget {
  /** Base URL, without a trailing slash. */
  url: string;
  /** Sign requests with SigV4 (an AWS HTTP API with IAM auth). */
  sign: boolean;
  region: string;
  /** Where the URL came from, for messages: `--api`, `BENCHDROP_API`, `stack NAME`. */
  source: string;
}

export interface BucketTarget {
  bucket: string;
  endpoint?: string;
  region?: string;
  credentials?: Credentials;
  source: string;
}

export const TARGET_HELP = 'set the lab with --api URL (or BENCHDROP_API), or --stack NAME (e.g. Benchdrop-mylab)';
export const BUCKET_HELP = 'set the bucket with --bucket NAME [--endpoint URL] (or BENCHDROP_BUCKET [and BENCHDROP_S3_ENDPOINT]), or --stack NAME';

const EXECUTE_API_HOST = /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/;
const DEFAULT_REGION = 'us-east-1';

async function describeStackWithSdk(name: string, region: string | undefined): Promise<StackOutputs> {
  const client = new CloudFormationClient(region ? { region } : {});
  try {
    const response = await client.send(new DescribeStacksCommand({ StackName: name }));
    const stack = response.Stacks?.[0];
    if (!stack) throw new CliError(`stack ${name} was not found`);
    const outputs: Record<string, string> = {};
    for (const o of stack.Outputs ?? []) if (o.OutputKey && o.OutputValue !== undefined) outputs[o.OutputKey] = o.OutputValue;
    return { outputs, region: await client.config.region() };
  } finally {
    client.destroy();
  }
}

/** Resolves lazily: the stack is described at most once, and only when a command needs it. */
export class Target {
  private readonly env: NodeJS.ProcessEnv;
  private stackOutputs?: Promise<StackOutputs>;

  constructor(
    readonly flags: TargetFlags,
    private readonly deps: TargetDeps = {},
  ) {
    this.env = deps.env ?? process.env;
  }

  private regionFromEnv(): string | undefined {
    return this.flags.region ?? this.env['AWS_REGION'] ?? this.env['AWS_DEFAULT_REGION'];
  }

  private stack(name: string): Promise<StackOutputs> {
    this.stackOutputs ??= (this.deps.describeStack ?? describeStackWithSdk)(name, this.regionFromEnv()).catch((error: unknown) => {
      if (error instanceof CliError) throw error;
      const message = (error as Error).message || String(error);
      const hint = name.startsWith('Benchdrop-') ? '' : ` (lab stacks are named Benchdrop-<lab>, e.g. Benchdrop-${name})`;
      throw new CliError(`could not read stack ${name}: ${message}${hint}`);
    });
    return this.stackOutputs;
  }

  private async stackOutput(name: string, output: string): Promise<{ value: string; region: string }> {
    const { outputs, region } = await this.stack(name);
    const value = outputs[output];
    if (!value) throw new CliError(`stack ${name} has no ${output} output (outputs: ${Object.keys(outputs).join(', ') || 'none'}); redeploy it with npx cdk deploy -c lab=...`);
    return { value, region };
  }

  async api(): Promise<ApiTarget> {
    const { api, stack } = this.flags;
    let raw: string;
    let source: string;
    let stackRegion: string | undefined;
    if (api) {
      raw = api;
      source = '--api';
    } else if (stack) {
      const out = await this.stackOutput(stack, 'ApiUrl');
      raw = out.value;
      stackRegion = out.region;
      source = `stack ${stack}`;
    } else if (this.env[API_ENV]) {
      raw = this.env[API_ENV]!;
      source = API_ENV;
    } else {
      throw new CliError(`no lab API to talk to: ${TARGET_HELP}`);
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new CliError(`${source}: "${raw}" is not a URL (expected e.g. http://127.0.0.1:8787 or https://abc123.execute-api.eu-west-1.amazonaws.com)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`${source}: "${raw}" is not an http(s) URL`);
    const region = EXECUTE_API_HOST.exec(url.hostname)?.[1] ?? this.regionFromEnv() ?? stackRegion ?? DEFAULT_REGION;
    return {
      url: `${url.origin}${url.pathname.replace(/\/+$/, '')}`,
      sign: url.protocol === 'https:' || (stack !== undefined && !api),
      region,
      source,
    };
  }

  async bucket(): Promise<BucketTarget> {
    const { bucket, stack, endpoint } = this.flags;
    let name: string;
    let source: string;
    let region = this.regionFromEnv();
    let s3Endpoint = endpoint;
    if (bucket) {
      name = bucket;
      source = '--bucket';
      s3Endpoint ??= stack ? undefined : this.env[S3_ENDPOINT_ENV];
    } else if (stack) {
      const out = await this.stackOutput(stack, 'BucketName');
      name = out.value;
      region ??= out.region;
      source = `stack ${stack}`;
    } else if (this.env[BUCKET_ENV]) {
      name = this.env[BUCKET_ENV]!;
      source = BUCKET_ENV;
      s3Endpoint ??= this.env[S3_ENDPOINT_ENV];
    } else {
      throw new CliError(`no bucket to upload to: ${BUCKET_HELP}`);
    }
    const target: BucketTarget = { bucket: name, source };
    if (region) target.region = region;
    if (s3Endpoint) {
      try {
        new URL(s3Endpoint);
      } catch {
        throw new CliError(`--endpoint: "${s3Endpoint}" is not a URL (expected e.g. http://127.0.0.1:4569)`);
      }
      target.endpoint = s3Endpoint;
      target.credentials = this.emulatorCredentials();
    }
    return target;
  }

  /** s3rver accepts only S3RVER/S3RVER; explicit AWS keys win (an endpoint that is not s3rver). */
  private emulatorCredentials(): Credentials {
    const id = this.env['AWS_ACCESS_KEY_ID'];
    const secret = this.env['AWS_SECRET_ACCESS_KEY'];
    if (id && secret) {
      const token = this.env['AWS_SESSION_TOKEN'];
      return { accessKeyId: id, secretAccessKey: secret, ...(token ? { sessionToken: token } : {}) };
    }
    return { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  }
}
