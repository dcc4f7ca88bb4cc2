/**
 * The per-lab stack: two labs (alpha with the defaults, beta with every setting
 * changed) synthesised into one App exactly as `cdk synth` would, minus bundling
 * (and with a stand-in API entry while functions/api/handler.ts does not exist).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { HttpNoneAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { ROUTES } from '../../shared/api.ts';
import { ALL_DELIVERIES_MS, ENV, INGEST_LIMITS, LAB_DEFAULTS, MB } from '../../shared/config.ts';
import { createTableInput, INDEXES } from '../../shared/store/table.ts';
import { DEAD_LETTER_METRICS } from '../../functions/dead-letter/handler.ts';
import { SWEEPER_METRICS } from '../../functions/sweeper/handler.ts';
import { API_DEFAULTS, labSettings } from '../../infra/settings.ts';
import { API_ACCESS_LOG_FIELDS, parseRouteKey } from '../../infra/constructs/api.ts';
import { API, DEAD_LETTER, DEAD_LETTER_VISIBILITY, INGEST, SWEEPER } from '../../infra/limits.ts';
import { LAB_TAG } from '../../infra/stack.ts';
import {
  acknowledgements,
  asArray,
  buildTestLab,
  CONSUMER_ACTIONS,
  getAtt,
  labTag,
  LOG_ACTIONS,
  roleGrants,
  only,
  ref,
  resources,
  synthLabs,
  testApp,
  unacknowledgedNagFindings,
  type CfnResource,
  type Synthesis,
} from './synth.ts';

const ALPHA = labSettings({ lab: 'alpha' });
const BETA = labSettings({
  lab: 'beta',
  maxUploadMB: '200',
  maxSeriesPerFile: '5000',
  noncurrentVersionDays: '30',
  alarmEmail: 'ops@example.org',
  retainData: 'false',
  deletionProtection: 'false',
  apiRateLimit: '20',
  apiBurstLimit: '40',
});

let synth: Synthesis;
// One synth of both labs (a few seconds; more on a busy machine than the default hook timeout allows).
beforeAll(() => {
  synth = synthLabs([ALPHA, BETA]);
}, 120_000);
afterAll(() => synth?.dispose());

const template = (lab: string) => synth.labs[lab].template;
const logicalId = (lab: string, construct: { node: { defaultChild?: unknown } }) =>
  synth.labs[lab].stack.getLogicalId(
    construct.node.defaultChild as Parameters<typeof synth.labs.alpha.stack.getLogicalId>[0],
  );

/** Logical ids of the main resources of a lab. */
function ids(lab: string) {
  const stack = synth.labs[lab].stack;
  return {
    bucket: logicalId(lab, stack.bucket),
    logsBucket: logicalId(lab, stack.logsBucket),
    resultsBucket: logicalId(lab, stack.resultsBucket),
    queue: logicalId(lab, stack.queue),
    dlq: logicalId(lab, stack.deadLetterQueue),
    table: logicalId(lab, stack.table),
    ingest: logicalId(lab, stack.ingest),
    topic: logicalId(lab, stack.alarmTopic),
    role: logicalId(lab, stack.ingestRole),
    logGroup: logicalId(lab, stack.ingestLogs),
    api: logicalId(lab, stack.api),
    stage: logicalId(lab, stack.apiStage),
    apiFunction: logicalId(lab, stack.apiFunction),
    apiRole: logicalId(lab, stack.apiRole),
    apiLogs: logicalId(lab, stack.apiLogs),
    accessLogs: logicalId(lab, stack.apiAccessLogs),
    deadLetter: logicalId(lab, stack.deadLetterFunction),
    deadLetterRole: logicalId(lab, stack.deadLetterRole),
    deadLetterLogs: logicalId(lab, stack.deadLetterLogs),
    sweeper: logicalId(lab, stack.sweeper),
    sweeperRole: logicalId(lab, stack.sweeperRole),
    sweeperLogs: logicalId(lab, stack.sweeperLogs),
    schedule: logicalId(lab, stack.sweepSchedule),
    key: logicalId(lab, stack.alarmKey),
  };
}

/** The lab's own functions, by the logical ids of ids(). */
const FUNCTIONS = ['ingest', 'apiFunction', 'deadLetter', 'sweeper'] as const;

/** What a role of a lab grants (synth.ts roleGrants). */
const grantsOf = (lab: string, roleId: string) => roleGrants(template(lab), roleId);

/** Resource keys of grantsOf for a lab's resources. */
function arns(lab: string) {
  const i = ids(lab);
  const join = (...parts: unknown[]) => JSON.stringify({ 'Fn::Join': ['', parts] });
  return {
    bucket: JSON.stringify(getAtt(i.bucket, 'Arn')),
    objects: join(getAtt(i.bucket, 'Arn'), '/*'),
    /** The results bucket's samples objects. */
    samples: join(getAtt(i.resultsBucket, 'Arn'), '/samples/*'),
    table: JSON.stringify(getAtt(i.table, 'Arn')),
    index: (name: keyof typeof INDEXES) => join(getAtt(i.table, 'Arn'), `/index/${INDEXES[name].name}`),
    queue: JSON.stringify(getAtt(i.queue, 'Arn')),
    dlq: JSON.stringify(getAtt(i.dlq, 'Arn')),
    /** A log group's two ARN spellings (with and without the trailing `:*`), as LogGroup.grant writes them. */
    logs: (logGroup: string) => [
      JSON.stringify(getAtt(logGroup, 'Arn')),
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
    ],
  };
}

/** The item actions of the functions that write the table (ingest, dead-letter, sweeper). */
const WRITER_ITEM_ACTIONS = [
  'dynamodb:BatchWriteItem',
  'dynamodb:DeleteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
];

function logGrants(lab: string, logGroup: string): Record<string, string[]> {
  return Object.fromEntries(
    arns(lab)
      .logs(logGroup)
      .map((key) => [key, LOG_ACTIONS]),
  );
}

function props(lab: string, id: string): Record<string, any> {
  const resource = (template(lab).toJSON() as { Resources: Record<string, CfnResource> }).Resources[id];
  if (!resource) throw new Error(`no resource ${id} in ${lab}`);
  return resource.Properties ?? {};
}

