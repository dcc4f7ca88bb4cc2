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
import { commandFromLine, commandName, MAX_CONTEXT_LINES } from './context.ts';
import { ParseError } from './errors.ts';
import { freebsdIostat } from './iostat-freebsd.ts';
import { TTY_CPU_COLUMNS, type IostatDialect, type TableLayout } from './iostat-layout.ts';
import { parseLinuxBanner } from './iostat-linux.ts';
import { linuxIostat } from './iostat-linux.ts';
import { IostatRunBuilder, MAX_COLUMNS } from './iostat-run.ts';
import { solarisIostat } from './iostat-solaris.ts';
import { decodeLine } from './lines.ts';
import { parseIostatNumber, splitOverflow } from './numbers.ts';
import { readTimestamp } from './timestamps.ts';
import type { LineParser, OpenReport, ParserOptions } from './types.ts';

const MAX_TOKENS = MAX_COLUMNS + 8;

// Token scratch space shared by every row: rows allocate nothing but the device name.
const starts = new Int32Array(MAX_TOKENS + 1);
const ends = new Int32Array(MAX_TOKENS + 1);
const numbers = new Float64Array(MAX_TOKENS + 1);

/**
 * Split bytes [from, to) of a line on blanks and read each token as a plain
 * decimal number (`12.5`, `12,5`, `-1`) where it is one, NaN where it is not.
 * Token offsets are absolute positions in buf. Returns the token count,
 * MAX_TOKENS + 1 if there are more.
 *
 * The hot loop of every parse: it reads no byte outside [from, to) (a line
 * decoded into a buffer of its own and ending in a digit, such as a time stamp,
 * was read one past its end, which makes V8 compile every read here to allow
 * for `undefined`), counts digits from positions, and tests a digit with one
 * unsigned comparison.
 */
function tokenize(buf: Uint8Array, from: number, to: number, needed?: Uint8Array): number {
  let count = 0;
  let i = from;
  let words = 0;
  for (;;) {
    // Blanks between tokens, in a loop of their own: sysstat pads columns with up to a dozen.
    let c = 32;
    while (i < to && ((c = buf[i]!) === 32 || c === 9)) i++;
    if (i >= to) break;
    if (count === MAX_TOKENS) {
      // Too many to be a row; the count of words so far, so no caller reads the previous line's.
      nonNumeric = words;
      return MAX_TOKENS + 1;
    }
    const start = i;
    if (needed !== undefined && needed[count] === 0) {
      // A column nobody reads (summaries only): check it looks like a number, skip its digits.
      const numberLike = isNumberStart(c);
      i++;
      while (i < to && (c = buf[i]!) !== 32 && c !== 9) i++;
      if (!numberLike) words++;
      starts[count] = start;
      ends[count] = i;
      numbers[count] = numberLike ? 0 : NaN;
      count++;
      continue;
    }
    const negative = c === 45;
    if (negative) i++;
    // Integer digits, then fraction digits after one `.` or `,`; anything else: not plain.
    // c is the byte after the digits, a blank (32) at the end of the line.
    let mantissa = 0;
    const integerStart = i;
    c = 32;
    while (i < to) {
      c = buf[i]!;
      const d = c - 48;
      if (d >>> 0 > 9) break;
      mantissa = mantissa * 10 + d;
      i++;
    }
    if (i === to) c = 32;
    let digits = i - integerStart;
    let value = NaN;
    if (c === 32 || c === 9) {
      if (digits > 0 && digits < 16) value = mantissa;
    } else if (c === 46 || c === 44) {
      const fractionStart = ++i;
      c = 32;
      while (i < to) {
        c = buf[i]!;
        const d = c - 48;
        if (d >>> 0 > 9) break;
        mantissa = mantissa * 10 + d;
        i++;
      }
      if (i === to) c = 32;
      const fraction = i - fractionStart;
      digits += fraction;
      // mantissa / 10^k with both exact is the correctly rounded value, as Number() gives.
      if ((c === 32 || c === 9) && digits > 0 && digits < 16) value = mantissa / POWERS_OF_TEN[fraction]!;
    }
    if (value !== value) {
      while (i < to && (c = buf[i]!) !== 32 && c !== 9) i++;
      // Suffixed (--human 1.2k, 45%), exponent or very long numbers; device names and words are NaN.
      if (isNumberStart(buf[start]!) && i - start >= 2) value = parseIostatNumber(latin1(buf, start, i));
      if (value !== value) words++;
    } else if (negative) value = -value;
    starts[count] = start;
    ends[count] = i;
    numbers[count] = value;
    count++;
  }
  nonNumeric = words;
  return count;
}

