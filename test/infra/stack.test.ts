/**
 * The per-lab stack: two labs (alpha with the defaults, beta with every setting
 * changed) synthesised into one App exactly as `cdk synth` would, minus bundling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { ENV, LAB_DEFAULTS, MB } from '../../shared/config.ts';
import { createTableInput, INDEXES } from '../../shared/table.ts';
import { buildLab } from '../../infra/lab.ts';
import { labSettings } from '../../infra/settings.ts';
import { INGEST, LAB_TAG } from '../../infra/stack.ts';
import {
  acknowledgements,
  asArray,
  getAtt,
  labTag,
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
const BETA = labSettings({ lab: 'beta', maxUploadMB: '200', noncurrentVersionDays: '30', alarmEmail: 'ops@example.org', retainData: 'false', deletionProtection: 'false' });

let synth: Synthesis;
// One synth of both labs (a few seconds; more on a busy machine than the default hook timeout allows).
beforeAll(() => {
  synth = synthLabs([ALPHA, BETA]);
}, 120_000);
afterAll(() => synth?.dispose());

const template = (lab: string) => synth.labs[lab].template;
const logicalId = (lab: string, construct: { node: { defaultChild?: unknown } }) =>
  synth.labs[lab].stack.getLogicalId(construct.node.defaultChild as Parameters<typeof synth.labs.alpha.stack.getLogicalId>[0]);

/** Logical ids of the main resources of a lab. */
function ids(lab: string) {
  const stack = synth.labs[lab].stack;
  return {
    bucket: logicalId(lab, stack.bucket),
    logsBucket: logicalId(lab, stack.logsBucket),
    queue: logicalId(lab, stack.queue),
    dlq: logicalId(lab, stack.deadLetterQueue),
    table: logicalId(lab, stack.table),
    ingest: logicalId(lab, stack.ingest),
    topic: logicalId(lab, stack.alarmTopic),
    role: logicalId(lab, stack.ingestRole),
    logGroup: logicalId(lab, stack.ingestLogs),
  };
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
    expect(synth.app.node.children.filter((child) => Stack.isStack(child)).map((child) => child.node.id).sort()).toEqual(['Benchdrop-alpha', 'Benchdrop-beta']);
  });

  it('has the expected resources, and beta (retainData=false, alarmEmail) only its extras', () => {
    const counts: Record<string, number> = {
      'AWS::S3::Bucket': 2,
      'AWS::S3::BucketPolicy': 2,
      'Custom::S3BucketNotifications': 1,
      'AWS::SQS::Queue': 2,
      'AWS::SQS::QueuePolicy': 2,
      'AWS::DynamoDB::Table': 1,
      'AWS::Lambda::EventSourceMapping': 1,
      'AWS::Logs::LogGroup': 1,
      'AWS::SNS::Topic': 1,
      'AWS::SNS::TopicPolicy': 1,
      'AWS::CloudWatch::Alarm': 3,
    };
    for (const [type, count] of Object.entries(counts)) {
      template('alpha').resourceCountIs(type, count);
      template('beta').resourceCountIs(type, count);
    }
    // The ingest function and CDK's bucket-notification handler; beta adds the
    // provider that empties its buckets when the stack is deleted.
    template('alpha').resourceCountIs('AWS::Lambda::Function', 2);
    template('alpha').resourceCountIs('Custom::S3AutoDeleteObjects', 0);
    template('beta').resourceCountIs('Custom::S3AutoDeleteObjects', 2);
    template('alpha').resourceCountIs('AWS::SNS::Subscription', 0);
    template('beta').resourceCountIs('AWS::SNS::Subscription', 1);
  });

  it('uses no fixed physical names anywhere', () => {
    const NAME_PROPERTIES = ['BucketName', 'TableName', 'QueueName', 'FunctionName', 'TopicName', 'RoleName', 'LogGroupName', 'AlarmName', 'PolicyName'];
    for (const lab of ['alpha', 'beta']) {
      for (const [id, resource] of resources(template(lab))) {
        if (resource.Type.startsWith('Custom::')) continue; // their properties are inputs, e.g. the bucket to configure
        for (const name of NAME_PROPERTIES) {
          if (name === 'PolicyName' && resource.Type === 'AWS::IAM::Policy') continue; // inline policy name, local to its role
          if (name === 'FunctionName' && resource.Type === 'AWS::Lambda::EventSourceMapping') continue; // a reference, not a name
          expect(resource.Properties?.[name], `${lab}: ${id}.${name}`).toBeUndefined();
        }
      }
    }
  });

  it('tags every taggable resource with its own lab, so the two templates differ in their tags', () => {
    const UNTAGGABLE = new Set(['AWS::S3::BucketPolicy', 'AWS::SQS::QueuePolicy', 'AWS::SNS::TopicPolicy', 'AWS::IAM::Policy', 'AWS::SNS::Subscription', 'Custom::S3BucketNotifications', 'Custom::S3AutoDeleteObjects']);
    for (const lab of ['alpha', 'beta']) {
      // CDK's custom resource *providers* (beta's bucket emptier) are raw resources that
      // Tags.of cannot reach; CloudFormation still gives them the stack's tags.
      const tagged = resources(template(lab)).filter(([id, resource]) => !UNTAGGABLE.has(resource.Type) && !id.includes('CustomResourceProvider'));
      expect(tagged.length).toBeGreaterThanOrEqual(14);
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
      const outputs = (template(lab).toJSON() as { Outputs: Record<string, { Value: unknown; Export?: unknown }> }).Outputs;
      expect(Object.keys(outputs).sort()).toEqual(['BucketName', 'DeadLetterQueueUrl', 'QueueUrl', 'TableName']);
      expect(outputs.BucketName.Value).toEqual(ref(i.bucket));
      expect(outputs.TableName.Value).toEqual(ref(i.table));
      expect(outputs.QueueUrl.Value).toEqual(ref(i.queue));
      expect(outputs.DeadLetterQueueUrl.Value).toEqual(ref(i.dlq));
      for (const output of Object.values(outputs)) expect(output.Export).toBeUndefined();
    }
  });
});