describe('two labs in one app', () => {
  it('gives each lab its own stack, Benchdrop-NAME', () => {
    expect(Object.keys(synth.labs).sort()).toEqual(['alpha', 'beta']);
    expect(synth.labs.alpha.stack.stackName).toBe('Benchdrop-alpha');
    expect(synth.labs.beta.stack.stackName).toBe('Benchdrop-beta');
    expect(
      synth.app.node.children
        .filter((child) => Stack.isStack(child))
        .map((child) => child.node.id)
        .sort(),
    ).toEqual(['Benchdrop-alpha', 'Benchdrop-beta']);
  });

  it('has the expected resources, and beta (retainData=false, alarmEmail) only its extras', () => {
    const counts: Record<string, number> = {
      'AWS::S3::Bucket': 3,
      'AWS::S3::BucketPolicy': 3,
      'Custom::S3BucketNotifications': 1,
      'AWS::SQS::Queue': 2,
      'AWS::SQS::QueuePolicy': 2,
      'AWS::DynamoDB::Table': 1,
      // The ingest queue to the ingest function, the dead-letter queue to the dead-letter function.
      'AWS::Lambda::EventSourceMapping': 2,
      // One per function, and the API's access logs.
      'AWS::Logs::LogGroup': 5,
      'AWS::Events::Rule': 1,
      'AWS::Lambda::EventInvokeConfig': 1,
      'AWS::KMS::Key': 1,
      'AWS::SNS::Topic': 1,
      'AWS::SNS::TopicPolicy': 1,
      'AWS::CloudWatch::Alarm': 11,
      'AWS::ApiGatewayV2::Api': 1,
      'AWS::ApiGatewayV2::Stage': 1,
      'AWS::ApiGatewayV2::Integration': 1,
      'AWS::ApiGatewayV2::Route': Object.keys(ROUTES).length,
      'AWS::ApiGatewayV2::Authorizer': 0,
      // One per route for API Gateway, one for the sweeper's schedule.
      'AWS::Lambda::Permission': Object.keys(ROUTES).length + 1,
    };
    for (const [type, count] of Object.entries(counts)) {
      template('alpha').resourceCountIs(type, count);
      template('beta').resourceCountIs(type, count);
    }
    // The ingest, API, dead-letter and sweeper functions and CDK's bucket-notification
    // handler; beta adds the provider that empties its buckets when the stack is deleted.
    template('alpha').resourceCountIs('AWS::Lambda::Function', 5);
    template('alpha').resourceCountIs('AWS::IAM::Role', 5);
    template('beta').resourceCountIs('AWS::IAM::Role', 6);
    template('alpha').resourceCountIs('Custom::S3AutoDeleteObjects', 0);
    template('beta').resourceCountIs('Custom::S3AutoDeleteObjects', 3);
    template('alpha').resourceCountIs('AWS::SNS::Subscription', 0);
    template('beta').resourceCountIs('AWS::SNS::Subscription', 1);
  });

  it('uses no fixed physical names anywhere', () => {
    const NAME_PROPERTIES = [
      'BucketName',
      'TableName',
      'QueueName',
      'FunctionName',
      'TopicName',
      'RoleName',
      'LogGroupName',
      'AlarmName',
      'PolicyName',
    ];
    for (const lab of ['alpha', 'beta']) {
      for (const [id, resource] of resources(template(lab))) {
        if (resource.Type.startsWith('Custom::')) continue; // their properties are inputs, e.g. the bucket to configure
        for (const name of NAME_PROPERTIES) {
          if (name === 'PolicyName' && resource.Type === 'AWS::IAM::Policy') continue; // inline policy name, local to its role
          if (
            name === 'FunctionName' &&
            /^AWS::Lambda::(EventSourceMapping|Permission|EventInvokeConfig)$/.test(resource.Type)
          )
            continue; // a reference, not a name
          expect(resource.Properties?.[name], `${lab}: ${id}.${name}`).toBeUndefined();
        }
      }
    }
  });

  it('tags every taggable resource with its own lab, so the two templates differ in their tags', () => {
    const UNTAGGABLE = new Set([
      'AWS::S3::BucketPolicy',
      'AWS::SQS::QueuePolicy',
      'AWS::SNS::TopicPolicy',
      'AWS::IAM::Policy',
      'AWS::SNS::Subscription',
      'Custom::S3BucketNotifications',
      'Custom::S3AutoDeleteObjects',
      'AWS::ApiGatewayV2::Route',
      'AWS::ApiGatewayV2::Integration',
      'AWS::Lambda::Permission',
      'AWS::Lambda::EventInvokeConfig',
    ]);
    for (const lab of ['alpha', 'beta']) {
      // CDK's custom resource *providers* (beta's bucket emptier) are raw resources that
      // Tags.of cannot reach; CloudFormation still gives them the stack's tags.
      const tagged = resources(template(lab)).filter(
        ([id, resource]) => !UNTAGGABLE.has(resource.Type) && !id.includes('CustomResourceProvider'),
      );
      expect(tagged.length).toBeGreaterThanOrEqual(20);
      for (const [id, resource] of tagged) expect(labTag(resource), `${lab}: ${id} (${resource.Type})`).toBe(lab);
      // The stack itself carries the tag too (CloudFormation propagates stack tags).
      expect(synth.labs[lab].stack.tags.tagValues()).toMatchObject({ [LAB_TAG]: lab });
    }
    expect(JSON.stringify(template('alpha').toJSON())).not.toEqual(JSON.stringify(template('beta').toJSON()));
    expect(JSON.stringify(template('alpha').toJSON())).not.toContain('"beta"');
  });

  it('declares the outputs without export names', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const outputs = (template(lab).toJSON() as { Outputs: Record<string, { Value: unknown; Export?: unknown }> })
        .Outputs;
      expect(Object.keys(outputs).sort()).toEqual([
        'ApiUrl',
        'BucketName',
        'DeadLetterQueueUrl',
        'QueueUrl',
        'ResultsBucketName',
        'TableName',
      ]);
      expect(outputs.BucketName.Value).toEqual(ref(i.bucket));
      expect(outputs.ResultsBucketName.Value).toEqual(ref(i.resultsBucket));
      expect(outputs.TableName.Value).toEqual(ref(i.table));
      expect(outputs.QueueUrl.Value).toEqual(ref(i.queue));
      expect(outputs.DeadLetterQueueUrl.Value).toEqual(ref(i.dlq));
      // The $default stage's URL: https://API-ID.execute-api.REGION.amazonaws.com/
      expect(outputs.ApiUrl.Value).toEqual({
        'Fn::Join': [
          '',
          ['https://', ref(i.api), '.execute-api.', ref('AWS::Region'), '.', ref('AWS::URLSuffix'), '/'],
        ],
      });
      for (const output of Object.values(outputs)) expect(output.Export).toBeUndefined();
    }
  });
});

describe('results bucket', () => {
  it('is private, SSE-S3 encrypted, unversioned, logs access to the logs bucket and aborts unfinished uploads after a day', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const bucket = props(lab, i.resultsBucket);
      expect(bucket.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(
        bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm,
      ).toBe('AES256');
      expect(bucket.VersioningConfiguration).toBeUndefined();
      expect(bucket.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
      expect(bucket.LoggingConfiguration.DestinationBucketName).toEqual(ref(i.logsBucket));
      expect(bucket.LifecycleConfiguration.Rules).toEqual([
        {
          Id: 'abort-incomplete-uploads',
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          Status: 'Enabled',
        },
      ]);
    }
  });

  it('sends no event notifications: what the pipeline writes is never an upload', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      expect(props(lab, i.resultsBucket).NotificationConfiguration).toBeUndefined();
      for (const [, notifications] of resources(template(lab), 'Custom::S3BucketNotifications'))
        expect(notifications.Properties!.BucketName).not.toEqual(ref(i.resultsBucket));
    }
  });

  it('follows retainData like the table: retained by default, deleted and emptied otherwise', () => {
    const resource = (lab: string) =>
      (template(lab).toJSON() as { Resources: Record<string, CfnResource & { DeletionPolicy?: string }> }).Resources[
        ids(lab).resultsBucket
      ]!;
    expect(resource('alpha').DeletionPolicy).toBe('Retain');
    expect(resource('beta').DeletionPolicy).toBe('Delete');
    template('beta').hasResourceProperties('Custom::S3AutoDeleteObjects', {
      BucketName: ref(ids('beta').resultsBucket),
    });
  });
});