const POWERS_OF_TEN = Float64Array.from({ length: 16 }, (_, k) => 10 ** k);
/** Tokens of the last tokenize() that are not numbers. */
let nonNumeric = 0;

function latin1(buf: Uint8Array, start: number, end: number): string {
  return Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString('latin1');
}

/** A digit, sign or decimal point: the only ways a number (plain or --human) starts. */
function isNumberStart(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 44;
}

const TITLE = /extended\s+device\s+statistics/i;
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

export function createIostatParser(options: ParserOptions, firstRunIndex = 0): LineParser {
  const dialects: readonly IostatDialect[] = [solarisIostat, freebsdIostat, linuxIostat];
  let nextIndex = firstRunIndex;
  let run: IostatRunBuilder | undefined;
  let active: ActiveLayout | undefined;
  /** Lines after the last row that were not part of a table: context, or prose inside one (the latest few). */
  let pendingText: { line: number; text: string }[] = [];
  let pendingFirstLine = 0;
  let pendingTime: string | undefined;
  let pendingMeta: IostatMeta = {};
  let pendingName = '';
  let pendingStart = 0;
  /** Inside an avg-cpu or tty block: its numeric rows are not device rows. */
  let skipBlock = false;
  let emitted = 0;
  let lastHeaderLine = 0;
  let firstOrphanRow = 0;
  /** The first row a run skipped, kept when that run ends with no rows at all. */
  let firstSkipped: { line: number; message: string } | undefined;
  /** Warnings met before any run began (a bad timestamp above the first header). */
  let earlyWarnings: { line: number; message: string }[] = [];
  let lastLine = 0;
  let openReport: OpenReport | undefined;

  function finishRun(endLine: number): void {
    if (run === undefined) return;
    if (run.hasRows) {
      options.onRun(run.finish(endLine));
      emitted++;
    } else {
      // A header with no rows is no run: its index goes to the next one.
      nextIndex = run.index;
      firstSkipped ??= run.firstSkipped;
    }
    run = undefined;
    active = undefined;
  }

  function takeContext(): string[] {
    const context: string[] = [];
    for (const { text } of pendingText) {
      const command = commandFromLine(text);
      if (command === undefined) continue;
      context.push(command);
      if (context.length > MAX_CONTEXT_LINES) context.shift();
      if (commandName(command) === 'iostat') pendingMeta.command = command;
    }
    pendingText = [];
    return context;
  }

  /** The run new rows go to: the current one, unless text after its rows opened a new one. */
  function runFor(line: number, layout: TableLayout | undefined): IostatRunBuilder {
    if (run !== undefined && run.hasRows && pendingText.length > 0) finishRun(pendingFirstLine - 1);
    if (run === undefined) {
      const context = takeContext();
      run = new IostatRunBuilder(
        {
          index: nextIndex++,
          platform: layout?.platform ?? 'linux',
          dialect: layout?.dialect ?? 'unknown',
          name: pendingName,
          context,
          meta: pendingMeta,
          startLine: pendingStart || line,
        },
        // Only the first run of a part can continue a run of the previous part.
        { ...options, continuation: options.continuation === true && emitted === 0 && context.length === 0 && pendingStart === 0 },
      );
      pendingMeta = {};
      pendingName = '';
      pendingStart = 0;
      for (const w of earlyWarnings) run.warn(w.line, w.message);
      earlyWarnings = [];
    }
    return run;
  }

  function warn(line: number, message: string): void {
    if (run !== undefined) run.warn(line, message);
    else earlyWarnings.push({ line, message });
  }

  function onHeader(layout: TableLayout, line: number, text: string): void {
    const current = runFor(line, layout);
    if (!current.hasRows) current.dialect = layout.dialect;
    const ids = current.columnIdsFor(layout.columns, (name) =>
      current.warn(line, `column "${name}" printed twice in the header; its second values are kept as "${name} (2)" and used for no metric`),
    );
    if (ids === undefined) {
      current.warn(line, `more than ${MAX_COLUMNS} distinct columns in one run: header ignored`);
      return;
    }
    current.header(ids, pendingTime);
    pendingTime = undefined;
    const needed = new Uint8Array(layout.columns.length + 1).fill(1);
    const first = layout.deviceAt === 'first' ? 1 : 0;
    ids.forEach((id, i) => (needed[first + i] = current.reads(id) ? 1 : 0));
    active = { text, builder: current, layout, ids, needed, width: layout.columns.length, headerLine: line };
    rowInReport = 0;
    lastHeaderLine = line;
    skipBlock = false;
  }

  /** Device names by row position in the report: rows come in the same order every report. */
  const deviceCache: { bytes: Buffer; name: string }[] = [];
  let rowInReport = 0;

  function deviceName(buf: Buffer, start: number, end: number): string {
    const position = rowInReport++;
    const cached = deviceCache[position];
    const length = end - start;
    if (cached !== undefined && cached.bytes.length === length) {
      const bytes = cached.bytes;
      let i = 0;
      while (i < length && bytes[i] === buf[start + i]) i++;
      if (i === length) return cached.name;
    }
    const name = decodeLine(buf, start, end);
    deviceCache[position] = { bytes: Buffer.from(buf.subarray(start, end)), name };
    return name;
  }

  /** The row in buf, if it is one for the active layout (tokens already split). */
  function acceptRow(buf: Buffer, count: number, lineNo: number): boolean {
    const a = active!;
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
        const extra = decodeLine(buf, starts[width + 1]!, ends[width + 1]!);
        if (!isMount(extra)) return false;
        mount = extra;
      }
    } else {
      if (count === width + 2) {
        const extra = decodeLine(buf, starts[width + 1]!, ends[width + 1]!);
        if (!isMount(extra)) return false;
        mount = extra;
      } else if (count !== width + 1) return false;
      deviceToken = width;
      valueStart = 0;
    }
    // Every value a number, the device name not: exactly one word (two with a mount point).
    if (nonNumeric !== (mount === undefined ? 1 : 2) || !Number.isNaN(numbers[deviceToken])) return false;
    const device = deviceName(buf, starts[deviceToken]!, ends[deviceToken]!);
    // Rows go on under the same header: text seen since the last row was prose inside the table.
    if (pendingText.length > 0 && run?.hasRows) warnProseInsideTable();
    const current = runFor(lineNo, a.layout);
    current.row(device, mount === undefined ? undefined : unwrapMount(mount), a.ids, numbers, valueStart, lineNo);
    return true;
  }

  function warnProseInsideTable(): void {
    for (const { line, text } of pendingText) run?.warn(line, `text inside the table ignored: "${text.trim().slice(0, 80)}"`);
    pendingText = [];
  }

  /** A line that looks like a row of numbers but does not fit: maybe values ran into each other. */
  function repairRow(text: string, lineNo: number): boolean {
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
    if (!acceptRow(bytes, tokenize(bytes, 0, bytes.length), lineNo)) return false;
    run?.warn(lineNo, `values ran into each other; read as: ${rebuilt}`);
    return true;
  }

  /**
   * A row that fits the header but for values printed as `nan`, `-nan` or `inf`
   * (sysstat after a division by zero): skipped with a warning naming the column.
   */
  function notANumber(tokens: readonly string[], a: ActiveLayout, lineNo: number): boolean {
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
    if (pendingText.length > 0 && run?.hasRows) warnProseInsideTable();
    runFor(lineNo, a.layout).skipRow(lineNo, `row skipped: ${a.layout.columns[bad]!.name} is "${tokens[first + bad]}", not a number`);
    return true;
  }

  function slowLine(text: string, lineNo: number, count: number): void {
    const trimmed = text.trim();
    if (trimmed.length === 0) {
      skipBlock = false;
      return;
    }
    // Every report repeats its header: the same line under the same run needs no second reading.
    const cached = active;
    if (cached !== undefined && trimmed === cached.text && cached.headerLine === lineNo - 1 && cached.builder === run) {
      // The same header twice in a row (a paste): one report, not an empty one before it.
      run.warn(lineNo, `the header of line ${cached.headerLine} repeated; the repeat is ignored`);
      cached.headerLine = lineNo;
      return;
    }
    if (cached !== undefined && trimmed === cached.text && runFor(lineNo, cached.layout) === cached.builder) {
      cached.builder.header(cached.ids, pendingTime);
      pendingTime = undefined;
      cached.headerLine = lineNo;
      rowInReport = 0;
      lastHeaderLine = lineNo;
      skipBlock = false;
      return;
    }
    const tokens = trimmed.split(/\s+/);
    for (const dialect of dialects) {
      const layout = dialect.matchHeader(tokens);
      if (layout) {
        onHeader(layout, lineNo, trimmed);
        return;
      }
    }
    if (TITLE.test(trimmed)) return;
    if (tokens[0] === 'avg-cpu:' || tokens.every(isTtyCpuWord)) {
      skipBlock = true;
      return;
    }
    const banner = parseLinuxBanner(trimmed);
    if (banner) {
      finishRun(lineNo - 1);
      pendingMeta = { os: banner.os, kernel: banner.kernel, host: banner.host };
      if (banner.date) pendingMeta.date = banner.date;
      if (banner.cpus !== undefined) pendingMeta.cpus = banner.cpus;
      pendingName = banner.host;
      pendingStart = lineNo;
      return;
    }
    const time = readTimestamp(trimmed);
    if (time !== undefined) {
      if ('iso' in time) pendingTime = time.iso;
      else warn(lineNo, `timestamp "${trimmed}" is not a valid date (${time.invalid}); the report is kept without a time`);
      return;
    }
    const numeric = countNumeric(count);
    if (skipBlock && numeric === count) return;
    // `iostat -xn 5 2`, `sleep 5 10`: mostly numbers, but a command, so context.
    const command = commandFromLine(trimmed) !== undefined;
    // Before the command test: `sdb 1.46 -nan 8.03` reads like a command with an option.
    if (active !== undefined && notANumber(tokens, active, lineNo)) return;
    if (active !== undefined && !command && count >= 3 && numeric >= count - 2) {
      if (repairRow(text, lineNo)) return;
      if (pendingText.length === 0) {
        runFor(lineNo, active.layout).skipRow(
          lineNo,
          `ragged row skipped: ${tokens.length} fields where the header at line ${active.headerLine} has ${active.width} columns and a device name (${active.layout.columns.map((c) => c.name).join(' ')})`,
        );
        return;
      }
    }
    if (active === undefined && !command && count >= 3 && numeric >= count - 1) {
      if (firstOrphanRow === 0) firstOrphanRow = lineNo;
      return;
    }
    // Only the lines nearest the next table can be its context: memory stays bounded under any amount of prose.
    if (pendingText.length === 0) pendingFirstLine = lineNo;
    else if (pendingText.length >= 4 * MAX_CONTEXT_LINES) pendingText.shift();
    pendingText.push({ line: lineNo, text: trimmed });
  }

  return {
    lineBytes(buf, start, end, lineNo) {
      const count = tokenize(buf, start, end, skipBlock ? undefined : active?.needed);
      // Blank lines end avg-cpu and tty blocks; the numbers inside those blocks are not device rows.
      if (count === 0 || (skipBlock && count >= 2 && nonNumeric === 0)) {
        if (count === 0) skipBlock = false;
        lastLine = lineNo;
        return true;
      }
      if (active === undefined || skipBlock) return false;
      if (count < 2 || count > MAX_TOKENS || !acceptRow(buf, count, lineNo)) return false;
      lastLine = lineNo;
      return true;
    },
    line(text, lineNo) {
      lastLine = lineNo;
      const bytes = Buffer.from(text, 'utf8');
      const count = tokenize(bytes, 0, bytes.length);
      if (active !== undefined && !skipBlock && count > 1 && count <= MAX_TOKENS && acceptRow(bytes, count, lineNo)) return;
      slowLine(text, lineNo, count);
    },
    openReport() {
      return openReport;
    },
    end(last) {
      // A header after the end would continue this run: it has rows, and no text since them opens another.
      if (run !== undefined && run.hasRows && pendingText.length === 0) openReport = { columns: run.announcedColumns() };
      finishRun(last || lastLine);
      if (emitted > 0) return;
      if (firstSkipped !== undefined) {
        throw new ParseError({
          source: options.source,
          line: firstSkipped.line,
          problem: `no device row fits the iostat header: ${firstSkipped.message}`,
          expected: 'rows with a number for every column of the header and the device name',
        });
      }
      if (lastHeaderLine > 0) {
        throw new ParseError({ source: options.source, line: lastHeaderLine, problem: 'an iostat header with no device rows under it', expected: 'device rows such as "sda 1.00 2.00 ..." after the header' });
      }
      if (firstOrphanRow > 0) {
        throw new ParseError({ source: options.source, line: firstOrphanRow, problem: 'rows of numbers with no iostat header before them', expected: 'a header line naming the columns (e.g. "r/s w/s kr/s kw/s ... device" or "Device r/s rkB/s ...")' });
      }
      throw new ParseError({ source: options.source, line: 0, problem: 'no iostat table found', expected: 'an iostat -x header line and device rows' });
    },
  };
}

/** Words of the tty/cpu blocks printed above or beside the device table (`tty`, `cpu`, `tin tout`, `us sy id`). */
function isTtyCpuWord(token: string): boolean {
  return token === 'tty' || token === 'cpu' || TTY_CPU_COLUMNS.has(token);
}

function countNumeric(count: number): number {
  let numeric = 0;
  for (let i = 0; i < count && i < MAX_TOKENS; i++) if (!Number.isNaN(numbers[i])) numeric++;
  return numeric;
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
