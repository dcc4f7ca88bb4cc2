/**
 * The local lab's command-line options, shared by `npm start` (main.ts) and
 * `benchdrop lab` (which runs main.ts in a process of its own). Kept apart from
 * the lab itself so the CLI can offer them without loading the emulators.
 */
import { Option, type Command } from 'commander';
import { LAB_DEFAULTS } from '../../shared/config.ts';

/** Fixed defaults so the printed lines stay the same from one start to the next. */
export const DEFAULT_PORTS = { s3: 4569, api: 4580 };
/** Loopback only, unless --host and --allow-non-loopback say otherwise: the lab has no authentication. */
export const DEFAULT_HOST = '127.0.0.1';

export interface LabCommandOptions {
  data: string;
  fresh?: boolean;
  samples: boolean;
  s3Port: number;
  apiPort: number;
  host: string;
  allowNonLoopback?: boolean;
  maxSeriesPerFile: number;
}

export function labOptions(command: Command): Command {
  const port = (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`not a port: ${value} (0 picks a free one)`);
    return n;
  };
  const positive = (value: string) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`not a positive whole number: ${value}`);
    return n;
  };
  return command
    .option('--data <dir>', 'where the lab keeps its S3 objects and tables', '.benchdrop')
    .option('--fresh', 'start with an empty data folder')
    .option('--no-samples', 'do not ingest the demo logs')
    .addOption(
      new Option('--s3-port <port>', 'local S3 port (0: any free port)').default(DEFAULT_PORTS.s3).argParser(port),
    )
    .addOption(
      new Option('--api-port <port>', 'API and report page port (0: any free port)')
        .default(DEFAULT_PORTS.api)
        .argParser(port),
    )
    .option('--host <address>', 'address to bind (a non-loopback one needs --allow-non-loopback)', DEFAULT_HOST)
    .option('--allow-non-loopback', 'allow binding an address other than loopback (the lab has no authentication)')
    .addOption(
      new Option('--max-series-per-file <n>', 'most series (devices x runs) one uploaded file may hold')
        .default(LAB_DEFAULTS.maxSeriesPerFile)
        .argParser(positive),
    );
}