describe('drop bucket', () => {
  it('is private, encrypted, versioned and logs access to the separate logs bucket', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const bucket = props(lab, i.bucket);
      expect(bucket.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(
        bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm,
      ).toMatch(/^(AES256|aws:kms)$/);
      expect(bucket.VersioningConfiguration).toEqual({ Status: 'Enabled' });
      expect(bucket.LoggingConfiguration.DestinationBucketName).toEqual(ref(i.logsBucket));
      expect(bucket.LoggingConfiguration.DestinationBucketName).not.toEqual(ref(i.bucket));
    }
  });

  it('expires noncurrent versions after noncurrentVersionDays', () => {
    const rule = (lab: string) =>
      props(lab, ids(lab).bucket).LifecycleConfiguration.Rules.find(
        (r: Record<string, unknown>) => r.NoncurrentVersionExpiration,
      );
    expect(rule('alpha')).toMatchObject({
      Status: 'Enabled',
      NoncurrentVersionExpiration: { NoncurrentDays: LAB_DEFAULTS.noncurrentVersionDays },
    });
    expect(rule('beta')).toMatchObject({ Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: 30 } });
    // Current versions never expire: nothing a user uploaded is deleted by the stack.
    for (const lab of ['alpha', 'beta']) {
      for (const r of props(lab, ids(lab).bucket).LifecycleConfiguration.Rules)
        expect(r.ExpirationInDays).toBeUndefined();
    }
  });

  it('is retained with the stack when retainData (the default), deleted and emptied otherwise', () => {
    template('alpha').hasResource('AWS::S3::Bucket', {
      Properties: Match.objectLike({ VersioningConfiguration: { Status: 'Enabled' } }),
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    template('beta').hasResource('AWS::S3::Bucket', {
      Properties: Match.objectLike({ VersioningConfiguration: { Status: 'Enabled' } }),
      DeletionPolicy: 'Delete',
    });
    template('beta').hasResourceProperties('Custom::S3AutoDeleteObjects', { BucketName: ref(ids('beta').bucket) });
  });

  it('denies every request without TLS on both buckets', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      for (const bucketId of [i.bucket, i.logsBucket]) {
        const [, policy] = only(
          template(lab),
          'AWS::S3::BucketPolicy',
          (r) => JSON.stringify(r.Properties?.Bucket) === JSON.stringify(ref(bucketId)),
        );
        expect(policy.Properties!.PolicyDocument.Statement).toContainEqual({
          Action: 's3:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Resource: [getAtt(bucketId, 'Arn'), { 'Fn::Join': ['', [getAtt(bucketId, 'Arn'), '/*']] }],
        });
      }
    }
  });

  it('has a logs bucket that is private, SSE-S3 encrypted and writable by S3 log delivery only from the drop bucket', () => {
    const i = ids('alpha');
    const logs = props('alpha', i.logsBucket);
    expect(logs.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(logs.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe(
      'AES256',
    );
    const [, policy] = only(
      template('alpha'),
      'AWS::S3::BucketPolicy',
      (r) => JSON.stringify(r.Properties?.Bucket) === JSON.stringify(ref(i.logsBucket)),
    );
    expect(policy.Properties!.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'logging.s3.amazonaws.com' },
        Action: 's3:PutObject',
        Condition: expect.objectContaining({ ArnLike: { 'aws:SourceArn': getAtt(i.bucket, 'Arn') } }),
      }),
    );
  });

  it('sends ObjectCreated and ObjectRemoved events to the ingest queue', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      template(lab).hasResourceProperties('Custom::S3BucketNotifications', {
        BucketName: ref(i.bucket),
        NotificationConfiguration: {
          QueueConfigurations: Match.arrayEquals([
            { Events: ['s3:ObjectCreated:*'], QueueArn: getAtt(i.queue, 'Arn') },
            { Events: ['s3:ObjectRemoved:*'], QueueArn: getAtt(i.queue, 'Arn') },
          ]),
        },
      });
    }
  });
});

describe('queues', () => {
  it('encrypts both queues and accepts only TLS requests', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      for (const queueId of [i.queue, i.dlq]) {
        expect(props(lab, queueId).SqsManagedSseEnabled ?? props(lab, queueId).KmsMasterKeyId).toBeTruthy();
        const [, policy] = only(
          template(lab),
          'AWS::SQS::QueuePolicy',
          (r) => JSON.stringify(r.Properties?.Queues) === JSON.stringify([ref(queueId)]),
        );
        expect(policy.Properties!.PolicyDocument.Statement).toContainEqual({
          Action: 'sqs:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Resource: getAtt(queueId, 'Arn'),
        });
      }
    }
  });

  it('lets only the drop bucket, in this account, send to the ingest queue; nothing may send to the dead-letter queue', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const allowsOf = (queueId: string) => {
        const [, policy] = only(
          template(lab),
          'AWS::SQS::QueuePolicy',
          (r) => JSON.stringify(r.Properties?.Queues) === JSON.stringify([ref(queueId)]),
        );
        return policy.Properties!.PolicyDocument.Statement.filter((s: { Effect: string }) => s.Effect === 'Allow');
      };
      // A bucket ARN names no account: the account condition keeps a same-named bucket elsewhere out.
      expect(allowsOf(i.queue)).toEqual([
        expect.objectContaining({
          Principal: { Service: 's3.amazonaws.com' },
          Action: expect.arrayContaining(['sqs:SendMessage']),
          Condition: {
            ArnLike: { 'aws:SourceArn': getAtt(i.bucket, 'Arn') },
            StringEquals: { 'aws:SourceAccount': ref('AWS::AccountId') },
          },
          Resource: getAtt(i.queue, 'Arn'),
        }),
      ]);
      expect(allowsOf(i.dlq)).toEqual([]);
    }
  });

  it('redrives to the dead-letter queue after 3-5 receives, with a visibility timeout of at least 6x the function timeout', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const queue = props(lab, i.queue);
      expect(queue.RedrivePolicy.deadLetterTargetArn).toEqual(getAtt(i.dlq, 'Arn'));
      expect(queue.RedrivePolicy.maxReceiveCount).toBeGreaterThanOrEqual(3);
      expect(queue.RedrivePolicy.maxReceiveCount).toBeLessThanOrEqual(5);
      const functionTimeout = props(lab, i.ingest).Timeout as number;
      expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * functionTimeout);
      expect(queue.RedrivePolicy.maxReceiveCount).toBe(INGEST_LIMITS.maxReceiveCount);
      expect(functionTimeout).toBe(INGEST_LIMITS.timeoutSeconds);
      // The DLQ keeps messages as long as SQS allows, and its reader gets the same margin.
      expect(props(lab, i.dlq).MessageRetentionPeriod).toBe(14 * 24 * 3600);
      expect(props(lab, i.dlq).RedrivePolicy).toBeUndefined();
      expect(props(lab, i.dlq).VisibilityTimeout).toBeGreaterThanOrEqual(
        6 * (props(lab, i.deadLetter).Timeout as number),
      );
    }
  });
});

describe('ingest function', () => {
  it('runs on arm64 with the newest Node.js runtime the CDK knows, 1024 MB, 5 minutes', () => {
    const newestNode = lambda.Runtime.ALL.filter((r) => /^nodejs\d+\.x$/.test(r.name))
      .map((r) => r.name)
      .sort((a, b) => Number.parseInt(a.slice(6), 10) - Number.parseInt(b.slice(6), 10))
      .pop();
    for (const lab of ['alpha', 'beta']) {
      const fn = props(lab, ids(lab).ingest);
      expect(fn.Architectures).toEqual(['arm64']);
      expect(fn.Runtime).toBe(newestNode);
      expect(['nodejs22.x', 'nodejs24.x']).toContain(fn.Runtime);
      expect(fn.MemorySize).toBe(3584);
      expect(fn.Timeout).toBe(300);
      expect(fn.Handler).toBe('index.handler');
      expect(fn.LoggingConfig.LogGroup).toEqual(ref(ids(lab).logGroup));
    }
  });

  it('gets the table, bucket, size and series limits, its queue, lab and Powertools settings in its environment', () => {
    for (const [lab, maxUploadMB, maxSeriesPerFile] of [
      ['alpha', LAB_DEFAULTS.maxUploadMB, LAB_DEFAULTS.maxSeriesPerFile],
      ['beta', 200, 5000],
    ] as const) {
      const i = ids(lab);
      expect(props(lab, i.ingest).Environment.Variables).toEqual({
        [ENV.tableName]: ref(i.table),
        [ENV.bucketName]: ref(i.bucket),
        [ENV.resultsBucket]: ref(i.resultsBucket),
        [ENV.maxUploadBytes]: String(maxUploadMB * MB),
        [ENV.maxSeriesPerFile]: String(maxSeriesPerFile),
        // Its own queue, for the continuation messages it sends itself.
        [ENV.queueUrl]: ref(i.queue),
        [ENV.lab]: lab,
        POWERTOOLS_SERVICE_NAME: 'benchdrop-ingest',
        POWERTOOLS_METRICS_NAMESPACE: 'Benchdrop',
        POWERTOOLS_LOG_LEVEL: 'INFO',
      });
      // Emulator endpoints are for the local lab only.
      expect(props(lab, i.ingest).Environment.Variables[ENV.s3Endpoint]).toBeUndefined();
    }
  });

  it('reads the queue in batches of 10 with partial batch failures', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      template(lab).hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: getAtt(i.queue, 'Arn'),
        FunctionName: ref(i.ingest),
        BatchSize: 10,
        MaximumBatchingWindowInSeconds: INGEST.maxBatchingWindow.toSeconds(),
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      expect(INGEST.maxBatchingWindow.toSeconds()).toBeGreaterThan(0);
    }
  });

  it('has least privilege: object reads, table writes, byDevice queries, its own queue and log group, nothing unused', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const a = arns(lab);
      const role = props(lab, i.role);
      expect(role.ManagedPolicyArns).toBeUndefined();
      expect(role.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
      expect(grantsOf(lab, i.role)).toEqual({
        // Listing only turns a vanished key into NoSuchKey rather than AccessDenied.
        [a.bucket]: ['s3:ListBucket'],
        [a.objects]: ['s3:GetObject', 's3:GetObjectVersion'],
        [a.table]: WRITER_ITEM_ACTIONS,
        [a.index('byDevice')]: ['dynamodb:Query'],
        // Writing samples objects (a multipart upload, aborted on failure), deleting those of removed runs.
        [a.samples]: ['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:PutObject'],
        // Consuming its queue (the event source), and sending continuations to it: to no other queue.
        [a.queue]: [...CONSUMER_ACTIONS, 'sqs:SendMessage'].sort(),
        ...logGrants(lab, i.logGroup),
      });
      // Found in review: granted, and sent by nothing in shared/ or functions/ (test/infra/least-privilege.test.ts).
      const all = Object.values(grantsOf(lab, i.role)).flat();
      for (const unused of [
        'dynamodb:ConditionCheckItem',
        'dynamodb:BatchGetItem',
        's3:GetObjectTagging',
        's3:GetObjectVersionTagging',
      ])
        expect(all).not.toContain(unused);
    }
  });
});

describe('HTTP API', () => {
  const routes = (lab: string) => resources(template(lab), 'AWS::ApiGatewayV2::Route');

  it('has exactly the routes of shared/api.ts ROUTES, each with IAM authorisation, and no $default route', () => {
    for (const lab of ['alpha', 'beta']) {
      const all = routes(lab);
      expect(all.map(([, r]) => r.Properties!.RouteKey).sort()).toEqual(Object.values(ROUTES).sort());
      for (const [id, route] of all) {
        expect(route.Properties!.AuthorizationType, `${lab}: ${id}`).toBe('AWS_IAM');
        expect(route.Properties!.ApiId).toEqual(ref(ids(lab).api));
        expect(route.Properties!.AuthorizerId).toBeUndefined();
      }
      expect(all.map(([, r]) => r.Properties!.RouteKey)).not.toContain('$default');
    }
  });

  it('sends every route to the API function through one Lambda proxy integration (payload 2.0)', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const [integrationId, integration] = only(template(lab), 'AWS::ApiGatewayV2::Integration');
      expect(integration.Properties).toEqual({
        ApiId: ref(i.api),
        IntegrationType: 'AWS_PROXY',
        IntegrationUri: getAtt(i.apiFunction, 'Arn'),
        PayloadFormatVersion: '2.0',
      });
      for (const [, route] of routes(lab))
        expect(route.Properties!.Target).toEqual({ 'Fn::Join': ['', ['integrations/', ref(integrationId)]] });
    }
  });

  it("lets API Gateway invoke the function only through this API's routes", () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      // The one other permission is the sweeper's schedule (see 'sweeper function').
      const permissions = resources(template(lab), 'AWS::Lambda::Permission').filter(
        ([, p]) => p.Properties!.Principal !== 'events.amazonaws.com',
      );
      expect(permissions).toHaveLength(Object.keys(ROUTES).length);
      const paths = new Set(Object.values(ROUTES).map((key) => parseRouteKey(key).path));
      for (const [id, permission] of permissions) {
        const p = permission.Properties!;
        expect(p.Action, id).toBe('lambda:InvokeFunction');
        expect(p.Principal).toBe('apigateway.amazonaws.com');
        expect(p.FunctionName).toEqual(getAtt(i.apiFunction, 'Arn'));
        const parts = p.SourceArn['Fn::Join'][1];
        expect(parts.slice(0, 8)).toEqual([
          'arn:',
          ref('AWS::Partition'),
          ':execute-api:',
          ref('AWS::Region'),
          ':',
          ref('AWS::AccountId'),
          ':',
          ref(i.api),
        ]);
        expect(parts).toHaveLength(9);
        const [, stageAndMethod, path] = /^\/(\*\/\*)(\/.*)$/.exec(parts[8]) ?? [];
        expect(stageAndMethod, parts[8]).toBe('*/*');
        expect(paths).toContain(path);
      }
    }
  });

  it('is a plain HTTP API named after the lab, without CORS', () => {
    for (const lab of ['alpha', 'beta']) {
      const api = props(lab, ids(lab).api);
      expect(api.ProtocolType).toBe('HTTP');
      expect(api.Name).toBe(`benchdrop-${lab}`);
      expect(api.CorsConfiguration).toBeUndefined();
      expect(api.Target).toBeUndefined(); // no quick-create $default route
      expect(api.DisableExecuteApiEndpoint).toBeUndefined();
    }
  });

  it('deploys the $default stage automatically, throttled by apiRateLimit and apiBurstLimit', () => {
    for (const [lab, rate, burst] of [
      ['alpha', API_DEFAULTS.apiRateLimit, API_DEFAULTS.apiBurstLimit],
      ['beta', 20, 40],
    ] as const) {
      const [, stage] = only(template(lab), 'AWS::ApiGatewayV2::Stage');
      expect(stage.Properties!.ApiId).toEqual(ref(ids(lab).api));
      expect(stage.Properties!.StageName).toBe('$default');
      expect(stage.Properties!.AutoDeploy).toBe(true);
      expect(stage.Properties!.DefaultRouteSettings).toEqual({
        ThrottlingRateLimit: rate,
        ThrottlingBurstLimit: burst,
      });
      expect(stage.Properties!.RouteSettings).toBeUndefined(); // no route escapes the stage limits
    }
    expect(API_DEFAULTS).toEqual({ apiRateLimit: 50, apiBurstLimit: 100 });
  });

  it('writes a JSON access log line per request to its own log group, kept a year', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const { AccessLogSettings } = props(lab, i.stage);
      expect(AccessLogSettings.DestinationArn).toEqual(getAtt(i.accessLogs, 'Arn'));
      expect(props(lab, i.accessLogs).RetentionInDays).toBe(365);

      // Substitute what API Gateway would: a value for each quoted variable, a quoted
      // and escaped string for messageString. The line must be one JSON object.
      const format: string = AccessLogSettings.Format;
      expect(format).not.toContain('\n');
      const line = format
        .replace('$context.error.messageString', JSON.stringify('User: "x" is not authorized'))
        .replace(/\$context\.[A-Za-z.]+/g, 'v');
      const entry = JSON.parse(line) as Record<string, string>;
      expect(Object.keys(entry)).toEqual([...Object.keys(API_ACCESS_LOG_FIELDS), 'error']);
      expect(entry.error).toBe('User: "x" is not authorized');
      expect(API_ACCESS_LOG_FIELDS).toMatchObject({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        caller: '$context.identity.userArn',
        routeKey: '$context.routeKey',
        status: '$context.status',
        latency: '$context.responseLatency',
        integrationError: '$context.integrationErrorMessage',
      });
      for (const [name, variable] of Object.entries(API_ACCESS_LOG_FIELDS))
        expect(format).toContain(`"${name}":"${variable}"`);
    }
    // The access log group is retained with the data, like the function logs.
    template('alpha').hasResource('AWS::Logs::LogGroup', {
      Properties: { RetentionInDays: 365, Tags: Match.anyValue() },
      DeletionPolicy: 'Retain',
    });
    template('beta').hasResource('AWS::Logs::LogGroup', {
      Properties: { RetentionInDays: 365, Tags: Match.anyValue() },
      DeletionPolicy: 'Delete',
    });
  });

  it('reads route keys as one method and a path', () => {
    expect(parseRouteKey('GET /runs/{id}')).toEqual({ method: 'GET', path: '/runs/{id}' });
    expect(parseRouteKey('POST /uploads')).toEqual({ method: 'POST', path: '/uploads' });
    for (const bad of ['$default', 'GET', 'GET runs', 'FETCH /runs', 'ANY /runs', 'GET /runs extra'])
      expect(() => parseRouteKey(bad), bad).toThrow(/not a route key/);
  });
});

