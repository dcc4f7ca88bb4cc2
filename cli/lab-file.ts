/**
 * The local lab's endpoints file: `npm start` (infra/local/lab.ts) writes
 * `<data>/lab.json` once its servers listen, so a command run in the same
 * folder finds the lab without being told its ports. The file stays when the
 * lab stops; whether the lab still answers is found on the first request.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import type { LabEndpoints } from '../infra/local/lab.ts';
import { labOptions } from '../infra/local/options.ts';
import { CliError } from './io.ts';

export const LAB_FILE = 'lab.json';

/** The data folder `npm start` uses when given no --data: read from its own options, so it is written down once. */
export const DEFAULT_DATA_DIR = defaultOf(labOptions(new Command()), '--data');

/** A data folder's lab.json, as the user would name it (`.benchdrop/lab.json`). */
export const labFilePath = (dataDir: string) => join(dataDir, LAB_FILE);

/** Where a command run without --data looks for the running lab. */
export const DEFAULT_LAB_FILE = labFilePath(DEFAULT_DATA_DIR);

function defaultOf(command: Command, flag: string): string {
  const value: unknown = command.options.find((option) => option.long === flag)?.defaultValue;
  if (typeof value !== 'string') throw new Error(`the lab's options have no default for ${flag}`);
  return value;
}

/** What the CLI reads of lab.json. */
export type LabFileEndpoints = Pick<LabEndpoints, 'apiUrl' | 's3Endpoint' | 'bucket' | 'region'>;

export interface LabFile extends LabFileEndpoints {
  /** The file as the user would name it: the data folder as given, then lab.json (`.benchdrop/lab.json`). */
  path: string;
  /** The data folder as given, for messages. */
  dataDir: string;
}

const FIELDS = ['apiUrl', 's3Endpoint', 'bucket', 'region'] as const satisfies readonly (keyof LabFileEndpoints)[];

/**
 * The lab.json of the data folder named by --data, else of the default folder.
 * A default folder without one is no lab (undefined); a --data folder without
 * one is an error, as the user named a lab that is not there.
 */
export async function findLabFile(dataFlag: string | undefined, cwd: string): Promise<LabFile | undefined> {
  const dataDir = dataFlag ?? DEFAULT_DATA_DIR;
  const found = await readLabFile(dataDir, cwd);
  if (found === undefined && dataFlag !== undefined) {
    throw new CliError(
      `--data ${dataFlag}: there is no ${labFilePath(dataFlag)}; ` +
        `the lab writes it there when it starts (${startCommand(dataFlag)})`,
    );
  }
  return found;
}

/** `<dataDir>/lab.json` read and checked; undefined when there is no such file. */
export async function readLabFile(dataDir: string, cwd: string): Promise<LabFile | undefined> {
  const path = labFilePath(dataDir);
  let text: string;
  try {
    text = await readFile(resolve(cwd, path), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new CliError(`could not read ${path}: ${(error as Error).message}`);
  }
  return { path, dataDir, ...endpointsIn(text, path, dataDir) };
}

function endpointsIn(text: string, path: string, dataDir: string): LabFileEndpoints {
  const unlike = (why: string) =>
    new CliError(
      `${path} is not a lab's endpoints file (${why}); ` +
        `the lab writes a new one when it starts (${startCommand(dataDir)}), or name the lab with --api URL`,
    );
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw unlike('not JSON');
  }
  if (json === null || typeof json !== 'object') throw unlike('not a JSON object');
  const record = json as Record<string, unknown>;
  const missing = FIELDS.filter((field) => typeof record[field] !== 'string' || record[field] === '');
  if (missing.length > 0) throw unlike(`no ${missing.join(', ')}`);
  return Object.fromEntries(FIELDS.map((field) => [field, record[field]])) as LabFileEndpoints;
}

/** How to start the lab on this data folder: `npm start`, with `-- --data DIR` for another folder than the default. */
export function startCommand(dataDir: string): string {
  return dataDir === DEFAULT_DATA_DIR ? 'npm start' : `npm start -- --data ${dataDir}`;
}
