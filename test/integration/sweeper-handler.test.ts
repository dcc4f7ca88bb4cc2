/**
 * The sweeper handler (functions/sweeper/handler.ts, the one deployed) on the
 * event an EventBridge schedule sends, against dynalite: a `processing` record past
 * STUCK_AFTER_MS ends `failed`, a younger one is left to its delivery, and what it
 * prints is what the stack's alarm watches: UploadsOverdue in the namespace and
 * with the dimensions of the synthesised lab's UploadsOverdueAlarm, on every run.
 */
import { randomUUID } from 'node:crypto';
import type * as SweeperHandler from '../../functions/sweeper/handler.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScheduledEvent } from 'aws-lambda';
import { createDocumentClient } from '../../shared/aws.ts';
import { ENV, STUCK_AFTER_MS } from '../../shared/config.ts';
import type { SettleDeps } from '../../shared/ingest.ts';
import type { ObjectRef } from '../../shared/store/items.ts';
import { claimUpload } from '../../shared/store/uploads.ts';
import { REGION, startEmulators, type Emulators } from '../../harness/emulators.ts';
import { lambdaContext, lambdaEnvironment } from '../../harness/lambda.ts';
import { getUpload } from '../../harness/table.ts';
import { capturePrinted, metricSum, type Printed } from '../infra/emf.ts';

type Module = typeof SweeperHandler;

/** The lab synthesised below; the handler reads it from its environment when loaded. */
const LAB = 'alpha';
let env: Emulators;
let mod: Module;
let deps: SettleDeps;
/** What the synthesised lab's alarm on overdue uploads watches, and the function's environment there. */
let watched: { namespace: string; dimensions: Record<string, string> };
let deployedEnvironment: Record<string, unknown>;
const uid = () => randomUUID().slice(0, 8);
const saved = { ...process.env };

beforeAll(async () => {
  // Loaded before the stack, which imports it too: as Lambda loads it, its environment set.
  lambdaEnvironment(LAB);
  mod = (await import('../../functions/sweeper/handler.ts')) as Module;
  const { deployedAs } = await import('../infra/synth.ts');
  const deployed = deployedAs(LAB, (stack) => stack.sweeper, [mod.SWEEPER_METRICS.overdue]);
  deployedEnvironment = deployed.environment;
  watched = deployed.watching[0]!;
  env = await startEmulators();
  deps = { db: env.db, tableName: env.tableName, s3: env.s3, resultsBucket: env.resultsBucket };
  mod.setSweeperDeps(deps);
}, 180_000);

afterAll(async () => {
  mod?.setSweeperDeps(undefined);
  await env?.stop();
  process.env = saved;
});

/** The event an EventBridge rate schedule sends its target. */
function scheduledEvent(time = new Date()): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '123456789012',
    time: time.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: REGION,
    resources: [`arn:aws:events:${REGION}:123456789012:rule/Benchdrop-alpha-SweepSchedule80B1140B-AbCdEf123456`],
    detail: {},
  };
}

/** A version a delivery claimed `ageMs` ago and never ended (it died), as ingest leaves it. */
async function claimedAgo(ageMs: number): Promise<ObjectRef> {
  const object: ObjectRef = { bucket: env.bucket, key: `sweep-${uid()}/run.txt`, version: `v-${uid()}` };
  expect(await claimUpload(deps, object, new Date(Date.now() - ageMs).toISOString())).toBeDefined();
  return object;
}

const recordOf = (object: ObjectRef) => getUpload(env, object.bucket, object.key, object.version);

async function run(): Promise<{ sweep: Awaited<ReturnType<Module['handler']>>; printed: Printed }> {
  const { result, printed } = await capturePrinted(() =>
    mod.handler(scheduledEvent(), lambdaContext('benchdrop-sweeper', 120_000)),
  );
  return { sweep: result, printed };
}

const sent = (printed: Printed, name: string) => metricSum(printed, watched.namespace, watched.dimensions, name);

describe('the sweeper handler', () => {
  it('ends a processing record past its time, leaves a younger one, and reports both counts where the alarm looks', async () => {
    const stuck = await claimedAgo(STUCK_AFTER_MS + 60_000);
    const young = await claimedAgo(STUCK_AFTER_MS - 5 * 60_000);
    const { sweep, printed } = await run();
    expect(sweep).toEqual({ overdue: 1, ended: 1, continued: 0 });
    expect(await recordOf(stuck)).toMatchObject({
      status: 'failed',
      message: expect.stringContaining(`ingest did not finish within ${STUCK_AFTER_MS / 60_000} minutes`),
    });
    expect((await recordOf(young))?.['status']).toBe('processing');
    // The alarm's metric, in its namespace with its dimensions (the service and the lab the stack sets).
    expect(deployedEnvironment[ENV.lab]).toBe(LAB);
    expect(watched.dimensions).toEqual({ service: mod.SWEEPER_METRICS.service, lab: LAB });
    expect(sent(printed, mod.SWEEPER_METRICS.overdue)).toBe(1);
    expect(sent(printed, mod.SWEEPER_METRICS.swept)).toBe(1);
    expect(printed.logs.find((l) => l['message'] === 'swept')).toMatchObject({ level: 'WARN', overdue: 1, ended: 1 });
  });

  it('sends zeros on a quiet run, so the metrics show a sweeper that runs', async () => {
    const { sweep, printed } = await run();
    expect(sweep).toEqual({ overdue: 0, ended: 0, continued: 0 });
    expect(sent(printed, mod.SWEEPER_METRICS.overdue)).toBe(0);
    expect(sent(printed, mod.SWEEPER_METRICS.swept)).toBe(0);
    expect(printed.logs.filter((l) => l['message'] === 'swept')).toEqual([]); // an info line: not a warning
  });

  it('fails the invocation when the table does not answer: a Lambda error, which SweeperErrorsAlarm counts', async () => {
    const db = createDocumentClient({
      region: REGION,
      dynamodbEndpoint: 'http://127.0.0.1:9',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    mod.setSweeperDeps({ db, tableName: env.tableName, s3: env.s3, resultsBucket: env.resultsBucket });
    try {
      await expect(
        capturePrinted(() => mod.handler(scheduledEvent(), lambdaContext('benchdrop-sweeper', 120_000))),
      ).rejects.toThrow();
    } finally {
      db.destroy();
      mod.setSweeperDeps(deps);
    }
  });
});