describe('API function', () => {
  it('runs like the ingest function (arm64, same runtime, bundled ESM) with 512 MB and 10 seconds', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const fn = props(lab, i.apiFunction);
      expect(fn.Architectures).toEqual(['arm64']);
      expect(fn.Runtime).toBe(props(lab, i.ingest).Runtime);
      expect(fn.MemorySize).toBe(512);
      expect(fn.Timeout).toBe(10);
      expect(API.timeout.toSeconds()).toBe(10);
      expect(fn.Handler).toBe('index.handler');
      expect(fn.Role).toEqual(getAtt(i.apiRole, 'Arn'));
      expect(fn.LoggingConfig.LogGroup).toEqual(ref(i.apiLogs));
      expect(props(lab, i.apiLogs).RetentionInDays).toBe(props(lab, i.logGroup).RetentionInDays);
    }
  });

  it('gets the table, bucket, size limit, lab and its Powertools service name in its environment', () => {
    for (const [lab, maxUploadMB] of [
      ['alpha', LAB_DEFAULTS.maxUploadMB],
      ['beta', 200],
    ] as const) {
      const i = ids(lab);
      expect(props(lab, i.apiFunction).Environment.Variables).toEqual({
        [ENV.tableName]: ref(i.table),
        [ENV.bucketName]: ref(i.bucket),
        [ENV.resultsBucket]: ref(i.resultsBucket),
        [ENV.maxUploadBytes]: String(maxUploadMB * MB),
        [ENV.lab]: lab,
        POWERTOOLS_SERVICE_NAME: 'benchdrop-api',
        POWERTOOLS_METRICS_NAMESPACE: 'Benchdrop',
        POWERTOOLS_LOG_LEVEL: 'INFO',
      });
    }
  });

  it("has least privilege: table and index reads (no Scan, no writes), PutObject on the bucket's objects, its own log group", () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const role = props(lab, i.apiRole);
      expect(role.ManagedPolicyArns).toBeUndefined();
      expect(role.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
      const policies = resources(template(lab), 'AWS::IAM::Policy').filter(([, p]) =>
        asArray(p.Properties!.Roles).some((r) => JSON.stringify(r) === JSON.stringify(ref(i.apiRole))),
      );
      expect(policies).toHaveLength(1);
      expect(policies[0][1].Properties!.Roles).toEqual([ref(i.apiRole)]);
      const statements: { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown }[] =
        policies[0][1].Properties!.PolicyDocument.Statement;

      const join = (...parts: unknown[]) => JSON.stringify({ 'Fn::Join': ['', parts] });
      const results = logicalId(lab, synth.labs[lab].stack.resultsBucket);
      const allowed = new Map<string, RegExp>([
        [JSON.stringify(getAtt(i.table, 'Arn')), /^dynamodb:(BatchGetItem|GetItem|Query)$/],
        ...Object.values(INDEXES).map(
          (index) => [join(getAtt(i.table, 'Arn'), `/index/${index.name}`), /^dynamodb:Query$/] as [string, RegExp],
        ),
        [join(getAtt(i.bucket, 'Arn'), '/*'), /^s3:PutObject$/],
        // GET /runs/{id}/samples reads samples objects; frozen reports are read and written.
        [join(getAtt(results, 'Arn'), '/samples/*'), /^s3:GetObject$/],
        [join(getAtt(results, 'Arn'), '/reports/*'), /^s3:(GetObject|PutObject)$/],
        [JSON.stringify(getAtt(i.apiLogs, 'Arn')), /^logs:(CreateLogStream|PutLogEvents)$/],
        [
          join(
            'arn:',
            ref('AWS::Partition'),
            ':logs:',
            ref('AWS::Region'),
            ':',
            ref('AWS::AccountId'),
            ':log-group:',
            ref(i.apiLogs),
          ),
          /^logs:(CreateLogStream|PutLogEvents)$/,
        ],
      ]);
      const granted = new Map<string, Set<string>>();
      const actions: string[] = [];
      for (const statement of statements) {
        expect(statement.Effect).toBe('Allow');
        for (const resource of asArray(statement.Resource)) {
          const key = JSON.stringify(resource);
          expect(key, 'a resource outside the lab').not.toBe('"*"');
          const pattern = allowed.get(key);
          expect(pattern, `unexpected resource ${key}`).toBeDefined();
          for (const action of asArray(statement.Action)) {
            expect(action).not.toContain('*');
            expect(action, `${action} on ${key}`).toMatch(pattern!);
            actions.push(action);
            if (!granted.has(key)) granted.set(key, new Set());
            granted.get(key)!.add(action);
          }
        }
      }
      // Spelled out, whatever the patterns above allow: reads only.
      const WRITES =
        /^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem|ConditionCheckItem|TransactWriteItems|PartiQL\w+|Scan|\w*Table\w*)$/;
      expect(actions.filter((action) => WRITES.test(action))).toEqual([]);
      expect(actions.filter((action) => action.startsWith('s3:')).sort()).toEqual([
        's3:GetObject',
        's3:GetObject',
        's3:PutObject',
        's3:PutObject',
      ]);
      // What the handler needs is there.
      expect([...granted.get(JSON.stringify(getAtt(i.table, 'Arn')))!].sort()).toEqual([
        'dynamodb:BatchGetItem',
        'dynamodb:GetItem',
        'dynamodb:Query',
      ]);
      for (const index of Object.values(INDEXES))
        expect([...granted.get(join(getAtt(i.table, 'Arn'), `/index/${index.name}`))!]).toEqual(['dynamodb:Query']);
      expect([...granted.get(join(getAtt(i.bucket, 'Arn'), '/*'))!]).toEqual(['s3:PutObject']);
    }
  });
});

