/**
 * The lab's alarms and the topic they notify. Most fire on any occurrence, as one
 * dead letter, error, throttle or 5xx is worth a look; no data means nothing
 * happened. Every alarm notifies the topic when it fires and when it clears.
 */
import { ArnFormat, Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { DEAD_LETTER_METRICS } from '../../functions/dead-letter/handler.ts';
import { SWEEPER_METRICS } from '../../functions/sweeper/handler.ts';
import { ALL_DELIVERIES_MS, INGEST_LIMITS, STUCK_AFTER_MS } from '../../shared/config.ts';
import { DEAD_LETTER_VISIBILITY } from '../limits.ts';
import type { StackSettings } from '../settings.ts';

/** What the alarms watch. */
export interface AlarmSources {
  queue: sqs.Queue;
  deadLetterQueue: sqs.Queue;
  ingest: lambda.IFunction;
  deadLetter: lambda.IFunction;
  sweeper: lambda.IFunction;
  apiFunction: lambda.IFunction;
  api: apigwv2.HttpApi;
}

export interface Alarms {
  key: kms.Key;
  topic: sns.Topic;
  alarms: cloudwatch.Alarm[];
}

const FIVE_MINUTES = Duration.minutes(5);
const SUM = { period: FIVE_MINUTES, statistic: cloudwatch.Stats.SUM };
const MAXIMUM = { period: FIVE_MINUTES, statistic: cloudwatch.Stats.MAXIMUM };
const minutes = (seconds: number) => `${Math.round(seconds / 60)} minutes`;

export function labAlarms(stack: Stack, settings: StackSettings, sources: AlarmSources): Alarms {
  const { key, topic } = alarmTopic(stack, settings);
  const alarm = alarmFactory(stack, settings.lab);
  const alarms = [
    ...deadLetterAlarms(alarm, sources),
    ...queueAndSweepAlarms(alarm, sources),
    ...functionAlarms(alarm, sources),
  ];
  const action = new SnsAction(topic);
  for (const each of alarms) {
    each.addAlarmAction(action);
    each.addOkAction(action);
  }
  // enforceSSL gives the topic a resource policy, which replaces SNS's default one:
  // CloudWatch then needs an explicit grant, limited to this lab's alarms.
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'AllowLabAlarms',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnEquals: { 'aws:SourceArn': alarms.map((each) => each.alarmArn) },
      },
    }),
  );
  return { key, topic, alarms };
}

/**
 * The topic is encrypted under a key of the lab's own (a key's monthly charge per
 * lab): CloudWatch cannot publish under the AWS managed aws/sns key, whose policy
 * nobody may change, while this key's policy lets in CloudWatch for this account's
 * alarms and nothing else besides the account's own administrators (KMS's default
 * statement, through IAM).
 */
function alarmTopic(stack: Stack, settings: StackSettings): { key: kms.Key; topic: sns.Topic } {
  const key = new kms.Key(stack, 'AlarmTopicKey', {
    description: `benchdrop lab ${settings.lab}: encrypts the messages of the alarm topic`,
    enableKeyRotation: true,
    // Nothing outlives the topic under this key: it goes with the stack, after KMS's shortest wait.
    pendingWindow: Duration.days(7),
    removalPolicy: RemovalPolicy.DESTROY,
  });
  // The alarms cannot be named one by one in the key policy (they refer to the topic,
  // which refers to the key): the account's alarms here, this lab's in the topic policy.
  const alarmArns = stack.formatArn({
    service: 'cloudwatch',
    resource: 'alarm',
    resourceName: '*',
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'AllowAccountAlarms',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account }, ArnLike: { 'aws:SourceArn': alarmArns } },
    }),
  );
  const topic = new sns.Topic(stack, 'AlarmTopic', {
    displayName: `benchdrop ${settings.lab} alarms`,
    enforceSSL: true,
    signatureVersion: '2',
    masterKey: key,
  });
  if (settings.alarmEmail) topic.addSubscription(new EmailSubscription(settings.alarmEmail));
  return { key, topic };
}

interface AlarmFactory {
  /**
   * An alarm on a metric over the last `periods` 5-minute periods (one breaching
   * period is enough), above `threshold`; `description` is prefixed with the lab.
   */
  above(
    id: string,
    description: string,
    metric: cloudwatch.IMetric,
    threshold?: number,
    periods?: number,
  ): cloudwatch.Alarm;
  /** A metric one of the lab's functions sends (Powertools: its service and the lab as dimensions). */
  labMetric(source: { namespace: string; service: string }, metricName: string): cloudwatch.Metric;
}

