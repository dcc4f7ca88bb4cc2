/**
 * The lab queue's journal: the messages not yet done with, one file each in
 * <dataDir>/queue/, so that a crash (kill -9, a power cut) loses none. SQS keeps a
 * message until its consumer deletes it; here a message file is written before
 * the request that caused the message is answered, rewritten when it is received
 * (its receive count) or prepared, and removed only once its handler is done with
 * it (it succeeded, or the message was dead-lettered).
 *
 * Every write goes to a temporary name, is fsync'd, renamed into place, and the
 * folder is fsync'd: a message file is whole or absent, whatever stops the lab.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** One message as it is kept on disk. */
export interface JournalEntry {
  messageId: string;
  /** Delivery order, kept across restarts. */
  seq: number;
  /** When it was sent (SQS's SentTimestamp). */
  sentAt: string;
  /** Deliveries so far (SQS's ApproximateReceiveCount), counted before each one starts. */
  receives: number;
  /** The SQS message body. */
  body: string;
  /** Set while the body still needs its first preparation (see LocalQueueOptions.prepare). */
  unprepared?: true;
}

export interface DeadLetter {
  messageId: string;
  body: string;
  receives: number;
  failedAt: string;
}

export interface LoadedJournal {
  /** In delivery order. */
  entries: JournalEntry[];
  /**
   * Files that could not be read back: torn temporary files (dropped), message files (set aside as
   * `<name>.unreadable`).
   */
  unreadable: string[];
}

const ENTRY_SUFFIX = '.json';
const TEMP_SUFFIX = '.tmp';

export class Journal {
  private deadLetters: { ids: Set<string>; cutShort: boolean } | undefined;

  /**
   * @param dir the folder of message files (created when missing)
   * @param deadLetterFile where dead letters are appended, one JSON line each
   */
  constructor(
    readonly dir: string,
    readonly deadLetterFile: string,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  /** Every message kept, finishing what a crash interrupted first. */
  load(): LoadedJournal {
    const unreadable: string[] = [];
    for (const name of readdirSync(this.dir).filter((n) => n.endsWith(TEMP_SUFFIX)))
      this.settleTemporary(join(this.dir, name), unreadable);
    const entries: JournalEntry[] = [];
    for (const name of readdirSync(this.dir).filter((n) => n.endsWith(ENTRY_SUFFIX))) {
      const path = join(this.dir, name);
      const entry = readEntry(path);
      if (entry) entries.push(entry);
      else unreadable.push(setAside(path));
    }
    return { entries: entries.sort((a, b) => a.seq - b.seq), unreadable };
  }

  /** Writes a message (new or changed) durably: when this returns, it survives a crash. */
  write(entry: JournalEntry): void {
    writeDurably(this.pathOf(entry), `${JSON.stringify(entry)}\n`);
  }

  /** The message is done with: it will not be delivered again. */
  remove(entry: JournalEntry): void {
    try {
      unlinkSync(this.pathOf(entry));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    syncDirectory(this.dir);
  }

  /**
   * Appends a dead letter durably, once: a crash between this and the message's
   * removal dead-letters it again on the next start, which must not list it twice.
   */
  recordDeadLetter(letter: DeadLetter): void {
    this.deadLetters ??= readDeadLetters(this.deadLetterFile);
    if (this.deadLetters.ids.has(letter.messageId)) return;
    // After a line a crash cut short, a new line starts on a line of its own.
    appendDurably(this.deadLetterFile, `${this.deadLetters.cutShort ? '\n' : ''}${JSON.stringify(letter)}\n`);
    this.deadLetters = { ids: this.deadLetters.ids.add(letter.messageId), cutShort: false };
  }

  private pathOf(entry: JournalEntry): string {
    // Zero-padded, so that a listing sorts in delivery order.
    return join(this.dir, `${String(entry.seq).padStart(12, '0')}-${entry.messageId}${ENTRY_SUFFIX}`);
  }

  /**
   * A temporary file is a write the crash cut short. Whole, it is the newest
   * state of its message (a new message whose request may not have been answered:
   * S3 already holds the object, so delivering it is what S3 would do); cut, it
   * is dropped and the previous state, if any, stands.
   */
  private settleTemporary(path: string, unreadable: string[]): void {
    if (readEntry(path)) {
      renameSync(path, path.slice(0, -TEMP_SUFFIX.length));
    } else {
      unlinkSync(path);
      unreadable.push(basename(path));
    }
    syncDirectory(this.dir);
  }
}

/** Bodies an earlier version kept in pending-messages.jsonl on a clean stop: sent again, then the file goes. */
export function adoptPendingFile(file: string, send: (body: string) => void): number {
  if (!existsSync(file)) return 0;
  const bodies = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  // Each body is journaled as it is sent: a crash here at worst sends some twice, which ingestion absorbs.
  for (const body of bodies) send(body);
  rmSync(file);
  syncDirectory(dirname(file));
  return bodies.length;
}

function readEntry(path: string): JournalEntry | undefined {
  try {
    const entry = JSON.parse(readFileSync(path, 'utf8')) as JournalEntry;
    const valid =
      typeof entry.messageId === 'string' &&
      Number.isSafeInteger(entry.seq) &&
      Number.isSafeInteger(entry.receives) &&
      typeof entry.body === 'string' &&
      typeof entry.sentAt === 'string';
    return valid ? entry : undefined;
  } catch {
    return undefined;
  }
}

function setAside(path: string): string {
  const aside = `${path}.unreadable`;
  renameSync(path, aside);
  return basename(aside);
}

/** The ids already listed, and whether the file ends inside a line (a crash cut its last append). */
function readDeadLetters(file: string): { ids: Set<string>; cutShort: boolean } {
  const ids = new Set<string>();
  if (!existsSync(file)) return { ids, cutShort: false };
  const text = readFileSync(file, 'utf8');
  for (const line of text.split('\n')) {
    try {
      ids.add((JSON.parse(line) as DeadLetter).messageId);
    } catch {
      // A line cut by a crash names no message.
    }
  }
  return { ids, cutShort: text.length > 0 && !text.endsWith('\n') };
}

/** Write to a temporary name, fsync, rename into place, fsync the folder. */
function writeDurably(path: string, text: string): void {
  const temporary = `${path}${TEMP_SUFFIX}`;
  const fd = openSync(temporary, 'w');
  try {
    writeFileSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  syncDirectory(dirname(path));
}

function appendDurably(path: string, text: string): void {
  const created = !existsSync(path);
  const fd = openSync(path, 'a');
  try {
    writeFileSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (created) syncDirectory(dirname(path));
}

/** A rename or unlink is durable once its folder is synced (POSIX; Windows cannot open a folder for it). */
function syncDirectory(dir: string): void {
  if (process.platform === 'win32') return;
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
