/**
 * The domain's settle use cases, wired into the lab: every dead letter's uploads
 * are ended `failed` (failDeadLetter), and uploads left `processing` with no
 * delivery that could still finish them are swept (sweepStuckUploads) once the
 * lab is idle after its start and then every minute. Neither ever throws into the
 * queue or the lab: outcomes and errors are logged.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SettleDeps } from '../../shared/ingest.ts';
import { failDeadLetter } from '../../shared/dead-letters.ts';
import { sweepStuckUploads } from '../../shared/sweep.ts';
import type { DeadLetter } from './journal.ts';

export interface SettleWiring {
  db: DynamoDBDocumentClient;
  tableName: string;
  /** Where removed runs' samples objects are deleted. */
  s3: S3Client;
  resultsBucket: string;
  log: (line: string) => void;
}

/** The settle use cases' deps: the table and the results bucket. */
const settleDeps = ({ db, tableName, s3, resultsBucket }: SettleWiring): SettleDeps => ({
  db,
  tableName,
  s3,
  resultsBucket,
});

export const SWEEP_EVERY_MS = 60_000;

/** For LocalQueueOptions.onDeadLetter: the letter's uploads end `failed`; the outcome is logged. */
export function settleDeadLetter(wiring: SettleWiring): (letter: DeadLetter) => Promise<void> {
  return async (letter) => {
    try {
      const outcome = await failDeadLetter(letter.body, settleDeps(wiring), letter.receives);
      wiring.log(`dead letter ${letter.messageId} (${letter.receives} receives): ${JSON.stringify(outcome)}`);
    } catch (error) {
      wiring.log(
        `dead letter ${letter.messageId}: its uploads could not be marked failed: ${(error as Error).message}`,
      );
    }
  };
}

export interface Sweeper {
  /** One sweep now, unless one is running (then that one's end). */
  sweep(): Promise<void>;
  /** No more sweeps; resolves once the one running, if any, is done. */
  stop(): Promise<void>;
}

/** Sweeps after `firstAfter` resolves, then every `everyMs`, on a timer that does not keep the process alive. */
export function startSweeper(wiring: SettleWiring, firstAfter: Promise<void>, everyMs = SWEEP_EVERY_MS): Sweeper {
  let running: Promise<void> | undefined;
  let stopped = false;
  const sweep = () =>
    (running ??= sweepOnce(wiring).finally(() => {
      running = undefined;
    }));
  const timer = setInterval(() => void sweep(), everyMs).unref();
  void firstAfter.then(() => (stopped ? undefined : sweep()));
  return {
    sweep,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

async function sweepOnce(wiring: SettleWiring): Promise<void> {
  try {
    const { ended, overdue, continued } = await sweepStuckUploads(settleDeps(wiring));
    if (overdue > 0)
      wiring.log(
        `sweep: ${ended} stuck upload(s) ended failed, ${overdue} overdue` +
          `${continued > 0 ? `, ${continued} left to a continuation` : ''}`,
      );
  } catch (error) {
    wiring.log(`sweep failed: ${(error as Error).message}`);
  }
}
