/**
 * iostat text reports from Solaris/illumos, Linux sysstat and FreeBSD, read line
 * by line. The platform modules recognise header lines; this module follows the
 * session around them: banners and commands that open a run, timestamps, avg-cpu
 * and tty blocks, repeated headers that open a report, rows that belong to it.
 *
 *   tunefs -a 1 /opt                                  <- context of the next run
 *   extended device statistics
 *   r/s w/s kr/s kw/s wait actv wsvc_t asvc_t %w %b device
 *   0.0 6028.7 0.0 48244.4 127.0 222.2 21.1 36.9 80 98 c0t0d0
 *
 * yields IostatRun { platform: 'solaris', dialect: 'solaris-xn', context: ['tunefs -a 1 /opt'],
 *   reports: 1, series: [{ device: 'c0t0d0', samples: [{ report: 0, sinceBoot: true,
 *   values: { write_iops: 6028.7, write_kBps: 48244.4, iops: 6028.7, ... }, raw: { 'w/s': 6028.7, ... } }] }] }
 */
import type { IostatMeta } from '../model.ts';
import { commandFromLine, commandName, MAX_CONTEXT_LINES, printsBootReport } from './context.ts';
import { ParseError } from './errors.ts';
import type { TableLayout } from './iostat-layout.ts';
import type { LinuxBanner } from './iostat-linux.ts';
import { IostatRunBuilder, MAX_COLUMNS, RunSequence } from './iostat-run.ts';
import { headerLayout, isNumberRow, sessionLine, type SessionLine } from './iostat-sessions.ts';
import { countNumeric, ends, MAX_TOKENS, nonNumericTokens, numbers, starts, tokenize } from './iostat-tokens.ts';
import { decodeLine } from './lines.ts';
import { nearMiss } from './near-misses.ts';
import { parseIostatNumber, splitOverflow } from './numbers.ts';
import type { LineParser, OpenReport, ParserOptions } from './types.ts';

/** How C printf writes a value that is not a number: `nan`, `-nan`, `inf`, `-inf`. */
const NOT_A_NUMBER = /^[-+]?(?:nan|inf(?:inity)?)$/i;

interface ActiveLayout {
  /** The header line as printed (trimmed), and the run it was read for: a repeat of it is recognised at once. */
  text: string;
  builder: IostatRunBuilder;
  layout: TableLayout;
  ids: Int16Array;
  /** By token position in a row: 0 where the value is never read, so the tokenizer may skip it. */
  needed: Uint8Array;
  /** Value columns; a row has 1 more token for the device, maybe 1 for a mount point. */
  width: number;
  headerLine: number;
}

type Warning = { line: number; message: string };

/** Text lines kept from before the first run, for the error of a file with none. */
const SEEN_TEXT_LINES = 200;

/**
 * A repeat of the header after prose that holds no command: the session may go on (a paste in two
 * pieces) or a new run may start. The first row decides: a device of the report before means it goes on.
 */
interface HeldHeader {
  text: { line: number; text: string }[];
  firstLine: number;
  headerLine: number;
  time: string | undefined;
}

export function createIostatParser(options: ParserOptions, firstRunIndex = 0): LineParser {
  return new IostatTextParser(options, firstRunIndex);
}

/** Device names by row position in the report: rows come in the same order every report, so a name is decoded once. */
class DeviceNames {
  private readonly cache: { bytes: Buffer; name: string }[] = [];
  private position = 0;

  /** A new report: its first row comes next. */
  rewind(): void {
    this.position = 0;
  }

  name(buf: Buffer, start: number, end: number): string {
    const position = this.position++;
    const cached = this.cache[position];
    const length = end - start;
    if (cached !== undefined && cached.bytes.length === length) {
      const bytes = cached.bytes;
      let i = 0;
      while (i < length && bytes[i] === buf[start + i]) i++;
      if (i === length) return cached.name;
    }
    const name = decodeLine(buf, start, end);
    this.cache[position] = { bytes: Buffer.from(buf.subarray(start, end)), name };
    return name;
  }
}