describe('every function of the lab', () => {
  it('runs alike: arm64, one runtime, bundled ESM handler, its own role and log group kept as long, no X-Ray tracing', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const ingest = props(lab, i.ingest);
      const roles = new Set<string>();
      const logGroups = new Set<string>();
      for (const name of FUNCTIONS) {
        const fn = props(lab, i[name]);
        expect(fn.Architectures, name).toEqual(['arm64']);
        expect(fn.Runtime, name).toBe(ingest.Runtime);
        expect(fn.Handler, name).toBe('index.handler');
        // Tracing as the existing functions have it: off everywhere, so no function pays for X-Ray alone.
        expect(fn.TracingConfig, name).toBeUndefined();
        expect(props(lab, fn.LoggingConfig.LogGroup.Ref).RetentionInDays, name).toBe(
          props(lab, i.logGroup).RetentionInDays,
        );
        roles.add(JSON.stringify(fn.Role));
        logGroups.add(JSON.stringify(fn.LoggingConfig.LogGroup));
      }
      expect(roles.size).toBe(FUNCTIONS.length);
      expect(logGroups.size).toBe(FUNCTIONS.length);
      expect(props(lab, i.logGroup).RetentionInDays).toBe(90);
    }
  });
});

describe('dead-letter function', () => {
  it('reads the dead-letter queue in batches with partial batch failures, at most 2 at a time, with the ingest timeout', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const fn = props(lab, i.deadLetter);
      expect(fn.Timeout).toBe(INGEST_LIMITS.timeoutSeconds);
      expect(fn.MemorySize).toBe(DEAD_LETTER.memoryMB);
      expect(fn.LoggingConfig.LogGroup).toEqual(ref(i.deadLetterLogs));
      const [, mapping] = only(
        template(lab),
        'AWS::Lambda::EventSourceMapping',
        (r) => JSON.stringify(r.Properties?.FunctionName) === JSON.stringify(ref(i.deadLetter)),
      );
      expect(mapping.Properties).toMatchObject({
        EventSourceArn: getAtt(i.dlq, 'Arn'),
        BatchSize: DEAD_LETTER.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 2 },
      });
      // A message it fails comes back after the queue's visibility timeout, which the DLQ alarm waits for.
      expect(props(lab, i.dlq).VisibilityTimeout).toBe(DEAD_LETTER_VISIBILITY.toSeconds());
    }
  });

  it('gets the table, the results bucket, the lab and its Powertools service name in its environment, and nothing of the drop bucket', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      expect(props(lab, i.deadLetter).Environment.Variables).toEqual({
        [ENV.tableName]: ref(i.table),
        [ENV.resultsBucket]: ref(i.resultsBucket),
        [ENV.lab]: lab,
        POWERTOOLS_SERVICE_NAME: DEAD_LETTER_METRICS.service,
        POWERTOOLS_METRICS_NAMESPACE: DEAD_LETTER_METRICS.namespace,
        POWERTOOLS_LOG_LEVEL: 'INFO',
      });
    }
  });

  it("has least privilege: the table as ending an upload needs it, deleting removed runs' samples objects, consuming the dead-letter queue, its own log group", () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const a = arns(lab);
      expect(props(lab, i.deadLetterRole).ManagedPolicyArns).toBeUndefined();
      expect(grantsOf(lab, i.deadLetterRole)).toEqual({
        [a.table]: WRITER_ITEM_ACTIONS,
        [a.index('byDevice')]: ['dynamodb:Query'],
        [a.samples]: ['s3:DeleteObject'],
        [a.dlq]: CONSUMER_ACTIONS,
        ...logGrants(lab, i.deadLetterLogs),
      });
    }
  });
});

describe('sweeper function', () => {
  it('runs every 5 minutes from an EventBridge rule, without retries, so that runs never overlap', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const rule = props(lab, i.schedule);
      expect(rule.ScheduleExpression).toBe('rate(5 minutes)');
      expect(rule.State).toBe('ENABLED');
      expect(rule.Targets).toEqual([
        {
          Arn: getAtt(i.sweeper, 'Arn'),
          Id: 'Target0',
          RetryPolicy: { MaximumEventAgeInSeconds: 60, MaximumRetryAttempts: 0 },
        },
      ]);
      const [, config] = only(template(lab), 'AWS::Lambda::EventInvokeConfig');
      expect(config.Properties).toEqual({
        FunctionName: ref(i.sweeper),
        Qualifier: '$LATEST',
        MaximumRetryAttempts: 0,
        MaximumEventAgeInSeconds: 60,
      });
      // Late at EventBridge, late in Lambda's queue, then its whole timeout: still before the next run.
      const fn = props(lab, i.sweeper);
      expect(fn.Timeout).toBe(SWEEPER.timeout.toSeconds());
      expect(2 * 60 + fn.Timeout).toBeLessThan(SWEEPER.every.toSeconds());
      expect(fn.MemorySize).toBe(SWEEPER.memoryMB);
      expect(fn.LoggingConfig.LogGroup).toEqual(ref(i.sweeperLogs));
    }
  });

  it('may be invoked by EventBridge for its own rule only', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const [, permission] = only(
        template(lab),
        'AWS::Lambda::Permission',
        (r) => r.Properties?.Principal === 'events.amazonaws.com',
      );
      expect(permission.Properties).toEqual({
        Action: 'lambda:InvokeFunction',
        FunctionName: getAtt(i.sweeper, 'Arn'),
        Principal: 'events.amazonaws.com',
        SourceArn: getAtt(i.schedule, 'Arn'),
      });
    }
  });

  it('gets the table, the results bucket, the lab and its Powertools service name in its environment', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      expect(props(lab, i.sweeper).Environment.Variables).toEqual({
        [ENV.tableName]: ref(i.table),
        [ENV.resultsBucket]: ref(i.resultsBucket),
        [ENV.lab]: lab,
        POWERTOOLS_SERVICE_NAME: SWEEPER_METRICS.service,
        POWERTOOLS_METRICS_NAMESPACE: SWEEPER_METRICS.namespace,
        POWERTOOLS_LOG_LEVEL: 'INFO',
      });
    }
  });

  it("has least privilege: processing records by status, the table as ending an upload needs it, deleting removed runs' samples objects, its own log group; no queue, no drop bucket", () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const a = arns(lab);
      expect(props(lab, i.sweeperRole).ManagedPolicyArns).toBeUndefined();
      expect(grantsOf(lab, i.sweeperRole)).toEqual({
        [a.table]: WRITER_ITEM_ACTIONS,
        [a.index('byStatus')]: ['dynamodb:Query'],
        [a.index('byDevice')]: ['dynamodb:Query'],
        [a.samples]: ['s3:DeleteObject'],
        ...logGrants(lab, i.sweeperLogs),
      });
    }
  });
});

describe('table', () => {
  it('has exactly the keys and indexes of shared/store/table.ts, all strings, projection ALL', () => {
    const expected = createTableInput('unused');
    const byName = <T extends { AttributeName?: string; IndexName?: string }>(list: T[]) =>
      [...list].sort((a, b) =>
        String(a.AttributeName ?? a.IndexName).localeCompare(String(b.AttributeName ?? b.IndexName)),
      );
    for (const lab of ['alpha', 'beta']) {
      const table = props(lab, ids(lab).table);
      expect(table.KeySchema).toEqual(expected.KeySchema);
      expect(byName(table.AttributeDefinitions)).toEqual(byName(expected.AttributeDefinitions!));
      for (const attribute of table.AttributeDefinitions) expect(attribute.AttributeType).toBe('S');
      expect(byName(table.GlobalSecondaryIndexes)).toEqual(byName(expected.GlobalSecondaryIndexes!));
      expect(table.BillingMode).toBe(expected.BillingMode);
    }
  });

  it('is a plain on-demand table with point-in-time recovery and AWS managed encryption', () => {
    for (const lab of ['alpha', 'beta']) {
      template(lab).resourceCountIs('AWS::DynamoDB::GlobalTable', 0);
      const table = props(lab, ids(lab).table);
      expect(table.BillingMode).toBe('PAY_PER_REQUEST');
      expect(table.ProvisionedThroughput).toBeUndefined();
      expect(table.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      // SSEEnabled with no key: the AWS managed key aws/dynamodb.
      expect(table.SSESpecification).toEqual({ SSEEnabled: true });
    }
  });

  it('follows retainData and deletionProtection', () => {
    template('alpha').hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({ DeletionProtectionEnabled: true }),
    });
    template('beta').hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({ DeletionProtectionEnabled: false }),
    });
  });
});

