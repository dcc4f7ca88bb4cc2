/**
 * What the lab commands share: their dependencies (injectable, so tests run them
 * in-process against real local peers) and turning failures into `error: ...`.
 */
import { LabelError } from '../shared/labels.ts';
import { ApiClient, type ApiClientDeps } from './api-client.ts';
import { CliError, type Output } from './io.ts';
import { Target, type TargetDeps, type TargetFlags } from './target.ts';

export interface CliDeps extends TargetDeps, ApiClientDeps {
  /** upload --wait: time between polls of GET /uploads (1 s). */
  pollIntervalMs?: number;
}

/** The API client of the lab the flags name (or that is found without them, announced on stderr). */
export async function apiClientFor(flags: TargetFlags, deps: CliDeps, io: Output): Promise<ApiClient> {
  const target = new Target(flags, deps);
  const api = new ApiClient(await target.api(), deps);
  announceTarget(target, io);
  return api;
}

/** Says which lab a command uses when no flag named it: one line on stderr, results stay alone on stdout. */
export function announceTarget(target: Target, io: Output): void {
  const line = target.announcement();
  if (line !== undefined) io.err(line);
}

/** Runs a command; a failure it can explain is printed as `error: <message>` with exit code 1. */
export async function guarded(io: Output, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`error: ${error.message}`);
      return error.exitCode;
    }
    if (error instanceof LabelError) {
      io.err(`error: ${error.message}`);
      return 1;
    }
    io.err(`error: ${(error as Error).message ?? String(error)}`);
    return 1;
  }
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** ISO times without milliseconds; anything else as given. */
export function shortTime(time: string | undefined): string {
  if (!time) return '-';
  return time.replace(/\.\d+Z$/, 'Z');
}
