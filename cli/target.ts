/**
 * Which lab a command talks to (README, "Uploading logs"). Explicit flags win;
 * without them the running local lab is found through its lab.json, then the
 * environment:
 *
 * The API:    --api URL; or --stack NAME (its ApiUrl output); else the apiUrl
 *             of <--data DIR, default .benchdrop>/lab.json; else BENCHDROP_API.
 * The bucket: --bucket NAME [--endpoint URL]; or --stack NAME (its BucketName
 *             output); else lab.json's bucket and s3Endpoint; else
 *             BENCHDROP_BUCKET and BENCHDROP_S3_ENDPOINT.
 *
 * A target the command line did not name is announced in one line on stderr
 * (`using the lab at ... (from .benchdrop/lab.json)`), so a command never talks
 * to a lab the user did not expect without saying so. With an S3 endpoint (a
 * local lab's s3rver) the S3 credentials are S3RVER/S3RVER unless
 * AWS_ACCESS_KEY_ID is set. Requests to an AWS API (https, or found through
 * --stack) are signed with SigV4 for execute-api; a local http API gets plain
 * requests.
 */
import { DEFAULT_HOST, DEFAULT_PORTS } from '../infra/local/options.ts';
import { DEFAULT_REGION, ENV, LAB_CREDENTIALS } from '../shared/config.ts';
import { CliError } from './io.ts';
import { DEFAULT_LAB_FILE, findLabFile, startCommand, type LabFile } from './lab-file.ts';

export const API_ENV = 'BENCHDROP_API';
export const BUCKET_ENV = ENV.bucketName;
export const S3_ENDPOINT_ENV = ENV.s3Endpoint;

/** The local lab's addresses when started with its defaults, for examples in help and messages. */
export const LAB_API_EXAMPLE = `http://${DEFAULT_HOST}:${DEFAULT_PORTS.api}`;
export const LAB_S3_EXAMPLE = `http://${DEFAULT_HOST}:${DEFAULT_PORTS.s3}`;

/** The flags every lab command accepts. */
export interface TargetFlags {
  api?: string;
  stack?: string;
  bucket?: string;
  endpoint?: string;
  region?: string;
  /** The local lab's data folder, where its lab.json is. */
  data?: string;
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
  /** Where the default data folder is looked for (the current directory). */
  cwd?: string;
  /** DescribeStacks, by default through @aws-sdk/client-cloudformation. */
  describeStack?: (name: string, region: string | undefined) => Promise<StackOutputs>;
}

export interface ApiTarget {
  /** Base URL, without a trailing slash. */
  url: string;
  /** Sign requests with SigV4 (an AWS HTTP API with IAM auth). */
  sign: boolean;
  region: string;
  /** Where the URL came from, for messages: `--api`, `BENCHDROP_API`, `stack NAME`, `.benchdrop/lab.json`. */
  source: string;
  /** What to say when the URL does not answer, when there is more to say than TARGET_HELP. */
  notAnswering?: string;
}

export interface BucketTarget {
  bucket: string;
  endpoint?: string;
  region?: string;
  credentials?: Credentials;
  source: string;
}

/** Every way of naming the lab, for the messages that need one. */
export const TARGET_HELP =
  `name the lab with --api URL (e.g. ${LAB_API_EXAMPLE}) or --stack NAME (e.g. Benchdrop-mylab), ` +
  'run `npm start` in this folder (or give --data DIR, the data folder of a running lab), ' +
  `or set ${API_ENV}`;
export const BUCKET_HELP =
  'name the bucket with --bucket NAME [--endpoint URL] or --stack NAME, ' +
  `run \`npm start\` in this folder (or give --data DIR), or set ${BUCKET_ENV} [and ${S3_ENDPOINT_ENV}]`;

/** How a target was named: by a flag, by --stack's outputs, or found without either (lab.json, environment). */
type NamedBy = 'flag' | 'stack' | 'found';

/** The API's URL and where it came from, before it is checked. */
interface Named {
  raw: string;
  source: string;
  by: NamedBy;
  /** The region its source gives (the stack's, lab.json's). */
  region?: string;
  labFile?: LabFile;
}

interface NamedBucket {
  bucket: string;
  source: string;
  by: NamedBy;
  endpoint: { url: string; source: string } | undefined;
  region: string | undefined;
}

/** A target found without a flag naming it: announced to the user. */
interface Found {
  what: string;
  source: string;
}

const EXECUTE_API_HOST = /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/;