describe('alarms', () => {
  const alarm = (lab: string, metricName: string, pick: (alarm: CfnResource) => boolean = () => true) =>
    only(template(lab), 'AWS::CloudWatch::Alarm', (r) => r.Properties?.MetricName === metricName && pick(r))[1]
      .Properties!;
  const ofFunction = (id: string) => (r: CfnResource) =>
    JSON.stringify(r.Properties?.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: ref(id) }]);
  const ofQueue = (id: string) => (r: CfnResource) =>
    JSON.stringify(r.Properties?.Dimensions) ===
    JSON.stringify([{ Name: 'QueueName', Value: getAtt(id, 'QueueName') }]);
  /** Dimensions of a metric sent by one of the lab's functions: Powertools' service, and the lab. */
  const ofLabFunction = (service: string, lab: string) => [
    { Name: 'lab', Value: lab },
    { Name: 'service', Value: service },
  ];
  const overOnePeriod = {
    Period: 300,
    EvaluationPeriods: 1,
    DatapointsToAlarm: 1,
    ComparisonOperator: 'GreaterThanThreshold',
    TreatMissingData: 'notBreaching',
  };

  it('fire on any dead letter, counted by the dead-letter function that consumes it, for this lab only', () => {
    for (const lab of ['alpha', 'beta']) {
      const found = alarm(lab, DEAD_LETTER_METRICS.deadLetters);
      expect(found).toMatchObject({ Namespace: 'Benchdrop', Statistic: 'Sum', Threshold: 0, ...overOnePeriod });
      expect(
        [...found.Dimensions].sort((x: { Name: string }, y: { Name: string }) => x.Name.localeCompare(y.Name)),
      ).toEqual(ofLabFunction(DEAD_LETTER_METRICS.service, lab));
      expect(found.AlarmDescription).toContain('UploadsDeadLettered');
    }
  });

  it("fire while a dead letter keeps failing: any failed attempt within a window longer than the queue's visibility timeout", () => {
    for (const lab of ['alpha', 'beta']) {
      const found = alarm(lab, DEAD_LETTER_METRICS.unsettled);
      expect(found).toMatchObject({
        Namespace: 'Benchdrop',
        Statistic: 'Sum',
        Threshold: 0,
        Period: 300,
        DatapointsToAlarm: 1,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
      });
      expect(
        [...found.Dimensions].sort((x: { Name: string }, y: { Name: string }) => x.Name.localeCompare(y.Name)),
      ).toEqual(ofLabFunction(DEAD_LETTER_METRICS.service, lab));
      // The next attempt comes a visibility timeout after the last: always inside the window, so no OK in between.
      expect(found.EvaluationPeriods * found.Period).toBeGreaterThan(props(lab, ids(lab).dlq).VisibilityTimeout);
      expect(found.EvaluationPeriods).toBe(7);
    }
  });

  it("fire on a dead letter older than the dead-letter queue's visibility timeout: one nothing reads", () => {
    for (const lab of ['alpha', 'beta']) {
      const found = alarm(lab, 'ApproximateAgeOfOldestMessage', ofQueue(ids(lab).dlq));
      expect(found).toMatchObject({
        Namespace: 'AWS/SQS',
        Statistic: 'Maximum',
        Threshold: props(lab, ids(lab).dlq).VisibilityTimeout,
        ...overOnePeriod,
      });
      expect(found.Threshold).toBe(1800);
      // Its old meaning (any message waiting) no longer holds: the function consumes them.
      expect(
        resources(template(lab), 'AWS::CloudWatch::Alarm').filter(
          ([, r]) => r.Properties?.MetricName === 'ApproximateNumberOfMessagesVisible',
        ),
      ).toEqual([]);
    }
  });

  it('fire on an ingest message older than the function timeout x receives (ALL_DELIVERIES_MS)', () => {
    expect(ALL_DELIVERIES_MS).toBe(INGEST_LIMITS.timeoutSeconds * INGEST_LIMITS.maxReceiveCount * 1000);
    for (const lab of ['alpha', 'beta']) {
      const found = alarm(lab, 'ApproximateAgeOfOldestMessage', ofQueue(ids(lab).queue));
      expect(found).toMatchObject({
        Namespace: 'AWS/SQS',
        Statistic: 'Maximum',
        Threshold: ALL_DELIVERIES_MS / 1000,
        ...overOnePeriod,
      });
      expect(found.Threshold).toBe(900);
      expect(found.AlarmDescription).toContain('15 minutes');
    }
  });

  it('fire when the sweeper finds processing records past their time, for this lab only', () => {
    for (const lab of ['alpha', 'beta']) {
      const found = alarm(lab, SWEEPER_METRICS.overdue);
      expect(found).toMatchObject({ Namespace: 'Benchdrop', Statistic: 'Sum', Threshold: 0, ...overOnePeriod });
      expect(
        [...found.Dimensions].sort((x: { Name: string }, y: { Name: string }) => x.Name.localeCompare(y.Name)),
      ).toEqual(ofLabFunction(SWEEPER_METRICS.service, lab));
      expect(found.AlarmDescription).toContain('processing records past their time');
    }
  });

  it('fire on any error of the dead-letter function or the sweeper', () => {
    for (const lab of ['alpha', 'beta']) {
      for (const fn of [ids(lab).deadLetter, ids(lab).sweeper]) {
        expect(alarm(lab, 'Errors', ofFunction(fn))).toMatchObject({
          Namespace: 'AWS/Lambda',
          Statistic: 'Sum',
          Threshold: 0,
          ...overOnePeriod,
        });
      }
    }
  });

  it('fire on any ingest function error or throttle', () => {
    for (const lab of ['alpha', 'beta']) {
      for (const metricName of ['Errors', 'Throttles']) {
        expect(alarm(lab, metricName, ofFunction(ids(lab).ingest))).toMatchObject({
          Namespace: 'AWS/Lambda',
          Dimensions: [{ Name: 'FunctionName', Value: ref(ids(lab).ingest) }],
          Statistic: 'Sum',
          ComparisonOperator: 'GreaterThanThreshold',
          Threshold: 0,
          TreatMissingData: 'notBreaching',
        });
      }
    }
  });

  it("notify the lab's SSL-only topic, which CloudWatch may publish to for these alarms only", () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const alarms = resources(template(lab), 'AWS::CloudWatch::Alarm');
      for (const [, a] of alarms) {
        expect(a.Properties!.AlarmActions).toEqual([ref(i.topic)]);
        expect(a.Properties!.OKActions).toEqual([ref(i.topic)]);
      }
      const [, policy] = only(template(lab), 'AWS::SNS::TopicPolicy');
      expect(policy.Properties!.Topics).toEqual([ref(i.topic)]);
      const statements = policy.Properties!.PolicyDocument.Statement;
      expect(statements).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sns:Publish',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
      const allow = statements.find((s: { Effect: string }) => s.Effect === 'Allow');
      expect(allow).toMatchObject({
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Resource: ref(i.topic),
      });
      expect(allow.Condition.ArnEquals['aws:SourceArn']).toEqual(
        expect.arrayContaining(alarms.map(([id]) => getAtt(id, 'Arn'))),
      );
      expect(allow.Condition.ArnEquals['aws:SourceArn']).toHaveLength(alarms.length);
    }
  });

  it("notify through a topic encrypted under the lab's own rotating key, which CloudWatch may use for this account's alarms only", () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      expect(props(lab, i.topic).KmsMasterKeyId).toEqual(getAtt(i.key, 'Arn'));
      const key = props(lab, i.key);
      expect(key.EnableKeyRotation).toBe(true);
      expect(key.KeySpec ?? 'SYMMETRIC_DEFAULT').toBe('SYMMETRIC_DEFAULT');
      expect(key.PendingWindowInDays).toBe(7);
      const statements: { Sid?: string; Principal: unknown; Action: string | string[]; Condition?: unknown }[] =
        key.KeyPolicy.Statement;
      expect(statements).toHaveLength(2);
      // KMS's default statement: the account administers the key through its IAM policies (no IAM policy of the lab names it).
      expect(statements).toContainEqual({
        Effect: 'Allow',
        Principal: {
          AWS: { 'Fn::Join': ['', ['arn:', ref('AWS::Partition'), ':iam::', ref('AWS::AccountId'), ':root']] },
        },
        Action: 'kms:*',
        Resource: '*',
      });
      const cloudwatch = statements.find(
        (s) => JSON.stringify(s.Principal) === JSON.stringify({ Service: 'cloudwatch.amazonaws.com' }),
      );
      expect(cloudwatch).toEqual({
        Sid: 'AllowAccountAlarms',
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        Resource: '*',
        Condition: {
          StringEquals: { 'aws:SourceAccount': ref('AWS::AccountId') },
          ArnLike: {
            'aws:SourceArn': {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  ref('AWS::Partition'),
                  ':cloudwatch:',
                  ref('AWS::Region'),
                  ':',
                  ref('AWS::AccountId'),
                  ':alarm:*',
                ],
              ],
            },
          },
        },
      });
    }
  });

  it('fire on any 5xx answer of the API and any API function error', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      expect(alarm(lab, '5xx')).toMatchObject({
        Namespace: 'AWS/ApiGateway',
        Dimensions: [{ Name: 'ApiId', Value: ref(i.api) }],
        Statistic: 'Sum',
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        TreatMissingData: 'notBreaching',
      });
      expect(alarm(lab, 'Errors', ofFunction(i.apiFunction))).toMatchObject({
        Namespace: 'AWS/Lambda',
        Statistic: 'Sum',
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it('e-mail alarmEmail when it is set', () => {
    template('beta').hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.org',
      TopicArn: ref(ids('beta').topic),
    });
  });
});

