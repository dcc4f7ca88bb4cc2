/**
 * The contract between the parse driver (driver.ts) and the format modules. The
 * driver splits the input into lines and hands them over one at a time; a module
 * keeps only the run it is building and reports each finished run through onRun.
 *
 *   parser.line('r/s w/s kr/s kw/s ... device', 3); parser.line('0.0 6028.7 ... c0t0d0', 4); parser.end(4)
 *
 * yields onRun(run) once per finished run, in file order.
 */
import type { IostatSample, IostatSampleRow, Run } from '../model.ts';

export interface ParserOptions {
  /** File name or object key, for messages. */
  source: string;
  /** Keep every sample in the emitted runs (default). False: summaries only, memory stays flat. */
  keepSamples: boolean;
  /** Called once per finished run, in file order. */
  onRun(run: Run): void;
  /** Called for every iostat sample as soon as its row is parsed (streaming consumers). */
  onIostatSample?(runIndex: number, device: string, sample: IostatSample): void;
  /**
   * The same samples as rows (IostatSampleRow), for a columnar writer: without
   * keepSamples or onIostatSample, the parser makes no object per sample.
   */
  onIostatRow?(runIndex: number, device: string, row: IostatSampleRow): void;
  /**
   * The input starts inside a run that an earlier part of the same file began (a
   * file parsed in parts, parallel.ts): its first report does not count since boot.
   */
  continuation?: boolean;
}

/** Warnings kept per run; beyond this a run carries one line saying how many more there were. */
export const MAX_WARNINGS = 100;

/**
 * Where an iostat input stopped: inside a run with rows, no text since them that
 * would open another run. parallel.ts checks its cuts with it: a header after the
 * cut starts a new report of that run when it repeats one of these columns.
 */
export interface OpenReport {
  /** The columns the headers of the last report announced. */
  columns: string[];
}

export interface LineParser {
  /**
   * One line, already cleaned by the driver: no line terminator, no `> ` quote
   * prefix, non-breaking spaces turned into spaces. `lineNo` is 1-based.
   */
  line(text: string, lineNo: number): void;
  /**
   * Optional fast path: a UTF-8 line as bytes [start, end) of buf, not yet cleaned.
   * Returns true if the parser consumed it; otherwise the driver decodes it and
   * calls line().
   */
  lineBytes?(buf: Buffer, start: number, end: number, lineNo: number): boolean;
  /** A warning for the run line `lineNo` belongs to (what the line splitter took off it). */
  warn?(lineNo: number, message: string): void;
  /** End of input. Flushes the last run; throws ParseError if the input held no run. */
  end(lastLine: number): void;
  /**
   * After end(): the report the input stopped in, if more of the same table would have continued
   * its run (iostat only).
   */
  openReport?(): OpenReport | undefined;
}
