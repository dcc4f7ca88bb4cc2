/**
 * The functions' and queues' limits of shared/config.ts in CDK's terms. The
 * numbers live there, where the functions and the local lab read them too; only
 * what follows from them for the stack alone (a queue's visibility timeout) is
 * worked out here.
 */
import { Duration } from 'aws-cdk-lib';
import { API_LIMITS, DEAD_LETTER_LIMITS, INGEST_LIMITS, SWEEPER_LIMITS } from '../shared/config.ts';

/** Ingest function and queue. The queue's visibility timeout follows from the function timeout. */
export const INGEST = {
  timeout: Duration.seconds(INGEST_LIMITS.timeoutSeconds),
  memoryMB: INGEST_LIMITS.memoryMB,
  visibilityFactor: INGEST_LIMITS.visibilityFactor,
  batchSize: INGEST_LIMITS.batchSize,
  maxBatchingWindow: Duration.seconds(INGEST_LIMITS.maxBatchingWindowSeconds),
  maxConcurrency: INGEST_LIMITS.maxConcurrency,
} as const;

/** The ingest queue's visibility timeout (AWS guidance: a multiple of the function timeout). */
export const INGEST_VISIBILITY = Duration.seconds(INGEST.timeout.toSeconds() * INGEST.visibilityFactor);

/** Dead-letter function and its event source. */
export const DEAD_LETTER = {
  timeout: Duration.seconds(DEAD_LETTER_LIMITS.timeoutSeconds),
  memoryMB: DEAD_LETTER_LIMITS.memoryMB,
  batchSize: DEAD_LETTER_LIMITS.batchSize,
  maxConcurrency: DEAD_LETTER_LIMITS.maxConcurrency,
} as const;

/** The dead-letter queue's visibility timeout, by the same AWS guidance as the ingest queue's. */
export const DEAD_LETTER_VISIBILITY = Duration.seconds(DEAD_LETTER.timeout.toSeconds() * INGEST.visibilityFactor);

/** Sweeper function and its schedule. */
export const SWEEPER = {
  every: Duration.minutes(SWEEPER_LIMITS.everyMinutes),
  timeout: Duration.seconds(SWEEPER_LIMITS.timeoutSeconds),
  maxEventAge: Duration.seconds(SWEEPER_LIMITS.maxEventAgeSeconds),
  memoryMB: SWEEPER_LIMITS.memoryMB,
} as const;

/** API function. */
export const API = {
  timeout: Duration.seconds(API_LIMITS.timeoutSeconds),
  memoryMB: API_LIMITS.memoryMB,
} as const;