async function describeStackWithSdk(name: string, region: string | undefined): Promise<StackOutputs> {
  // Loaded here, not at the top: only --stack needs the CloudFormation client.
  const { CloudFormationClient, DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
  const client = new CloudFormationClient(region ? { region } : {});
  try {
    const response = await client.send(new DescribeStacksCommand({ StackName: name }));
    const stack = response.Stacks?.[0];
    if (!stack) throw new CliError(`stack ${name} was not found`);
    const outputs: Record<string, string> = {};
    for (const o of stack.Outputs ?? [])
      if (o.OutputKey && o.OutputValue !== undefined) outputs[o.OutputKey] = o.OutputValue;
    return { outputs, region: await client.config.region() };
  } finally {
    client.destroy();
  }
}

/** An http(s) URL, or an error naming where the text came from. */
function httpUrl(named: Named): URL {
  if (!URL.canParse(named.raw))
    throw new CliError(
      `${named.source}: "${named.raw}" is not a URL ` +
        `(expected e.g. ${LAB_API_EXAMPLE} or https://abc123.execute-api.eu-west-1.amazonaws.com)`,
    );
  const url = new URL(named.raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(`${named.source}: "${named.raw}" is not an http(s) URL`);
  return url;
}

/**
 * Resolves lazily: the stack is described at most once, lab.json read at most
 * once, and only when a command needs them.
 */
export class Target {
  private readonly env: NodeJS.ProcessEnv;
  private stackOutputs?: Promise<StackOutputs>;
  private labFile?: Promise<LabFile | undefined>;
  /** What was found without a flag naming it, by kind, for announcement(). */
  private readonly found = new Map<'api' | 'bucket', Found>();

  constructor(
    readonly flags: TargetFlags,
    private readonly deps: TargetDeps = {},
  ) {
    this.env = deps.env ?? process.env;
  }

  /** A variable that is set to something: an empty one counts as unset. */
  private envSet(name: string): string | undefined {
    return this.env[name] || undefined;
  }

  private regionFromEnv(): string | undefined {
    return this.flags.region ?? this.env['AWS_REGION'] ?? this.env['AWS_DEFAULT_REGION'];
  }

  private stack(name: string): Promise<StackOutputs> {
    this.stackOutputs ??= (this.deps.describeStack ?? describeStackWithSdk)(name, this.regionFromEnv()).catch(
      (error: unknown) => {
        if (error instanceof CliError) throw error;
        const message = (error as Error).message || String(error);
        const hint = name.startsWith('Benchdrop-')
          ? ''
          : ` (lab stacks are named Benchdrop-<lab>, e.g. Benchdrop-${name})`;
        throw new CliError(`could not read stack ${name}: ${message}${hint}`);
      },
    );
    return this.stackOutputs;
  }

  private async stackOutput(name: string, output: string): Promise<{ value: string; region: string }> {
    const { outputs, region } = await this.stack(name);
    const value = outputs[output];
    if (!value)
      throw new CliError(
        `stack ${name} has no ${output} output (outputs: ${Object.keys(outputs).join(', ') || 'none'}); ` +
          'redeploy it with npx cdk deploy -c lab=...',
      );
    return { value, region };
  }

  /** The running local lab's lab.json, read once: --data's, else the default folder's if it has one. */
  private lab(): Promise<LabFile | undefined> {
    this.labFile ??= findLabFile(this.flags.data, this.deps.cwd ?? process.cwd());
    return this.labFile;
  }

  async api(): Promise<ApiTarget> {
    const named = await this.namedApi();
    const url = httpUrl(named);
    const target: ApiTarget = {
      url: `${url.origin}${url.pathname.replace(/\/+$/, '')}`,
      sign: url.protocol === 'https:' || named.by === 'stack',
      region: EXECUTE_API_HOST.exec(url.hostname)?.[1] ?? this.regionFromEnv() ?? named.region ?? DEFAULT_REGION,
      source: named.source,
      ...(named.labFile ? { notAnswering: this.labNotAnswering(named.labFile) } : {}),
    };
    if (named.by === 'found') this.found.set('api', { what: `the lab at ${target.url}`, source: named.source });
    return target;
  }

  /** The API's URL: flags first, then the running lab's lab.json, then the environment. */
  private async namedApi(): Promise<Named> {
    const { api, stack } = this.flags;
    if (api) return { raw: api, source: '--api', by: 'flag' };
    if (stack) {
      const out = await this.stackOutput(stack, 'ApiUrl');
      return { raw: out.value, source: `stack ${stack}`, by: 'stack', region: out.region };
    }
    const lab = await this.lab();
    if (lab) return { raw: lab.apiUrl, source: lab.path, by: 'found', region: lab.region, labFile: lab };
    const fromEnv = this.envSet(API_ENV);
    if (fromEnv) return { raw: fromEnv, source: API_ENV, by: 'found' };
    throw new CliError(
      `no lab API to talk to (no --api or --stack, no ${DEFAULT_LAB_FILE} here, no ${API_ENV}): ${TARGET_HELP}`,
    );
  }

  /** lab.json outlives the lab: a URL of it that does not answer most likely means the lab was stopped. */
  private labNotAnswering(lab: LabFile): string {
    const fromEnv = this.envSet(API_ENV)
      ? ` (${API_ENV} is set, but ${lab.path} comes first: --api "$${API_ENV}" uses it)`
      : '';
    return (
      `the lab is not running? ${lab.path} stays after the lab stops: start it again with ` +
      `\`${startCommand(lab.dataDir)}\`, or name another lab with --api URL or --stack NAME${fromEnv}`
    );
  }

  async bucket(): Promise<BucketTarget> {
    const named = await this.namedBucket();
    const target: BucketTarget = { bucket: named.bucket, source: named.source };
    if (named.region) target.region = named.region;
    if (named.endpoint) {
      if (!URL.canParse(named.endpoint.url))
        throw new CliError(
          `${named.endpoint.source}: "${named.endpoint.url}" is not a URL (expected e.g. ${LAB_S3_EXAMPLE})`,
        );
      target.endpoint = named.endpoint.url;
      target.credentials = this.emulatorCredentials();
    }
    if (named.by === 'found')
      this.found.set('bucket', {
        what: `bucket ${target.bucket}${target.endpoint ? ` at ${target.endpoint}` : ''}`,
        source: named.source,
      });
    return target;
  }

  /** The bucket, its S3 endpoint and region: flags first, then the running lab's lab.json, then the environment. */
  private async namedBucket(): Promise<NamedBucket> {
    const { bucket, stack, endpoint, region } = this.flags;
    const flagEndpoint = endpoint ? { url: endpoint, source: '--endpoint' } : undefined;
    const endpointFromEnv = this.envSet(S3_ENDPOINT_ENV);
    const envEndpoint =
      flagEndpoint ?? (endpointFromEnv ? { url: endpointFromEnv, source: S3_ENDPOINT_ENV } : undefined);
    // A bucket named with --bucket takes the environment's endpoint, unless a stack says it is in AWS.
    if (bucket)
      return {
        bucket,
        source: '--bucket',
        by: 'flag',
        endpoint: stack ? flagEndpoint : envEndpoint,
        region: this.regionFromEnv(),
      };
    if (stack) {
      const out = await this.stackOutput(stack, 'BucketName');
      return {
        bucket: out.value,
        source: `stack ${stack}`,
        by: 'stack',
        endpoint: flagEndpoint,
        region: this.regionFromEnv() ?? out.region,
      };
    }
    const lab = await this.lab();
    if (lab)
      return {
        bucket: lab.bucket,
        source: lab.path,
        by: 'found',
        endpoint: flagEndpoint ?? { url: lab.s3Endpoint, source: lab.path },
        region: region ?? lab.region,
      };
    const bucketFromEnv = this.envSet(BUCKET_ENV);
    if (bucketFromEnv)
      return {
        bucket: bucketFromEnv,
        source: BUCKET_ENV,
        by: 'found',
        endpoint: envEndpoint,
        region: this.regionFromEnv(),
      };
    throw new CliError(
      `no bucket to upload to (no --bucket or --stack, no ${DEFAULT_LAB_FILE} here, no ${BUCKET_ENV}): ${BUCKET_HELP}`,
    );
  }

  /**
   * The one line saying what this command found without being told, grouped
   * by where it came from (`using the lab at URL, bucket B at URL (from
   * .benchdrop/lab.json)`); undefined when flags named everything.
   */
  announcement(): string | undefined {
    // The lab before its bucket, whichever was looked up first.
    const found = (['api', 'bucket'] as const).flatMap((kind) => this.found.get(kind) ?? []);
    if (found.length === 0) return undefined;
    const sources = [...new Set(found.map((f) => f.source))];
    const parts = sources.map(
      (source) =>
        `${found
          .filter((f) => f.source === source)
          .map((f) => f.what)
          .join(', ')} (from ${source})`,
    );
    return `using ${parts.join(', ')}`;
  }

  /** s3rver accepts only S3RVER/S3RVER; explicit AWS keys win (an endpoint that is not s3rver). */
  private emulatorCredentials(): Credentials {
    const id = this.envSet('AWS_ACCESS_KEY_ID');
    const secret = this.envSet('AWS_SECRET_ACCESS_KEY');
    if (id && secret) {
      const token = this.envSet('AWS_SESSION_TOKEN');
      return { accessKeyId: id, secretAccessKey: secret, ...(token ? { sessionToken: token } : {}) };
    }
    return { ...LAB_CREDENTIALS };
  }
}
