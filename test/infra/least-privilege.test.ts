/**
 * Each function's role against what its code sends. The AWS SDK commands the
 * project's own sources in its bundle construct (esbuild's metafile: the modules
 * that put bytes in it), and the indexes they name, are mapped to the IAM actions
 * they need; the role must grant every one (or the call fails with AccessDenied)
 * and nothing more, besides what the platform needs (the function's log group, its
 * event source's queue) and the grants named below with their reasons. A grant no
 * source sends (dynamodb:ConditionCheckItem, s3:GetObjectTagging) fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaEsbuildOptions } from '../../infra/bundling.ts';
import { labSettings } from '../../infra/settings.ts';
import type { BenchdropStack } from '../../infra/stack.ts';
import { ENV } from '../../shared/config.ts';
import { SAMPLES_PREFIX } from '../../shared/store/samples-schema.ts';
import { INDEXES } from '../../shared/store/table.ts';
import {
  CONSUMER_ACTIONS,
  getAtt,
  LOG_ACTIONS,
  ref,
  resources,
  roleGrants,
  synthLabs,
  type Synthesis,
} from './synth.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where a command acts: the table, the drop bucket's objects, the ingest queue (the results bucket: RESULTS_SOURCES). */
type Target = 'table' | 'objects' | 'queue';

/**
 * The IAM actions of every SDK command the functions may construct. A command not
 * listed fails the test until its actions are written here: nothing goes unmapped.
 */
const COMMAND_ACTIONS: Record<string, { target: Target; actions: string[] }> = {
  GetCommand: { target: 'table', actions: ['dynamodb:GetItem'] },
  PutCommand: { target: 'table', actions: ['dynamodb:PutItem'] },
  UpdateCommand: { target: 'table', actions: ['dynamodb:UpdateItem'] },
  DeleteCommand: { target: 'table', actions: ['dynamodb:DeleteItem'] },
  QueryCommand: { target: 'table', actions: ['dynamodb:Query'] },
  ScanCommand: { target: 'table', actions: ['dynamodb:Scan'] },
  BatchGetCommand: { target: 'table', actions: ['dynamodb:BatchGetItem'] },
  BatchWriteCommand: { target: 'table', actions: ['dynamodb:BatchWriteItem'] },
  TransactGetCommand: { target: 'table', actions: ['dynamodb:TransactGetItems'] },
  TransactWriteCommand: { target: 'table', actions: ['dynamodb:TransactWriteItems'] },
  // Uploads are read by version id, which IAM authorises as GetObjectVersion.
  GetObjectCommand: { target: 'objects', actions: ['s3:GetObject', 's3:GetObjectVersion'] },
  HeadObjectCommand: { target: 'objects', actions: ['s3:GetObject', 's3:GetObjectVersion'] },
  GetObjectTaggingCommand: { target: 'objects', actions: ['s3:GetObjectTagging', 's3:GetObjectVersionTagging'] },
  PutObjectCommand: { target: 'objects', actions: ['s3:PutObject'] },
  SendMessageCommand: { target: 'queue', actions: ['sqs:SendMessage'] },
};

/**
 * The sources whose S3 commands act on the results bucket, and the prefix each
 * acts under: every other S3 command acts on the drop bucket.
 */
const RESULTS_SOURCES: Record<string, string> = {
  'shared/store/samples.ts': SAMPLES_PREFIX,
  'shared/store/samples-removal.ts': SAMPLES_PREFIX,
  'shared/store/sample-reader.ts': SAMPLES_PREFIX,
  'shared/reports.ts': 'reports/',
};

/**
 * The IAM actions of commands on the results bucket (nothing there is read by
 * version). lib-storage's Upload sends its commands from node_modules: it is
 * matched as `new Upload(` (PutObject, or a multipart upload, aborted on failure).
 */
const RESULTS_COMMAND_ACTIONS: Record<string, string[]> = {
  GetObjectCommand: ['s3:GetObject'],
  HeadObjectCommand: ['s3:GetObject'],
  PutObjectCommand: ['s3:PutObject'],
  DeleteObjectCommand: ['s3:DeleteObject'],
  Upload: ['s3:AbortMultipartUpload', 's3:PutObject'],
};

/** What the code needs: actions by target, and the indexes it queries. */
interface Needs {
  actions: Record<Target, Set<string>>;
  /** Actions on the results bucket, by key prefix. */
  results: Map<string, Set<string>>;
  indexes: Set<string>;
  /** Where each command and index was found, for the failure messages. */
  found: string[];
}

/** The project's own source files that put bytes into the bundle of `entry`. */
async function bundledSources(entry: string): Promise<string[]> {
  const result = await build({
    ...lambdaEsbuildOptions(),
    entryPoints: [join(ROOT, entry)],
    absWorkingDir: ROOT,
    write: false,
    outdir: 'out',
    metafile: true,
    logLevel: 'silent',
  });
  const inputs = Object.values(result.metafile.outputs).flatMap((output) => Object.entries(output.inputs));
  return [
    ...new Set(
      inputs.filter(([path, input]) => !path.includes('node_modules') && input.bytesInOutput > 0).map(([path]) => path),
    ),
  ].sort();
}