describe('drop bucket', () => {
  it('is private, encrypted, versioned and logs access to the separate logs bucket', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const bucket = props(lab, i.bucket);
      expect(bucket.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
      expect(bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toMatch(/^(AES256|aws:kms)$/);
      expect(bucket.VersioningConfiguration).toEqual({ Status: 'Enabled' });
      expect(bucket.LoggingConfiguration.DestinationBucketName).toEqual(ref(i.logsBucket));
      expect(bucket.LoggingConfiguration.DestinationBucketName).not.toEqual(ref(i.bucket));
    }
  });

  it('expires noncurrent versions after noncurrentVersionDays', () => {
    const rule = (lab: string) => props(lab, ids(lab).bucket).LifecycleConfiguration.Rules.find((r: Record<string, unknown>) => r.NoncurrentVersionExpiration);
    expect(rule('alpha')).toMatchObject({ Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: LAB_DEFAULTS.noncurrentVersionDays } });
    expect(rule('beta')).toMatchObject({ Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: 30 } });
    // Current versions never expire: nothing a user uploaded is deleted by the stack.
    for (const lab of ['alpha', 'beta']) {
      for (const r of props(lab, ids(lab).bucket).LifecycleConfiguration.Rules) expect(r.ExpirationInDays).toBeUndefined();
    }
  });

  it('is retained with the stack when retainData (the default), deleted and emptied otherwise', () => {
    template('alpha').hasResource('AWS::S3::Bucket', { Properties: Match.objectLike({ VersioningConfiguration: { Status: 'Enabled' } }), DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    template('beta').hasResource('AWS::S3::Bucket', { Properties: Match.objectLike({ VersioningConfiguration: { Status: 'Enabled' } }), DeletionPolicy: 'Delete' });
    template('beta').hasResourceProperties('Custom::S3AutoDeleteObjects', { BucketName: ref(ids('beta').bucket) });
  });

  it('denies every request without TLS on both buckets', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      for (const bucketId of [i.bucket, i.logsBucket]) {
        const [, policy] = only(template(lab), 'AWS::S3::BucketPolicy', (r) => JSON.stringify(r.Properties?.Bucket) === JSON.stringify(ref(bucketId)));
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
    expect(logs.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
    expect(logs.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
    const [, policy] = only(template('alpha'), 'AWS::S3::BucketPolicy', (r) => JSON.stringify(r.Properties?.Bucket) === JSON.stringify(ref(i.logsBucket)));
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
        const [, policy] = only(template(lab), 'AWS::SQS::QueuePolicy', (r) => JSON.stringify(r.Properties?.Queues) === JSON.stringify([ref(queueId)]));
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

  it('lets only the drop bucket send to the ingest queue', () => {
    const i = ids('alpha');
    const [, policy] = only(template('alpha'), 'AWS::SQS::QueuePolicy', (r) => JSON.stringify(r.Properties?.Queues) === JSON.stringify([ref(i.queue)]));
    const allows = policy.Properties!.PolicyDocument.Statement.filter((s: { Effect: string }) => s.Effect === 'Allow');
    expect(allows).toEqual([
      expect.objectContaining({
        Principal: { Service: 's3.amazonaws.com' },
        Action: expect.arrayContaining(['sqs:SendMessage']),
        Condition: { ArnLike: { 'aws:SourceArn': getAtt(i.bucket, 'Arn') } },
        Resource: getAtt(i.queue, 'Arn'),
      }),
    ]);
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
      // The DLQ keeps messages as long as SQS allows, for a person to look at.
      expect(props(lab, i.dlq).MessageRetentionPeriod).toBe(14 * 24 * 3600);
      expect(props(lab, i.dlq).RedrivePolicy).toBeUndefined();
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
      expect(fn.MemorySize).toBe(1024);
      expect(fn.Timeout).toBe(300);
      expect(fn.Handler).toBe('index.handler');
      expect(fn.LoggingConfig.LogGroup).toEqual(ref(ids(lab).logGroup));
    }
  });

  it('gets the table, bucket, size limit, lab and Powertools settings in its environment', () => {
    for (const [lab, maxUploadMB] of [['alpha', LAB_DEFAULTS.maxUploadMB], ['beta', 200]] as const) {
      const i = ids(lab);
      expect(props(lab, i.ingest).Environment.Variables).toEqual({
        [ENV.tableName]: ref(i.table),
        [ENV.bucketName]: ref(i.bucket),
        [ENV.maxUploadBytes]: String(maxUploadMB * MB),
        [ENV.lab]: lab,
        POWERTOOLS_SERVICE_NAME: 'benchdrop-ingest',
        POWERTOOLS_METRICS_NAMESPACE: 'Benchdrop',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
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

  it('has least privilege: named actions on the bucket, the table, its indexes, the queue and its log group only', () => {
    for (const lab of ['alpha', 'beta']) {
      const i = ids(lab);
      const role = props(lab, i.role);
      expect(role.ManagedPolicyArns).toBeUndefined();
      expect(role.AssumeRolePolicyDocument.Statement).toEqual([{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }]);
      const policies = resources(template(lab), 'AWS::IAM::Policy').filter(([, p]) => JSON.stringify(p.Properties!.Roles) === JSON.stringify([ref(i.role)]));
      expect(policies).toHaveLength(1);
      const statements: { Effect: string; Action: string | string[]; Resource: unknown }[] = policies[0][1].Properties!.PolicyDocument.Statement;

      const logGroup = i.logGroup;
      const join = (...parts: unknown[]) => JSON.stringify({ 'Fn::Join': ['', parts] });
      const allowed = new Map<string, RegExp>([
        [JSON.stringify(getAtt(i.bucket, 'Arn')), /^s3:ListBucket$/],
        [join(getAtt(i.bucket, 'Arn'), '/*'), /^s3:GetObject(Version)?(Tagging)?$/],
        [JSON.stringify(getAtt(i.table, 'Arn')), /^dynamodb:(BatchGetItem|BatchWriteItem|ConditionCheckItem|DeleteItem|GetItem|PutItem|Query|UpdateItem)$/],
        ...Object.values(INDEXES).map((index) => [join(getAtt(i.table, 'Arn'), `/index/${index.name}`), /^dynamodb:(BatchGetItem|BatchWriteItem|ConditionCheckItem|DeleteItem|GetItem|PutItem|Query|UpdateItem)$/] as [string, RegExp]),
        [JSON.stringify(getAtt(i.queue, 'Arn')), /^sqs:(ReceiveMessage|DeleteMessage|ChangeMessageVisibility|GetQueueAttributes|GetQueueUrl)$/],
        [JSON.stringify(getAtt(logGroup, 'Arn')), /^logs:(CreateLogStream|PutLogEvents)$/],
        [join('arn:', ref('AWS::Partition'), ':logs:', ref('AWS::Region'), ':', ref('AWS::AccountId'), ':log-group:', ref(logGroup)), /^logs:(CreateLogStream|PutLogEvents)$/],
      ]);
      const granted = new Map<string, Set<string>>();
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
            if (!granted.has(key)) granted.set(key, new Set());
            granted.get(key)!.add(action);
          }
        }
      }
      // What the handler needs is there: object reads, table writes, index queries.
      expect([...granted.get(join(getAtt(i.bucket, 'Arn'), '/*'))!]).toEqual(expect.arrayContaining(['s3:GetObject', 's3:GetObjectVersion', 's3:GetObjectTagging', 's3:GetObjectVersionTagging']));
      expect([...granted.get(JSON.stringify(getAtt(i.table, 'Arn')))!]).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem', 'dynamodb:Query']));
      for (const index of Object.values(INDEXES)) expect(granted.get(join(getAtt(i.table, 'Arn'), `/index/${index.name}`))).toContain('dynamodb:Query');
      expect(granted.get(JSON.stringify(getAtt(i.queue, 'Arn')))).toContain('sqs:DeleteMessage');
    }
  });
});

describe('table', () => {
  it('has exactly the keys and indexes of shared/table.ts, all strings, projection ALL', () => {
    const expected = createTableInput('unused');
    const byName = <T extends { AttributeName?: string; IndexName?: string }>(list: T[]) => [...list].sort((a, b) => String(a.AttributeName ?? a.IndexName).localeCompare(String(b.AttributeName ?? b.IndexName)));
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
    template('alpha').hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain', Properties: Match.objectLike({ DeletionProtectionEnabled: true }) });
    template('beta').hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete', Properties: Match.objectLike({ DeletionProtectionEnabled: false }) });
  });
});

describe('alarms', () => {
  const alarm = (lab: string, metricName: string) => only(template(lab), 'AWS::CloudWatch::Alarm', (r) => r.Properties?.MetricName === metricName)[1].Properties!;

  it('fire on any message in the dead-letter queue', () => {
    for (const lab of ['alpha', 'beta']) {
      expect(alarm(lab, 'ApproximateNumberOfMessagesVisible')).toMatchObject({
        Namespace: 'AWS/SQS',
        Dimensions: [{ Name: 'QueueName', Value: getAtt(ids(lab).dlq, 'QueueName') }],
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it('fire on any ingest function error or throttle', () => {
    for (const lab of ['alpha', 'beta']) {
      for (const metricName of ['Errors', 'Throttles']) {
        expect(alarm(lab, metricName)).toMatchObject({
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

  it('notify the lab\'s SSL-only topic, which CloudWatch may publish to for these alarms only', () => {
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
      expect(statements).toContainEqual(expect.objectContaining({ Effect: 'Deny', Action: 'sns:Publish', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }));
      const allow = statements.find((s: { Effect: string }) => s.Effect === 'Allow');
      expect(allow).toMatchObject({ Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: 'sns:Publish', Resource: ref(i.topic) });
      expect(allow.Condition.ArnEquals['aws:SourceArn']).toEqual(expect.arrayContaining(alarms.map(([id]) => getAtt(id, 'Arn'))));
      expect(allow.Condition.ArnEquals['aws:SourceArn']).toHaveLength(alarms.length);
    }
  });

  it('e-mail alarmEmail when it is set', () => {
    template('beta').hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.org', TopicArn: ref(ids('beta').topic) });
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged finding and CloudFormation validation nothing either', () => {
    // An error would already have failed app.synth(); warnings only land in the report.
    const violations = synth.report.pluginReports.flatMap((report) => report.violations.map((v) => `${report.pluginName}: ${v.severity} ${v.ruleName} ${v.description ?? ''}`));
    expect(violations).toEqual([]);
  });

  it('leaves no warning or error annotation on either stack', () => {
    for (const lab of ['alpha', 'beta']) {
      const annotations = Annotations.fromStack(synth.labs[lab].stack);
      const messages = [...annotations.findWarning('*', Match.anyValue()), ...annotations.findError('*', Match.anyValue())].map((m) => `${m.id}: ${JSON.stringify(m.entry.data)}`);
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
        ].sort(),
      );
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
      const stack = buildLab(app, labSettings({ lab: 'gamma' }));
      new sqs.Queue(stack, 'StrayQueue'); // no DLQ, no SSL policy
      expect(() => app.synth()).toThrow(/AwsSolutions-SQS3[\s\S]*StrayQueue|StrayQueue[\s\S]*AwsSolutions-SQS3/);
    } finally {
      dispose();
    }
  });
});
