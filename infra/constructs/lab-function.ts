/**
 * What every function of a lab shares: its own log group and role, the runtime
 * and bundling, the table's name and the lab in its environment, and a share of
 * the table that names each action and index it uses.
 *
 * The parts of the stack (this folder) build their resources directly in the
 * stack's scope rather than in constructs of their own: a construct would add a
 * component to every resource's path, and with it a new logical ID, so that the
 * next deploy of an existing lab would replace its table and its bucket.
 */
import { fileURLToPath } from 'node:url';
import { Stack, Validations, type Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions, type ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { ENV, METRICS_NAMESPACE } from '../../shared/config.ts';
import { INDEXES } from '../../shared/store/table.ts';
import { LAMBDA_BUNDLING, LAMBDA_TARGET } from '../bundling.ts';
import type { StackSettings } from '../settings.ts';

/** What every part of the stack is built from. */
export interface PartProps {
  readonly settings: StackSettings;
  /** What becomes of the data (buckets, table, logs) when the stack is deleted. */
  readonly dataRemoval: RemovalPolicy;
}

/** A function of the lab, with the role it runs as and the log group it writes to. */
export interface LabFunction {
  fn: NodejsFunction;
  role: iam.Role;
  logs: logs.LogGroup;
}

export interface LabFunctionOptions {
  entry: string;
  description: string;
  roleDescription: string;
  service: string;
  memoryMB: number;
  timeout: Duration;
  environment: Record<string, string>;
  /** Commands run once esbuild has bundled the function, from the project root into its output folder. */
  afterBundling?: (inputDir: string, outputDir: string) => string[];
}

/** Repository root (this file is infra/constructs/lab-function.ts). */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LOCK_FILE = fileURLToPath(new URL('../../package-lock.json', import.meta.url));

/** The entry file of a function under functions/, e.g. `ingest` -> functions/ingest/handler.ts. */
export function functionEntry(name: 'ingest' | 'api' | 'dead-letter' | 'sweeper'): string {
  return fileURLToPath(new URL(`../../functions/${name}/handler.ts`, import.meta.url));
}

/** Days Lambda logs are kept. */
const FUNCTION_LOG_RETENTION = logs.RetentionDays.THREE_MONTHS;

/** The Node.js runtime and esbuild settings every function shares (infra/bundling.ts). */
const RUNTIME = lambda.Runtime.NODEJS_24_X;
const BUNDLING: BundlingOptions = { format: OutputFormat.ESM, target: LAMBDA_TARGET, ...LAMBDA_BUNDLING };

/** Environment every function shares besides the table, the lab and its Powertools service name. */
const POWERTOOLS_ENV = {
  POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
  POWERTOOLS_LOG_LEVEL: 'INFO',
} as const;

/**
 * A function of the lab with its own log group and role (instead of the default
 * role, which carries the managed AWSLambdaBasicExecutionRole: logs on every log
 * group of the account), bundled and configured like its siblings. Every one gets
 * the table, the lab and Powertools' settings; `environment` adds its own.
 */
export function labFunction(
  stack: Stack,
  id: 'Ingest' | 'Api' | 'DeadLetter' | 'Sweeper',
  table: dynamodb.Table,
  props: PartProps,
  options: LabFunctionOptions,
): LabFunction {
  const logGroup = new logs.LogGroup(stack, `${id}Logs`, {
    retention: FUNCTION_LOG_RETENTION,
    removalPolicy: props.dataRemoval,
  });
  const role = new iam.Role(stack, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: options.roleDescription,
  });
  logGroup.grant(role, 'logs:CreateLogStream', 'logs:PutLogEvents');
  const fn = new NodejsFunction(stack, `${id}Function`, {
    entry: options.entry,
    handler: 'handler',
    projectRoot: ROOT,
    depsLockFilePath: LOCK_FILE,
    description: options.description,
    runtime: RUNTIME,
    architecture: lambda.Architecture.ARM_64,
    memorySize: options.memoryMB,
    timeout: options.timeout,
    role,
    logGroup,
    environment: {
      [ENV.tableName]: table.tableName,
      [ENV.lab]: props.settings.lab,
      ...options.environment,
      POWERTOOLS_SERVICE_NAME: options.service,
      ...POWERTOOLS_ENV,
    },
    bundling: options.afterBundling
      ? { ...BUNDLING, commandHooks: afterBundlingOnly(options.afterBundling) }
      : BUNDLING,
  });
  return { fn, role, logs: logGroup };
}

/** NodejsFunction's command hooks with only the after-bundling one. */
function afterBundlingOnly(after: NonNullable<LabFunctionOptions['afterBundling']>): ICommandHooks {
  return { beforeBundling: () => [], beforeInstall: () => [], afterBundling: after };
}

/** A function's share of the table: actions on its items, and the indexes it queries. */
export interface TableAccess {
  items: readonly string[];
  indexes: readonly (keyof typeof INDEXES)[];
}

/**
 * Item actions of the functions that write: reads, writes and deletes of single
 * items and batches, queries of the table (a run's items, to remove them).
 */
const WRITER_ITEM_ACTIONS = [
  'dynamodb:BatchWriteItem',
  'dynamodb:DeleteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
];

/**
 * What each function does with the table: exactly the commands its code sends
 * (test/infra/least-privilege.test.ts reads them from each bundle's sources). No
 * Scan, no transactions, no table management, no streams anywhere. Removing an
 * upload's items queries byDevice for the labels they leave; only the API reads
 * in batches, and only the sweeper looks uploads up by status.
 */
export const TABLE_ACCESS = {
  ingest: { items: WRITER_ITEM_ACTIONS, indexes: ['byDevice'] },
  api: {
    items: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'],
    indexes: ['byDevice', 'byStatus', 'byTag'],
  },
  deadLetter: { items: WRITER_ITEM_ACTIONS, indexes: ['byDevice'] },
  sweeper: { items: WRITER_ITEM_ACTIONS, indexes: ['byDevice', 'byStatus'] },
} as const satisfies Record<string, TableAccess>;

/** Item actions on the table, and Query on the indexes named (TABLE_ACCESS). */
export function grantTable(role: iam.Role, table: dynamodb.Table, access: TableAccess): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ sid: 'Table', actions: [...access.items], resources: [table.tableArn] }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'QueryIndexes',
      actions: ['dynamodb:Query'],
      resources: access.indexes.map((index) => `${table.tableArn}/index/${INDEXES[index].name}`),
    }),
  );
}

/**
 * Acknowledges cdk-nag's finding on a role's policy naming every object of the
 * drop bucket: uploads may use any key, so the object ARN pattern is the least
 * a statement on them can name. `reason` says why this role needs it.
 */
export function acknowledgeBucketObjects(role: iam.Role, bucket: s3.Bucket, reason: string): void {
  const policy = role.node.tryFindChild('DefaultPolicy');
  if (!policy) return;
  const bucketId = Stack.of(bucket).getLogicalId(bucket.node.defaultChild as s3.CfnBucket);
  Validations.of(policy).acknowledge({ id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`, reason });
}