/** The commands and index names the sources construct and query. */
function needsOf(sources: string[]): Needs {
  const needs: Needs = {
    actions: { table: new Set(), objects: new Set(), queue: new Set() },
    results: new Map(),
    indexes: new Set(),
    found: [],
  };
  for (const source of sources) {
    const text = readFileSync(join(ROOT, source), 'utf8');
    const prefix = RESULTS_SOURCES[source];
    if (prefix !== undefined) {
      for (const [, command] of text.matchAll(/\bnew\s+(\w+Command|Upload)\s*\(/g)) {
        const actions = RESULTS_COMMAND_ACTIONS[command!];
        expect(
          actions,
          `${source} constructs ${command}: add its IAM actions to RESULTS_COMMAND_ACTIONS`,
        ).toBeDefined();
        const set = needs.results.get(prefix) ?? new Set<string>();
        for (const action of actions!) set.add(action);
        needs.results.set(prefix, set);
        needs.found.push(`${source}: ${command} (results bucket, ${prefix})`);
      }
      continue;
    }
    for (const [, command] of text.matchAll(/\bnew\s+(\w+Command)\s*\(/g)) {
      const mapped = COMMAND_ACTIONS[command!];
      expect(mapped, `${source} constructs ${command}: add its IAM actions to COMMAND_ACTIONS`).toBeDefined();
      for (const action of mapped!.actions) needs.actions[mapped!.target].add(action);
      needs.found.push(`${source}: ${command}`);
    }
    // Indexes are named only through shared/store/table.ts INDEXES, which also declares them (IndexName: index.name).
    for (const [whole, index] of text.matchAll(/\bIndexName:\s*([^,}\n]+)/g)) {
      const named = /^INDEXES\.(\w+)\.name$/.exec(index!.trim());
      if (source === 'shared/store/table.ts' && index!.trim() === 'index.name') continue;
      expect(named, `${source}: ${whole} names an index this test cannot tell`).not.toBeNull();
      needs.indexes.add(INDEXES[named![1] as keyof typeof INDEXES].name);
      needs.found.push(`${source}: ${whole}`);
    }
  }
  return needs;
}

/** Grants that no command sends, each with its reason; anything else must come from the code. */
const NAMED_GRANTS: Partial<Record<Fn, { target: 'bucket'; actions: string[]; reason: string }[]>> = {
  ingest: [
    {
      target: 'bucket',
      actions: ['s3:ListBucket'],
      reason: 'a key or version removed before ingest runs reads as NoSuchKey/NoSuchVersion, not AccessDenied',
    },
  ],
};

type Fn = 'ingest' | 'api' | 'deadLetter' | 'sweeper';
const FUNCTIONS: Record<
  Fn,
  {
    entry: string;
    of: (stack: BenchdropStack) => {
      fn: BenchdropStack['ingest'];
      role: BenchdropStack['ingestRole'];
      logs: BenchdropStack['ingestLogs'];
    };
  }
> = {
  ingest: {
    entry: 'functions/ingest/handler.ts',
    of: (s) => ({ fn: s.ingest, role: s.ingestRole, logs: s.ingestLogs }),
  },
  api: { entry: 'functions/api/handler.ts', of: (s) => ({ fn: s.apiFunction, role: s.apiRole, logs: s.apiLogs }) },
  deadLetter: {
    entry: 'functions/dead-letter/handler.ts',
    of: (s) => ({ fn: s.deadLetterFunction, role: s.deadLetterRole, logs: s.deadLetterLogs }),
  },
  sweeper: {
    entry: 'functions/sweeper/handler.ts',
    of: (s) => ({ fn: s.sweeper, role: s.sweeperRole, logs: s.sweeperLogs }),
  },
};

let synth: Synthesis;
const needs = {} as Record<Fn, Needs>;
beforeAll(async () => {
  synth = synthLabs([labSettings({ lab: 'alpha' })]);
  for (const [name, { entry }] of Object.entries(FUNCTIONS)) needs[name as Fn] = needsOf(await bundledSources(entry));
}, 180_000);
afterAll(() => synth?.dispose());

describe("each function's role grants exactly what its code sends", () => {
  const lab = () => synth.labs.alpha!;
  const id = (construct: { node: { defaultChild?: unknown } }) =>
    lab().stack.getLogicalId(construct.node.defaultChild as Parameters<BenchdropStack['getLogicalId']>[0]);
  const roleOf = (name: Fn) => id(FUNCTIONS[name].of(lab().stack).role);
  const join = (...parts: unknown[]) => JSON.stringify({ 'Fn::Join': ['', parts] });

  /** The grants the code, the platform and NAMED_GRANTS call for, in roleGrants' shape. */
  function expectedGrants(name: Fn): Record<string, string[]> {
    const { stack, template } = lab();
    const { fn, logs } = FUNCTIONS[name].of(stack);
    const [table, bucket, queue, results] = [
      id(stack.table),
      id(stack.bucket),
      id(stack.queue),
      id(stack.resultsBucket),
    ];
    const expected: Record<string, Set<string>> = {};
    const add = (key: string, actions: Iterable<string>) => {
      for (const action of actions) (expected[key] ??= new Set()).add(action);
    };
    const need = needs[name];
    add(JSON.stringify(getAtt(table, 'Arn')), need.actions.table);
    for (const index of need.indexes) add(join(getAtt(table, 'Arn'), `/index/${index}`), ['dynamodb:Query']);
    add(join(getAtt(bucket, 'Arn'), '/*'), need.actions.objects);
    add(JSON.stringify(getAtt(queue, 'Arn')), need.actions.queue);
    for (const [prefix, actions] of need.results) add(join(getAtt(results, 'Arn'), `/${prefix}*`), actions);
    for (const grant of NAMED_GRANTS[name] ?? []) add(JSON.stringify(getAtt(bucket, 'Arn')), grant.actions);
    // The platform: its log group (both ARN spellings LogGroup.grant writes), its event source's queue.
    const logGroup = id(logs);
    add(JSON.stringify(getAtt(logGroup, 'Arn')), LOG_ACTIONS);
    add(
      join(
        'arn:',
        ref('AWS::Partition'),
        ':logs:',
        ref('AWS::Region'),
        ':',
        ref('AWS::AccountId'),
        ':log-group:',
        ref(logGroup),
      ),
      LOG_ACTIONS,
    );
    for (const [, mapping] of resources(template, 'AWS::Lambda::EventSourceMapping')) {
      if (JSON.stringify(mapping.Properties!.FunctionName) === JSON.stringify(ref(id(fn))))
        add(JSON.stringify(mapping.Properties!.EventSourceArn), CONSUMER_ACTIONS);
    }
    return Object.fromEntries(
      Object.entries(expected)
        .filter(([, actions]) => actions.size > 0)
        .map(([key, actions]) => [key, [...actions].sort()]),
    );
  }

  for (const name of Object.keys(FUNCTIONS) as Fn[]) {
    it(`${name}: the commands of ${FUNCTIONS[name].entry} and the modules it bundles, no more`, () => {
      const found = needs[name].found;
      expect(found.length, `${name} sends nothing?`).toBeGreaterThan(0);
      expect(roleGrants(lab().template, roleOf(name)), found.join('\n')).toEqual(expectedGrants(name));
    });
  }

  it("finds what it looks for: the reads of the API, the sweeper's byStatus query, the continuations ingest sends", () => {
    expect([...needs.api.actions.table].sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:GetItem',
      'dynamodb:Query',
    ]);
    expect([...needs.api.actions.objects]).toEqual(['s3:PutObject']);
    expect(needs.sweeper.indexes).toContain(INDEXES.byStatus.name);
    expect(needs.deadLetter.indexes).not.toContain(INDEXES.byStatus.name);
    expect([...needs.ingest.actions.queue]).toEqual(['sqs:SendMessage']);
    // The one queue a function may send to is the one in its environment: the ingest queue.
    const env = (
      lab().template.toJSON() as {
        Resources: Record<string, { Properties: { Environment: { Variables: Record<string, unknown> } } }>;
      }
    ).Resources[id(lab().stack.ingest)]!.Properties.Environment.Variables;
    expect(env[ENV.queueUrl]).toEqual(ref(id(lab().stack.queue)));
    for (const fn of ['api', 'deadLetter', 'sweeper'] as const) expect(needs[fn].actions.queue.size, fn).toBe(0);
  });

  it('finds the samples objects each function touches: ingest writes and deletes, the settlers delete', () => {
    const samples = (fn: Fn) => [...(needs[fn].results.get(SAMPLES_PREFIX) ?? [])].sort();
    expect(samples('ingest')).toEqual(['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:PutObject']);
    expect(samples('deadLetter')).toEqual(['s3:DeleteObject']);
    expect(samples('sweeper')).toEqual(['s3:DeleteObject']);
    // Each names the results bucket it was given, and nothing else of it.
    const variables = (fn: Fn) =>
      (
        lab().template.toJSON() as {
          Resources: Record<string, { Properties: { Environment: { Variables: Record<string, unknown> } } }>;
        }
      ).Resources[id(FUNCTIONS[fn].of(lab().stack).fn)]!.Properties.Environment.Variables;
    for (const fn of Object.keys(FUNCTIONS) as Fn[])
      expect(variables(fn)[ENV.resultsBucket], fn).toEqual(ref(id(lab().stack.resultsBucket)));
  });

  it('grants no function the actions review found unused (ConditionCheckItem, object tagging)', () => {
    for (const name of Object.keys(FUNCTIONS) as Fn[]) {
      const granted = Object.values(roleGrants(lab().template, roleOf(name))).flat();
      for (const unused of ['dynamodb:ConditionCheckItem', 's3:GetObjectTagging', 's3:GetObjectVersionTagging'])
        expect(granted, name).not.toContain(unused);
    }
  });
});