/**
 * The state machine of a text report: rows go to the run being built; headers,
 * session lines (iostat-sessions.ts) and text are read by their own steps.
 */
class IostatTextParser implements LineParser {
  private readonly runs: RunSequence;
  private run: IostatRunBuilder | undefined;
  private active: ActiveLayout | undefined;
  /** Lines after the last row that were not part of a table: context, or prose inside one (the latest few). */
  private pendingText: { line: number; text: string }[] = [];
  private pendingFirstLine = 0;
  private pendingTime: string | undefined;
  /** What a banner said about the next run: its meta, name and first line. */
  private pendingMeta: IostatMeta = {};
  private pendingName = '';
  private pendingStart = 0;
  /** Inside an avg-cpu or tty block: its numeric rows are not device rows. */
  private skipBlock = false;
  private lastHeaderLine = 0;
  private firstOrphanRow = 0;
  /** Warnings met before any run began (a bad timestamp above the first header). */
  private earlyWarnings: Warning[] = [];
  private lastLine = 0;
  private open: OpenReport | undefined;
  private readonly devices = new DeviceNames();
  private held: HeldHeader | undefined;
  /** The first lines of text while no run has begun: what the error names when none does. */
  private readonly seenText: { text: string; no: number }[] = [];

  constructor(
    private readonly options: ParserOptions,
    firstRunIndex: number,
  ) {
    this.runs = new RunSequence(options.onRun, firstRunIndex);
  }

  lineBytes(buf: Buffer, start: number, end: number, lineNo: number): boolean {
    const count = tokenize(buf, start, end, this.skipBlock ? undefined : this.active?.needed);
    // Blank lines end avg-cpu and tty blocks; the numbers inside those blocks are not device rows.
    if (count === 0 || (this.skipBlock && count >= 2 && nonNumericTokens() === 0)) {
      if (count === 0) this.skipBlock = false;
      this.lastLine = lineNo;
      return true;
    }
    if (this.active === undefined || this.skipBlock) return false;
    if (count < 2 || count > MAX_TOKENS || !this.acceptRow(buf, count, lineNo)) return false;
    this.lastLine = lineNo;
    return true;
  }

  line(text: string, lineNo: number): void {
    this.lastLine = lineNo;
    const bytes = Buffer.from(text, 'utf8');
    const count = tokenize(bytes, 0, bytes.length);
    if (
      this.active !== undefined &&
      !this.skipBlock &&
      count > 1 &&
      count <= MAX_TOKENS &&
      this.acceptRow(bytes, count, lineNo)
    )
      return;
    this.slowLine(text, lineNo, count);
  }

  openReport(): OpenReport | undefined {
    return this.open;
  }

  end(last: number): void {
    if (this.held !== undefined) this.resolveHeld(false);
    const run = this.run;
    // A header after the end would continue this run: it has rows, and no text since them opens another.
    if (run !== undefined && run.hasRows && this.pendingText.length === 0)
      this.open = { columns: run.announcedColumns() };
    this.finishRun(last || this.lastLine);
    if (this.runs.emitted === 0) throw this.noRun();
  }

  /** Why the input held no run, at the line that tells most. */
  private noRun(): ParseError {
    const source = this.options.source;
    if (this.runs.firstSkipped !== undefined) {
      return new ParseError({
        source,
        line: this.runs.firstSkipped.line,
        problem: `no device row fits the iostat header: ${this.runs.firstSkipped.message}`,
        expected: 'rows with a number for every column of the header and the device name',
      });
    }
    if (this.lastHeaderLine > 0) {
      return new ParseError({
        source,
        line: this.lastHeaderLine,
        problem: 'an iostat header with no device rows under it',
        expected: 'device rows such as "sda 1.00 2.00 ..." after the header',
      });
    }
    const near = nearMiss(this.seenText);
    if (near !== undefined) {
      return new ParseError({
        source,
        line: near.line,
        problem: `no iostat table found: the line "${near.excerpt}" looks like ${near.looksLike}`,
        expected: 'an iostat header line of a layout benchdrop reads, and device rows',
      });
    }
    if (this.firstOrphanRow > 0) {
      return new ParseError({
        source,
        line: this.firstOrphanRow,
        problem: 'rows of numbers with no iostat header before them',
        expected: 'a header line naming the columns (e.g. "r/s w/s kr/s kw/s ... device" or "Device r/s rkB/s ...")',
      });
    }
    return new ParseError({
      source,
      line: 0,
      problem: 'no iostat table found',
      expected: 'an iostat -x header line and device rows',
    });
  }

