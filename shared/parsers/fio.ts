/**
 * fio output of any style, as people keep and paste it: the style is told by
 * the first line that shows one, and a prefix that line carries (`# `, `// `,
 * a comment's `*`) comes off every line of the block after it.
 *
 *   # 3;fio-2.1.10;randrw;0;0;...                  -> terse, versions 3 to 5 (fio-terse.ts)
 *   2;randrw;0;0;1048576;17476;4369;60001;...      -> terse version 2, told by its whole shape
 *   {  "fio version" : "fio-3.33", ...              -> json, json+ (fio-json.ts)
 *   seq: (g=0): rw=read, bs=(R) 128KiB-128KiB, ...  -> normal (fio-normal.ts)
 *
 * yields the jobs in file order (through onJob) and, at the end, the style and
 * what the output says of itself (FioHeader).
 */
import { ParseError } from './errors.ts';
import { createFioJsonParser, FIO_VERSION_KEY } from './fio-json.ts';
import { createFioNormalParser } from './fio-normal.ts';
import type { FioHeader, FioJob, FioLineParser, FioParserOptions, FioStyle } from './fio-record.ts';
import { createFioTerseParser, isTerseV2Line } from './fio-terse.ts';
import { LineSplitter, type LineSplitterOptions } from './lines.ts';
import { splitPrefix, stripPrefix, type BlockPrefix } from './wrappers.ts';

/** A terse record of version 3 to 5 (`3;fio-3.33;jobname;...`), alone or after text on its line. */
const TERSE = /(?:^|[^\d.;])[3-5];fio-[^;]*;/;
/** A normal-output job header: `name: (g=0): rw=...` or `name: (groupid=0, jobs=1): err= 0`. */
const NORMAL = /^\S.*: \((?:g=\d+\): rw=|groupid=\d+, jobs=\d+\): err=)/;
/** Lines kept before the style is known, replayed to its parser (a JSON document's `{` comes before its key). */
const LOOKBACK_LINES = 8;

type TextStyle = Exclude<FioStyle, 'json+'>;

/** The style a line shows, if any. */
export function fioStyleOf(line: string): TextStyle | undefined {
  if (line.includes(FIO_VERSION_KEY)) return 'json';
  const trimmed = line.trim();
  if (TERSE.test(trimmed) || isTerseV2Line(trimmed)) return 'terse';
  if (NORMAL.test(trimmed)) return 'normal';
  return undefined;
}

/**
 * The style of a line, behind a block prefix (and that prefix) or bare. The prefix is tried
 * first: `# job: (g=0): rw=read` reads as a job line bare too, and the block's `# ` must come off.
 */
function detect(line: string): { style: TextStyle; prefix?: BlockPrefix } | undefined {
  for (const { prefix, body } of splitPrefix(line)) {
    const style = fioStyleOf(body);
    if (style !== undefined) return { style, prefix };
  }
  const bare = fioStyleOf(line);
  return bare === undefined ? undefined : { style: bare };
}

/** Whether a line shows a fio style, bare or behind a block prefix. */
export const showsFio = (line: string): boolean => detect(line) !== undefined;

function styleParser(style: TextStyle, options: FioParserOptions): FioLineParser & { plus?: boolean } {
  if (style === 'json') return createFioJsonParser(options);
  return style === 'terse' ? createFioTerseParser(options) : createFioNormalParser(options);
}

export interface FioOutput extends FioHeader {
  style: FioStyle;
}

/** A fio parser for any style: lines in, jobs out through onJob, the style and header at the end. */
export class FioParser {
  private readonly recent: { text: string; lineNo: number }[] = [];
  private parser: (FioLineParser & { plus?: boolean }) | undefined;
  private style: TextStyle | undefined;
  private prefix: BlockPrefix | undefined;

  constructor(private readonly options: FioParserOptions) {}

  line(text: string, lineNo: number): void {
    if (this.parser !== undefined) {
      this.parser.line(this.unwrapped(text), lineNo);
      return;
    }
    this.recent.push({ text, lineNo });
    if (this.recent.length > LOOKBACK_LINES) this.recent.shift();
    const found = detect(text);
    if (found === undefined) return;
    this.style = found.style;
    this.prefix = found.prefix;
    this.parser = styleParser(found.style, this.options);
    for (const kept of this.recent.splice(0)) this.parser.line(this.unwrapped(kept.text), kept.lineNo);
  }

  /** The line without the block's prefix; a line without it (the block ended, a blank) as it is. */
  private unwrapped(text: string): string {
    if (this.prefix === undefined) return text;
    return stripPrefix(text, this.prefix) ?? text;
  }

  end(lastLine: number): FioOutput {
    if (this.parser === undefined || this.style === undefined) {
      throw new ParseError({
        source: this.options.source,
        line: 0,
        problem: 'no fio output',
        expected:
          'fio results: a JSON document with "fio version", terse lines such as "3;fio-3.33;job;0;0;..." ' +
          '(or version 2, "2;job;0;0;..."), ' +
          'or the normal report with job lines such as "job: (groupid=0, jobs=1): err= 0"',
      });
    }
    const header = this.parser.end(lastLine);
    const style: FioStyle = this.style === 'json' && this.parser.plus === true ? 'json+' : this.style;
    return { style, ...header };
  }
}

/**
 * fio's lines, the same for a whole text and a stream: a lone CR is fio redrawing its progress
 * (`Jobs: 1 (f=1): [r(1)][10.0%]...\r`), not a line end, so the pieces around it reach the
 * parser one by one and line numbers count LF only, as the normal parser's jobs and errors name them.
 * `<host> ` before a `--client` run's lines names the host: no HTML tag to take off.
 */
const FIO_LINES: LineSplitterOptions = { loneCR: 'redraw', edgeTags: 'keep' };

function fioLineSplitter(parser: FioParser, source: string): LineSplitter {
  return new LineSplitter(source, { text: (text, lineNo) => parser.line(text, lineNo) }, FIO_LINES);
}

/** A whole text's jobs and what it says of itself (tests, the CLI's small files). */
export function parseFioText(text: string, source = 'input'): FioOutput & { jobs: FioJob[] } {
  const jobs: FioJob[] = [];
  const parser = new FioParser({ source, onJob: (job) => jobs.push(job) });
  const splitter = fioLineSplitter(parser, source);
  splitter.push(text);
  return { ...parser.end(splitter.end()), jobs };
}

/**
 * The jobs of a stream of bytes (a file's chunks, an object's body) as they are read, and at
 * the end what it says of itself: one line in memory at a time, a character split between two
 * chunks put back together.
 */
export async function parseFioChunks(
  chunks: AsyncIterable<Buffer>,
  options: FioParserOptions,
): Promise<FioOutput & { lines: number }> {
  const parser = new FioParser(options);
  const splitter = fioLineSplitter(parser, options.source);
  for await (const chunk of chunks) splitter.push(chunk);
  const lines = splitter.end();
  return { ...parser.end(lines), lines };
}