describe('security: every policy statement of the template', () => {
  interface Statement {
    Sid?: string;
    Effect: 'Allow' | 'Deny';
    Action?: string | string[];
    Resource?: unknown;
    Principal?: unknown;
    Condition?: Record<string, Record<string, unknown>>;
    [other: string]: unknown;
  }
  interface Located {
    where: string;
    /** `key`: a KMS key policy, whose Resource "*" means the key itself. */
    kind: 'identity' | 'resource' | 'key';
    /** The bucket, queue or topic a resource policy belongs to. */
    target?: unknown;
    statement: Statement;
  }

  const RESOURCE_POLICY_TARGET: Record<string, string> = {
    'AWS::S3::BucketPolicy': 'Bucket',
    'AWS::SQS::QueuePolicy': 'Queues',
    'AWS::SNS::TopicPolicy': 'Topics',
  };

  /** Every statement of every policy in a lab's template: identity policies (inline ones too) and resource policies. */
  function statementsOf(lab: string): Located[] {
    const out: Located[] = [];
    for (const [id, resource] of resources(template(lab))) {
      const p = resource.Properties ?? {};
      if (resource.Type === 'AWS::IAM::Policy' || resource.Type === 'AWS::IAM::ManagedPolicy') {
        for (const statement of p.PolicyDocument.Statement) out.push({ where: id, kind: 'identity', statement });
      } else if (resource.Type === 'AWS::IAM::Role') {
        for (const policy of p.Policies ?? [])
          for (const statement of policy.PolicyDocument.Statement)
            out.push({ where: `${id}/${policy.PolicyName}`, kind: 'identity', statement });
      } else if (RESOURCE_POLICY_TARGET[resource.Type]) {
        for (const statement of p.PolicyDocument.Statement)
          out.push({ where: id, kind: 'resource', target: p[RESOURCE_POLICY_TARGET[resource.Type]!], statement });
      } else if (resource.Type === 'AWS::KMS::Key') {
        for (const statement of p.KeyPolicy.Statement) out.push({ where: id, kind: 'key', target: ref(id), statement });
      } else {
        // A policy of a kind this test does not read would go unreviewed.
        expect(JSON.stringify(p), `${lab}: ${id} (${resource.Type}) holds a policy document`).not.toContain(
          '"Statement"',
        );
      }
    }
    return out;
  }

  /** Logical ids a value refers to (Ref, Fn::GetAtt, \${X} in Fn::Sub); pseudo parameters left out. */
  function referenced(value: unknown): string[] {
    const ids: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) return v.forEach(walk);
      if (v === null || typeof v !== 'object') return;
      for (const [key, inner] of Object.entries(v)) {
        if (key === 'Ref' && typeof inner === 'string') ids.push(inner);
        else if (key === 'Fn::GetAtt') ids.push((inner as string[])[0]!);
        else if (key === 'Fn::Sub' && typeof inner === 'string')
          ids.push(...[...inner.matchAll(/\$\{([^}.]+)/g)].map((m) => m[1]!));
        else walk(inner);
      }
    };
    walk(value);
    return ids.filter((id) => !id.startsWith('AWS::'));
  }

  /** CDK's own deploy-time handlers (bucket notifications; emptying buckets when retainData=false). */
  const CDK_PROVIDER_ROLE =
    /^(BucketNotificationsHandler[0-9a-f]{32}Role|CustomS3AutoDeleteObjectsCustomResourceProviderRole)[0-9A-F]{8}$/;
  /**
   * The only wildcard actions allowed, each named with its reason: CDK's auto-delete
   * provider (retainData=false only) lists and deletes every object version of the
   * lab's own buckets when the stack is deleted; the grant is a bucket policy statement
   * naming its role and the bucket, nothing else.
   */
  const AUTO_DELETE_ACTIONS = ['s3:DeleteObject*', 's3:GetBucket*', 's3:List*', 's3:PutBucketPolicy'];
  /** This account's root: KMS's default key policy statement names it (the account's IAM policies decide). */
  const ACCOUNT_ROOT = {
    AWS: { 'Fn::Join': ['', ['arn:', ref('AWS::Partition'), ':iam::', ref('AWS::AccountId'), ':root']] },
  };
  /**
   * The only key policy statements allowed, each named with its reason: KMS's default
   * (the account administers the key; `kms:*`, or the key could not be managed at all),
   * and CloudWatch's use of it for the account's alarms (`kms:GenerateDataKey*` is how
   * AWS names the data key calls publishing to an encrypted topic makes).
   */
  const KEY_STATEMENTS: { principal: unknown; actions: string[] }[] = [
    { principal: ACCOUNT_ROOT, actions: ['kms:*'] },
    { principal: { Service: 'cloudwatch.amazonaws.com' }, actions: ['kms:Decrypt', 'kms:GenerateDataKey*'] },
  ];
  /** What a lab's policies may grant on: its own data, queues, logs and alarm topic. */
  const GRANTABLE = new Set([
    'AWS::S3::Bucket',
    'AWS::DynamoDB::Table',
    'AWS::SQS::Queue',
    'AWS::Logs::LogGroup',
    'AWS::SNS::Topic',
  ]);
  /** AWS services a resource policy lets in, each only for this lab's own source (aws:SourceArn) in this account (aws:SourceAccount). */
  const SERVICES: Record<string, string[]> = {
    's3.amazonaws.com': ['AWS::SQS::QueuePolicy'],
    'logging.s3.amazonaws.com': ['AWS::S3::BucketPolicy'],
    'cloudwatch.amazonaws.com': ['AWS::SNS::TopicPolicy', 'AWS::KMS::Key'],
  };

  it("grants no wildcard action and no resource outside the lab: each Allow names actions on this template's bucket, table, indexes, queues, log groups or topic", () => {
    const counts: Record<string, number> = {};
    for (const lab of ['alpha', 'beta']) {
      const all = resources(template(lab));
      const typeOf = new Map(all.map(([id, r]) => [id, r.Type]));
      let statements = 0;
      for (const { where, kind, statement } of statementsOf(lab)) {
        const label = `${lab}: ${where} ${statement.Sid ?? ''} ${JSON.stringify(statement.Action)}`;
        for (const loose of ['NotAction', 'NotResource', 'NotPrincipal'])
          expect(statement[loose], `${label} ${loose}`).toBeUndefined();
        if (statement.Effect !== 'Allow') continue;
        statements++;
        const actions = asArray(statement.Action);
        if (kind === 'key') {
          // One of the named key statements, on the key itself ("*" in a key policy).
          expect(KEY_STATEMENTS, label).toContainEqual({ principal: statement.Principal, actions });
          expect(statement.Resource, label).toBe('*');
          continue;
        }
        expect(actions.length, label).toBeGreaterThan(0);
        for (const action of actions) {
          expect(action, label).toMatch(/^[a-z0-9-]+:[A-Za-z0-9*]+$/);
          expect(action, label).not.toMatch(/^(\*|[a-z0-9-]+:\*)$/);
          if (action.includes('*')) {
            // The one named exception (see AUTO_DELETE_ACTIONS).
            expect(kind, label).toBe('resource');
            expect(AUTO_DELETE_ACTIONS, label).toContain(action);
            const principal = referenced(statement.Principal);
            expect(principal, label).toHaveLength(1);
            expect(principal[0], label).toMatch(/^CustomS3AutoDeleteObjectsCustomResourceProviderRole/);
          }
        }
        const targets = asArray(statement.Resource);
        expect(targets.length, label).toBeGreaterThan(0);
        for (const target of targets) {
          expect(JSON.stringify(target), `${label}: a literal resource`).not.toMatch(/^"/);
          const ids = referenced(target);
          expect(ids.length, `${label}: ${JSON.stringify(target)} names no resource of the lab`).toBeGreaterThan(0);
          for (const id of ids) expect(GRANTABLE, `${label}: ${id}`).toContain(typeOf.get(id));
          // A suffix may narrow an ARN (/*, /index/NAME, /drop/*), never widen it to other resources.
          expect(JSON.stringify(target), label).not.toMatch(/"[^"]*\*[^"]*\*|:\*"|"\*\//);
        }
      }
      counts[lab] = statements;
    }
    // Logs, uploads and table per function, the bucket-notification handler; beta adds the bucket emptier.
    expect(counts.alpha).toBeGreaterThanOrEqual(12);
    expect(counts.beta).toBeGreaterThan(counts.alpha!);
  });

  it("attaches identity policies only to this lab's roles, which Lambda alone assumes; managed policies only on CDK's deploy-time handlers", () => {
    for (const lab of ['alpha', 'beta']) {
      const all = resources(template(lab));
      const roles = new Set(all.filter(([, r]) => r.Type === 'AWS::IAM::Role').map(([id]) => id));
      for (const [id, policy] of all.filter(([, r]) => r.Type === 'AWS::IAM::Policy')) {
        for (const role of asArray(policy.Properties!.Roles))
          expect(roles, `${lab}: ${id}`).toContain(referenced(role)[0]);
        expect(policy.Properties!.Users ?? policy.Properties!.Groups, `${lab}: ${id}`).toBeUndefined();
      }
      for (const id of roles) {
        const role = props(lab, id);
        expect(role.AssumeRolePolicyDocument.Statement, `${lab}: ${id}`).toEqual([
          { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
        ]);
        expect(role.PermissionsBoundary).toBeUndefined();
        if (CDK_PROVIDER_ROLE.test(id)) {
          // Named exception: CDK's handlers write their logs with the basic execution role (cdk-nag IAM4, acknowledged below).
          expect(JSON.stringify(role.ManagedPolicyArns), `${lab}: ${id}`).toMatch(
            /^\[\{"Fn::(Join|Sub)":.*:iam::aws:policy\/service-role\/AWSLambdaBasicExecutionRole"?\]*\}\]$/,
          );
        } else {
          expect(role.ManagedPolicyArns, `${lab}: ${id}`).toBeUndefined();
        }
      }
      // The lab's own functions: exactly the ingest, API, dead-letter and sweeper roles, none with a managed policy.
      const i = ids(lab);
      expect([...roles].filter((id) => !CDK_PROVIDER_ROLE.test(id)).sort()).toEqual(
        [i.role, i.apiRole, i.deadLetterRole, i.sweeperRole].sort(),
      );
    }
  });

  it("lets into its bucket, queue, topic and key policies only AWS services acting for this lab in this account, and this lab's own roles", () => {
    const alarmsOfThisAccount = {
      'Fn::Join': [
        '',
        ['arn:', ref('AWS::Partition'), ':cloudwatch:', ref('AWS::Region'), ':', ref('AWS::AccountId'), ':alarm:*'],
      ],
    };
    for (const lab of ['alpha', 'beta']) {
      const typeOf = new Map(resources(template(lab)).map(([id, r]) => [id, r.Type]));
      for (const { where, kind, statement } of statementsOf(lab)) {
        if (kind === 'identity' || statement.Effect !== 'Allow') continue;
        const label = `${lab}: ${where} ${JSON.stringify(statement.Principal)}`;
        const principal = statement.Principal as { Service?: string; AWS?: unknown };
        expect(Object.keys(principal), label).toHaveLength(1);
        if (principal.Service !== undefined) {
          expect(SERVICES[principal.Service], label).toContain(typeOf.get(where));
          // In this account only (a bucket ARN names none, so S3's source ARN alone is not enough).
          expect(statement.Condition?.['StringEquals']?.['aws:SourceAccount'], label).toEqual(ref('AWS::AccountId'));
          const source =
            statement.Condition?.['ArnLike']?.['aws:SourceArn'] ??
            statement.Condition?.['ArnEquals']?.['aws:SourceArn'];
          if (kind === 'key') {
            // The alarms refer to the topic and the topic to the key, so the key can name
            // only this account's alarms; the topic policy names this lab's one by one.
            expect(source, label).toEqual(alarmsOfThisAccount);
            continue;
          }
          // Only on behalf of this lab's own resources: a source condition naming one of them.
          expect(referenced(source).length, label).toBeGreaterThan(0);
          for (const id of referenced(source)) expect(typeOf.has(id), label).toBe(true);
        } else if (kind === 'key') {
          expect(principal, label).toEqual(ACCOUNT_ROOT);
        } else {
          const roles = referenced(principal.AWS);
          expect(roles, label).toHaveLength(1);
          expect(typeOf.get(roles[0]!), label).toBe('AWS::IAM::Role');
          expect(roles[0], label).toMatch(CDK_PROVIDER_ROLE);
        }
      }
    }
  });

  it('denies every request without TLS on every bucket, queue (the dead-letter queue too) and topic; Deny is used for nothing else', () => {
    const covered: string[] = [];
    for (const lab of ['alpha', 'beta']) {
      const all = resources(template(lab));
      const located = statementsOf(lab);
      for (const { where, statement } of located.filter((l) => l.statement.Effect === 'Deny')) {
        expect(statement.Condition, `${lab}: ${where}`).toEqual({ Bool: { 'aws:SecureTransport': 'false' } });
        expect([{ AWS: '*' }, '*']).toContainEqual(statement.Principal);
      }
      for (const [id, resource] of all.filter(([, r]) =>
        ['AWS::S3::Bucket', 'AWS::SQS::Queue', 'AWS::SNS::Topic'].includes(r.Type),
      )) {
        const arn = resource.Type === 'AWS::SNS::Topic' ? ref(id) : getAtt(id, 'Arn');
        const denies = located.filter(
          (l) =>
            l.statement.Effect === 'Deny' &&
            asArray(l.target).some((t) => JSON.stringify(t) === JSON.stringify(ref(id))) &&
            asArray(l.statement.Resource).some((r) => JSON.stringify(r) === JSON.stringify(arn)) &&
            ['s3:*', 'sqs:*', 'sns:Publish'].includes(String(l.statement.Action)),
        );
        expect(denies, `${lab}: ${id} (${resource.Type}) has no TLS-only policy`).toHaveLength(1);
        covered.push(`${lab}/${id}`);
      }
      // Objects as well as the bucket itself.
      for (const bucket of [ids(lab).bucket, ids(lab).logsBucket, ids(lab).resultsBucket]) {
        const deny = located.find(
          (l) => l.statement.Effect === 'Deny' && JSON.stringify(l.target) === JSON.stringify(ref(bucket)),
        )!;
        expect(deny.statement.Resource).toContainEqual({ 'Fn::Join': ['', [getAtt(bucket, 'Arn'), '/*']] });
      }
    }
    // Three buckets, two queues and a topic per lab.
    expect(covered).toHaveLength(12);
  });

  it('keeps labs apart by construction: no fixed names, and each function reads the table and bucket of its own stack', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      expect(props(lab, i.table).TableName).toBeUndefined();
      expect(props(lab, i.bucket).BucketName).toBeUndefined();
      for (const fn of [i.ingest, i.apiFunction])
        expect(props(lab, fn).Environment.Variables[ENV.bucketName]).toEqual(ref(i.bucket));
      for (const name of FUNCTIONS) {
        expect(props(lab, i[name]).Environment.Variables[ENV.tableName]).toEqual(ref(i.table));
        expect(props(lab, i[name]).Environment.Variables[ENV.lab]).toBe(lab);
      }
    }
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged finding and CloudFormation validation nothing either', () => {
    // An error would already have failed app.synth(); warnings only land in the report.
    const violations = synth.report.pluginReports.flatMap((report) =>
      report.violations.map((v) => `${report.pluginName}: ${v.severity} ${v.ruleName} ${v.description ?? ''}`),
    );
    expect(violations).toEqual([]);
  });

  it('leaves no warning or error annotation on either stack', () => {
    for (const lab of ['alpha', 'beta']) {
      const annotations = Annotations.fromStack(synth.labs[lab].stack);
      const messages = [
        ...annotations.findWarning('*', Match.anyValue()),
        ...annotations.findError('*', Match.anyValue()),
      ].map((m) => `${m.id}: ${JSON.stringify(m.entry.data)}`);
      expect(messages).toEqual([]);
    }
  });

  it('acknowledges exactly the findings that exist, each by its exact id with a reason', () => {
    for (const lab of ['alpha', 'beta']) {
      const root = synth.labs[lab].stack;
      const findings = unacknowledgedNagFindings(synth.app).filter((f) => f.includes(`@ ${root.node.path}/`));
      const bucket = logicalId(lab, root.bucket);
      expect(findings).toEqual(
        [
          `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole] @ ${root.node.path}/BucketNotificationsHandler050a0587b7544547bf325f094a3db834/Role/Resource`,
          `AwsSolutions-IAM5[Resource::<${bucket}.Arn>/*] @ ${root.node.path}/IngestRole/DefaultPolicy/Resource`,
          `AwsSolutions-IAM5[Resource::<${bucket}.Arn>/*] @ ${root.node.path}/ApiRole/DefaultPolicy/Resource`,
          // GET /runs/{id}/samples and frozen reports: one prefix each of the results bucket.
          `AwsSolutions-IAM5[Resource::<${logicalId(lab, root.resultsBucket)}.Arn>/samples/*] @ ${root.node.path}/ApiRole/DefaultPolicy/Resource`,
          `AwsSolutions-IAM5[Resource::<${logicalId(lab, root.resultsBucket)}.Arn>/reports/*] @ ${root.node.path}/ApiRole/DefaultPolicy/Resource`,
          // Samples objects are one key per run under samples/: ingest writes and deletes, the settlers delete.
          ...['IngestRole', 'DeadLetterRole', 'SweeperRole'].map(
            (role) =>
              `AwsSolutions-IAM5[Resource::<${logicalId(lab, root.resultsBucket)}.Arn>/samples/*] @ ${root.node.path}/${role}/DefaultPolicy/Resource`,
          ),
        ].sort(),
      );
      // API Gateway access logging (APIG1) and authorisation (APIG4) are satisfied, not acknowledged.
      expect(findings.filter((f) => f.startsWith('AwsSolutions-APIG'))).toEqual([]);
      const acks = acknowledgements(synth.app).filter((a) => a.path.startsWith(`${root.node.path}/`));
      expect(acks.map((a) => a.id).sort()).toEqual(findings.map((f) => f.split(' @ ')[0]).sort());
      for (const ack of acks) {
        expect(ack.id).toMatch(/^AwsSolutions-[A-Z]+\d+\[.+\]$/);
        expect(ack.reason.length).toBeGreaterThan(60);
      }
    }
  });

  it('fails the synth on a finding nobody acknowledged', () => {
    const { app, dispose } = testApp();
    try {
      const stack = buildTestLab(app, labSettings({ lab: 'gamma' }));
      new sqs.Queue(stack, 'StrayQueue'); // no DLQ, no SSL policy
      expect(() => app.synth()).toThrow(/AwsSolutions-SQS3[\s\S]*StrayQueue|StrayQueue[\s\S]*AwsSolutions-SQS3/);
    } finally {
      dispose();
    }
  });

  it('fails the synth on an API route without authorisation', () => {
    const { app, dispose } = testApp();
    try {
      const stack = buildTestLab(app, labSettings({ lab: 'gamma' }));
      stack.api.addRoutes({
        path: '/open',
        integration: new HttpLambdaIntegration('Open', stack.apiFunction),
        authorizer: new HttpNoneAuthorizer(),
      });
      expect(() => app.synth()).toThrow(/AwsSolutions-APIG4[\s\S]*ANY--open|ANY--open[\s\S]*AwsSolutions-APIG4/);
    } finally {
      dispose();
    }
  });
});