function alarmFactory(stack: Stack, lab: string): AlarmFactory {
  return {
    labMetric: (source, metricName) =>
      new cloudwatch.Metric({
        namespace: source.namespace,
        metricName,
        dimensionsMap: { service: source.service, lab },
        ...SUM,
      }),
    above: (id, description, metric, threshold = 0, periods = 1) =>
      new cloudwatch.Alarm(stack, id, {
        alarmDescription: `benchdrop ${lab}: ${description}`,
        metric,
        threshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: periods,
        datapointsToAlarm: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
  };
}

/** Dead letters: each one handled, each one not settled, and any left waiting. */
function deadLetterAlarms({ above, labMetric }: AlarmFactory, sources: AlarmSources): cloudwatch.Alarm[] {
  const unsettledAfterSeconds = DEAD_LETTER_VISIBILITY.toSeconds();
  return [
    above(
      'DeadLettersAlarm',
      `ingest gave up on messages after ${INGEST_LIMITS.maxReceiveCount} receives; ` +
        'the dead-letter function ended their uploads failed (UploadsDeadLettered) and logged each message',
      labMetric(DEAD_LETTER_METRICS, DEAD_LETTER_METRICS.deadLetters),
    ),
    // A dead letter the function fails comes back once per visibility timeout: watching
    // a period longer than that keeps the alarm on for as long as one keeps failing.
    above(
      'DeadLettersUnsettledAlarm',
      'the dead-letter function could not settle a dead letter (see its log); ' +
        `it is tried again every ${minutes(unsettledAfterSeconds)} and its upload may still read processing`,
      labMetric(DEAD_LETTER_METRICS, DEAD_LETTER_METRICS.unsettled),
      0,
      Math.ceil(unsettledAfterSeconds / FIVE_MINUTES.toSeconds()) + 1,
    ),
    // The function reads a dead letter within seconds, so one older than the queue's
    // visibility timeout is waiting for nobody: the event source is off or gone.
    // (SQS stops counting a message here after its third receive: failed attempts
    // are the alarm above's.)
    above(
      'DeadLetterQueueAlarm',
      `a dead letter has waited more than ${minutes(unsettledAfterSeconds)}: nothing settles it ` +
        "(is the dead-letter function's event source enabled?); its upload may still read processing",
      sources.deadLetterQueue.metricApproximateAgeOfOldestMessage(MAXIMUM),
      unsettledAfterSeconds,
    ),
  ];
}

/** Messages waiting too long in the ingest queue, and uploads the sweeper found overdue. */
function queueAndSweepAlarms({ above, labMetric }: AlarmFactory, sources: AlarmSources): cloudwatch.Alarm[] {
  const allDeliveriesSeconds = ALL_DELIVERIES_MS / 1000;
  return [
    // All its deliveries back to back take a message at most timeout x receives
    // (ALL_DELIVERIES_MS); one older than that needed a redelivery (a delivery failed)
    // or waits behind a backlog or for a consumer that does not read.
    above(
      'IngestQueueAgeAlarm',
      `an ingest message has waited more than ${minutes(allDeliveriesSeconds)} ` +
        `(the function timeout x ${INGEST_LIMITS.maxReceiveCount} receives): a delivery failed, ` +
        'or ingest is far behind, throttled or not reading the queue; its upload reads processing',
      sources.queue.metricApproximateAgeOfOldestMessage(MAXIMUM),
      allDeliveriesSeconds,
    ),
    above(
      'UploadsOverdueAlarm',
      `the sweeper found processing records past their time (${minutes(STUCK_AFTER_MS / 1000)}): ` +
        'a delivery died without ending its upload; the sweeper ends them failed (UploadsSwept)',
      labMetric(SWEEPER_METRICS, SWEEPER_METRICS.overdue),
    ),
  ];
}

/** Every function's errors, ingest's throttles, and the API's 5xx answers. */
function functionAlarms({ above }: AlarmFactory, sources: AlarmSources): cloudwatch.Alarm[] {
  const crashed = 'failed (crash, timeout or out of memory)';
  return [
    above('IngestErrorsAlarm', `the ingest function ${crashed}`, sources.ingest.metricErrors(SUM)),
    above(
      'IngestThrottlesAlarm',
      'the ingest function was throttled (account concurrency exhausted); uploads wait in the queue',
      sources.ingest.metricThrottles(SUM),
    ),
    above(
      'DeadLetterErrorsAlarm',
      `the dead-letter function ${crashed}; its messages wait in the dead-letter queue`,
      sources.deadLetter.metricErrors(SUM),
    ),
    above(
      'SweeperErrorsAlarm',
      'the sweeper failed (crash or timeout); the next run goes on where it stopped',
      sources.sweeper.metricErrors(SUM),
    ),
    above(
      'ApiServerErrorsAlarm',
      'the HTTP API answered 5xx (function error, timeout or an integration failure); see the API access logs',
      sources.api.metricServerError(SUM),
    ),
    above('ApiErrorsAlarm', `the API function ${crashed}`, sources.apiFunction.metricErrors(SUM)),
  ];
}