  private finishRun(endLine: number): void {
    const run = this.run;
    if (run === undefined) return;
    this.runs.finish(run, endLine);
    this.run = undefined;
    this.active = undefined;
  }

  /** The commands among the pending text: the context of the run that starts now. */
  private takeContext(): string[] {
    const context: string[] = [];
    for (const { text } of this.pendingText) {
      const command = commandFromLine(text);
      if (command === undefined) continue;
      context.push(command);
      if (context.length > MAX_CONTEXT_LINES) context.shift();
      if (commandName(command) === 'iostat') this.pendingMeta.command = command;
    }
    this.pendingText = [];
    return context;
  }

  /** The run new rows go to: the current one, unless text after its rows opened a new one. */
  private runFor(line: number, layout: TableLayout | undefined): IostatRunBuilder {
    if (this.run !== undefined && this.run.hasRows && this.pendingText.length > 0)
      this.finishRun(this.pendingFirstLine - 1);
    return this.run ?? this.startRun(line, layout);
  }

  private startRun(line: number, layout: TableLayout | undefined): IostatRunBuilder {
    const context = this.takeContext();
    // Only the first run of a part can continue a run of the previous part.
    const continuation =
      this.options.continuation === true && this.runs.emitted === 0 && context.length === 0 && this.pendingStart === 0;
    const command = this.pendingMeta.command;
    const run = new IostatRunBuilder(
      {
        index: this.runs.nextIndex(),
        platform: layout?.platform ?? 'linux',
        dialect: layout?.dialect ?? 'unknown',
        name: this.pendingName,
        context,
        meta: this.pendingMeta,
        startLine: this.pendingStart || line,
        sinceBootFirst: printsBootReport(layout?.platform ?? 'linux', command),
      },
      { ...this.options, continuation },
    );
    this.run = run;
    this.pendingMeta = {};
    this.pendingName = '';
    this.pendingStart = 0;
    for (const w of this.earlyWarnings) run.warn(w.line, w.message);
    this.earlyWarnings = [];
    return run;
  }

  warn(line: number, message: string): void {
    if (this.run !== undefined) this.run.warn(line, message);
    else this.earlyWarnings.push({ line, message });
  }

  /** A header line read for the first time under this run. */
  private onHeader(layout: TableLayout, line: number, text: string): void {
    const current = this.runFor(line, layout);
    if (!current.hasRows) current.dialect = layout.dialect;
    if (layout.repair !== undefined) current.warn(line, layout.repair);
    const ids = current.columnIdsFor(layout.columns, (name) =>
      current.warn(
        line,
        `column "${name}" printed twice in the header; ` +
          `its second values are kept as "${name} (2)" and used for no metric`,
      ),
    );
    if (ids === undefined) {
      current.warn(line, `more than ${MAX_COLUMNS} distinct columns in one run: header ignored`);
      return;
    }
    const needed = new Uint8Array(layout.columns.length + 1).fill(1);
    const first = layout.deviceAt === 'first' ? 1 : 0;
    ids.forEach((id, i) => (needed[first + i] = current.reads(id) ? 1 : 0));
    this.active = { text, builder: current, layout, ids, needed, width: layout.columns.length, headerLine: line };
    this.startReport(current, ids, line);
  }

