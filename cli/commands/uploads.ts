/**
 * `benchdrop uploads [--status S] [--history] [--limit N] [--json]`: what became
 * of the logs dropped into the lab (GET /uploads, as many pages as --limit asks
 * for, 100 by default), newest update first: each key's current state, or with
 * --history every version of every key (`replaced` ones naming the version that
 * replaced them), and how many more there are past --limit.
 *
 * Every line about an upload, here and in `upload --wait`, is outcomeLine's:
 * the status, the key once, then what happened (the message carries its line).
 */
import type { UploadListing } from '../../shared/api.ts';
import { printable } from '../../shared/printable.ts';
import { UPLOAD_STATUSES } from '../../shared/upload-status.ts';
import type { Query } from '../api-client.ts';
import { plural } from '../../shared/comparison/format.ts';
import {
  apiClientFor,
  guarded,
  limitOption,
  listingJson,
  moreText,
  NO_LOGS_YET,
  shortTime,
  type CliDeps,
} from '../context.ts';
import { CliError, type Output } from '../io.ts';
import { renderTable } from '../table.ts';
import type { TargetFlags } from '../target.ts';

export interface UploadsOptions extends TargetFlags {
  status?: string;
  history?: boolean;
  limit?: string | number;
  json?: boolean;
}

/** What became of an upload, without its key: its runs, why it failed, what replaced it. */
export function outcomeText(record: UploadListing): string {
  if (record.status === 'ready')
    return `${plural(record.runCount, 'run')}${record.message ? ` (${printable(record.message)})` : ''}`;
  if (record.status === 'replaced') return `replaced by version ${printable(record.replacedBy ?? 'unknown')}`;
  if (record.status === 'processing') return 'being ingested';
  return printable(record.message ?? 'no reason given');
}

/** One upload in one line: `failed sas10k/notes.txt: line 3: ...`, the key said once. */
export function outcomeLine(record: UploadListing): string {
  return `${record.status} ${printable(record.key)}: ${outcomeText(record)}`;
}

export function uploadsCommand(options: UploadsOptions, io: Output, deps: CliDeps = {}): Promise<number> {
  return guarded(io, async () => {
    const limit = limitOption(options.limit, 'uploads');
    if (options.status !== undefined && !(UPLOAD_STATUSES as readonly string[]).includes(options.status)) {
      throw new CliError(`--status ${options.status}: expected one of ${UPLOAD_STATUSES.join(', ')}`);
    }
    const api = await apiClientFor(options, deps, io);
    const filters: Query = { status: options.status, ...(options.history ? { history: 'true' } : {}) };
    const { items: uploads, next } = await api.list<UploadListing>('/uploads', 'uploads', filters, limit);
    if (options.json) {
      io.out(listingJson('uploads', uploads, next));
      return 0;
    }
    if (uploads.length === 0 && next === undefined) {
      io.out(emptyText(options));
      return 0;
    }
    const rows = uploads.map((u) => [
      u.status,
      printable(u.key),
      printable(u.version),
      shortTime(u.updatedAt),
      outcomeText(u),
    ]);
    if (uploads.length > 0)
      io.out(
        renderTable(['status', 'key', 'version', 'updated', 'outcome'], rows, '', [
          'left',
          'left',
          'left',
          'left',
          'left',
        ]),
      );
    io.out(
      next === undefined
        ? plural(uploads.length, 'upload')
        : await moreText(
            api,
            { path: '/uploads', field: 'uploads', noun: 'upload', narrowedBy: '--status' },
            filters,
            uploads.length,
            next,
          ),
    );
    return 0;
  });
}

function emptyText(options: UploadsOptions): string {
  if (options.status === 'replaced' && !options.history)
    return 'no key is in state replaced: a replaced version is history, --history lists it';
  if (options.status)
    return `no uploads are ${options.status}${options.history ? '' : ' (--history lists every version)'}`;
  return `no uploads yet: ${NO_LOGS_YET}`;
}