  /** Rows of a new report (or of another group of this one) follow the header at `line`. */
  private startReport(builder: IostatRunBuilder, ids: Int16Array, line: number): void {
    builder.header(ids, this.pendingTime);
    this.pendingTime = undefined;
    this.devices.rewind();
    this.lastHeaderLine = line;
    this.skipBlock = false;
  }

  /**
   * Every report repeats its header: the same line under the same run needs no
   * second reading. True if the line was that repeat.
   */
  private repeatedHeader(trimmed: string, lineNo: number): boolean {
    const cached = this.active;
    if (cached === undefined || trimmed !== cached.text) return false;
    if (cached.headerLine === lineNo - 1 && cached.builder === this.run) {
      // The same header twice in a row (a paste): one report, not an empty one before it.
      this.run.warn(lineNo, `the header of line ${cached.headerLine} repeated; the repeat is ignored`);
      cached.headerLine = lineNo;
      return true;
    }
    if (this.holdsHeader(cached, lineNo)) return true;
    if (this.runFor(lineNo, cached.layout) !== cached.builder) return false;
    cached.headerLine = lineNo;
    this.startReport(cached.builder, cached.ids, lineNo);
    return true;
  }

  /** A repeat of the header after prose with no command in it: held until its first row says whose it is. */
  private holdsHeader(cached: ActiveLayout, lineNo: number): boolean {
    const run = this.run;
    if (run !== cached.builder || !run.hasRows || this.pendingText.length === 0) return false;
    if (this.pendingText.some(({ text }) => commandFromLine(text) !== undefined)) return false;
    this.held = {
      text: this.pendingText,
      firstLine: this.pendingFirstLine,
      headerLine: lineNo,
      time: this.pendingTime,
    };
    this.pendingText = [];
    this.pendingTime = undefined;
    cached.headerLine = lineNo;
    this.devices.rewind();
    this.lastHeaderLine = lineNo;
    this.skipBlock = false;
    return true;
  }

  /** The held header's fate: a new report of the run (`goesOn`), or the header of a new run after the prose. */
  private resolveHeld(goesOn: boolean): void {
    const held = this.held!;
    const a = this.active!;
    this.held = undefined;
    if (goesOn) {
      for (const { line, text } of held.text)
        a.builder.warn(line, `text between two pieces of one session ignored: "${text.slice(0, 80)}"`);
      this.pendingTime = held.time;
      this.startReport(a.builder, a.ids, held.headerLine);
      return;
    }
    this.pendingText = held.text;
    this.pendingFirstLine = held.firstLine;
    this.pendingTime = held.time;
    this.onHeader(a.layout, held.headerLine, a.text);
  }

  /** A line that ends a held header's wait for its first row: anything but a blank line (rows follow headers). */
  private endsHold(trimmed: string): boolean {
    return trimmed.length > 0;
  }

  /** The row in buf, if it is one for the active layout (tokens already split). */
  private acceptRow(buf: Buffer, count: number, lineNo: number): boolean {
    const a = this.active!;
    const width = a.width;
    let deviceToken: number;
    let mount: string | undefined;
    let valueStart: number;
    if (a.layout.deviceAt === 'first') {
      if (count < width + 1 || count > width + 1 + Math.max(a.layout.optionalTail, 1)) return false;
      deviceToken = 0;
      valueStart = 1;
      if (count > width + 1 && a.layout.optionalTail === 0) {
        // Only a mount point may follow the values.
        mount = mountAt(buf, width + 1);
        if (mount === undefined) return false;
      }
    } else {
      if (count === width + 2) {
        mount = mountAt(buf, width + 1);
        if (mount === undefined) return false;
      } else if (count !== width + 1) return false;
      deviceToken = width;
      valueStart = 0;
    }
    // Every value a number, the device name not: exactly one word (two with a mount point).
    if (nonNumericTokens() !== (mount === undefined ? 1 : 2) || !Number.isNaN(numbers[deviceToken])) return false;
    // A tag glued to the device (`<b>sda`, `c0t21d0</pre>`): the text path takes it off first.
    if (buf[starts[deviceToken]!] === 0x3c || buf[ends[deviceToken]! - 1] === 0x3e) return false;
    const device = this.devices.name(buf, starts[deviceToken]!, ends[deviceToken]!);
    if (this.held !== undefined) this.resolveHeld(this.run!.inLatestReport(device));
    // Rows go on under the same header: text seen since the last row was prose inside the table.
    if (this.pendingText.length > 0 && this.run?.hasRows) this.warnProseInsideTable();
    const ids = this.active!.ids;
    const current = this.runFor(lineNo, a.layout);
    current.row(device, mount === undefined ? undefined : unwrapMount(mount), ids, numbers, valueStart, lineNo);
    return true;
  }

  private warnProseInsideTable(): void {
    for (const { line, text } of this.pendingText)
      this.run?.warn(line, `text inside the table ignored: "${text.trim().slice(0, 80)}"`);
    this.pendingText = [];
  }

  /** A line that looks like a row of numbers but does not fit: maybe values ran into each other. */
  private repairRow(text: string, lineNo: number): boolean {
    const tokens = text.trim().split(/\s+/);
    const decimals = commonDecimals(tokens);
    let repaired = false;
    const fixed: string[] = [];
    for (const token of tokens) {
      const parts = splitOverflow(token, decimals);
      if (parts) {
        fixed.push(...parts);
        repaired = true;
      } else fixed.push(token);
    }
    if (!repaired) return false;
    const rebuilt = fixed.join(' ');
    const bytes = Buffer.from(rebuilt, 'utf8');
    if (!this.acceptRow(bytes, tokenize(bytes, 0, bytes.length), lineNo)) return false;
    this.run?.warn(lineNo, `values ran into each other; read as: ${rebuilt}`);
    return true;
  }

  /**
   * A row that fits the header but for values printed as `nan`, `-nan` or `inf`
   * (sysstat after a division by zero): skipped with a warning naming the column.
   */
  private notANumber(tokens: readonly string[], a: ActiveLayout, lineNo: number): boolean {
    if (tokens.length !== a.width + 1) return false;
    const first = a.layout.deviceAt === 'first' ? 1 : 0;
    const device = tokens[a.layout.deviceAt === 'first' ? 0 : a.width]!;
    if (NOT_A_NUMBER.test(device) || !Number.isNaN(parseIostatNumber(device))) return false;
    let bad: number | undefined;
    for (let i = 0; i < a.width; i++) {
      const token = tokens[first + i]!;
      if (!Number.isNaN(parseIostatNumber(token))) continue;
      if (!NOT_A_NUMBER.test(token)) return false;
      bad ??= i;
    }
    if (bad === undefined) return false;
    if (this.pendingText.length > 0 && this.run?.hasRows) this.warnProseInsideTable();
    const message = `row skipped: ${a.layout.columns[bad]!.name} is "${tokens[first + bad]}", not a number`;
    this.runFor(lineNo, a.layout).skipRow(lineNo, message);
    return true;
  }

  /** A line that is no row of the active table: a header, a line of the session, or text. */
  private slowLine(text: string, lineNo: number, count: number): void {
    const trimmed = text.trim();
    if (this.held !== undefined && this.endsHold(trimmed)) this.resolveHeld(false);
    if (trimmed.length > 0 && this.repeatedHeader(trimmed, lineNo)) return;
    const tokens = trimmed.split(/\s+/);
    const layout = trimmed.length > 0 ? headerLayout(tokens) : undefined;
    if (layout) {
      this.onHeader(layout, lineNo, trimmed);
      return;
    }
    const line = sessionLine(trimmed, tokens);
    if (line.kind === 'text') this.textLine(text, trimmed, tokens, lineNo, count);
    else this.sessionStep(line, trimmed, lineNo);
  }

  /** A line of the session around the tables (iostat-sessions.ts). */
  private sessionStep(line: Exclude<SessionLine, { kind: 'text' }>, trimmed: string, lineNo: number): void {
    switch (line.kind) {
      case 'blank':
        this.skipBlock = false;
        return;
      case 'title':
        return;
      case 'cpu-block':
        this.skipBlock = true;
        return;
      case 'banner':
        this.bannerLine(line.banner, lineNo);
        return;
      case 'time':
        if ('iso' in line.time) this.pendingTime = line.time.iso;
        else
          this.warn(
            lineNo,
            `timestamp "${trimmed}" is not a valid date (${line.time.invalid}); the report is kept without a time`,
          );
        return;
    }
  }

  /** A sysstat banner: the run before it ends, and the next one is of this host. */
  private bannerLine(banner: LinuxBanner, lineNo: number): void {
    this.finishRun(lineNo - 1);
    this.pendingMeta = { os: banner.os, kernel: banner.kernel, host: banner.host };
    if (banner.date) this.pendingMeta.date = banner.date;
    if (banner.cpus !== undefined) this.pendingMeta.cpus = banner.cpus;
    this.pendingName = banner.host;
    this.pendingStart = lineNo;
  }

  /** A line of text: a row that does not fit (repaired, or skipped), rows without a header, or context and prose. */
  private textLine(text: string, trimmed: string, tokens: readonly string[], lineNo: number, count: number): void {
    const numeric = countNumeric(count);
    if (this.skipBlock && numeric === count) return;
    // `iostat -xn 5 2`, `sleep 5 10`: mostly numbers, but a command, so context.
    const command = commandFromLine(trimmed) !== undefined;
    const active = this.active;
    // Before the command test: `sdb 1.46 -nan 8.03` reads like a command with an option.
    if (active !== undefined && this.notANumber(tokens, active, lineNo)) return;
    if (active !== undefined && !command && isNumberRow(count, numeric)) {
      if (this.repairRow(text, lineNo)) return;
      if (this.pendingText.length === 0) {
        const columns = active.layout.columns.map((c) => c.name).join(' ');
        const header =
          `the header at line ${active.headerLine} ` + `has ${active.width} columns and a device name (${columns})`;
        this.runFor(lineNo, active.layout).skipRow(
          lineNo,
          `ragged row skipped: ${tokens.length} fields where ${header}`,
        );
        return;
      }
    }
    if (active === undefined && !command && isNumberRow(count, numeric, 1)) {
      if (this.firstOrphanRow === 0) this.firstOrphanRow = lineNo;
      return;
    }
    if (this.runs.emitted === 0 && this.seenText.length < SEEN_TEXT_LINES)
      this.seenText.push({ text: trimmed, no: lineNo });
    // Only the lines nearest the next table can be its context: memory stays bounded under any amount of prose.
    if (this.pendingText.length === 0) this.pendingFirstLine = lineNo;
    else if (this.pendingText.length >= 4 * MAX_CONTEXT_LINES) this.pendingText.shift();
    this.pendingText.push({ line: lineNo, text: trimmed });
  }
}

/** The mount point printed in token `at` of the last tokenized row, if that token is one. */
function mountAt(buf: Buffer, at: number): string | undefined {
  const token = decodeLine(buf, starts[at]!, ends[at]!);
  return isMount(token) ? token : undefined;
}

function isMount(token: string): boolean {
  return token.startsWith('/') || (token.startsWith('(') && token.endsWith(')'));
}

function unwrapMount(token: string): string {
  return token.startsWith('(') ? token.slice(1, -1) : token;
}

/** The number of fraction digits most tokens of the line have (iostat prints fixed precision). */
function commonDecimals(tokens: readonly string[]): number {
  const counts = new Map<number, number>();
  for (const token of tokens) {
    const m = /^-?\d+[.,](\d+)$/.exec(token);
    if (m) counts.set(m[1]!.length, (counts.get(m[1]!.length) ?? 0) + 1);
  }
  let best = 0;
  let bestCount = 0;
  for (const [decimals, n] of counts) if (n > bestCount) [best, bestCount] = [decimals, n];
  return best;
}
