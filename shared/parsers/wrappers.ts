/**
 * What a paste wraps around a log, and how it comes off: the rules the line
 * splitter (lines.ts) applies before any parser sees a line, and the header
 * repair the iostat header reader (iostat-sessions.ts) applies. Each rule once.
 *
 *   \t * r/s w/s kr/s kw/s wait actv wsvc_t asvc_t %w %b device       <- a C comment: block prefix `*`
 *   #   "    0.1    0.3    0.8 ... d5",                                <- Perl strings in comments: `#   "` ... `",`
 *     134.4  353.2  372.7 5033.1  0.0  2.1  0.0  4.3   0  56 c0t21d0</pre>   <- a tag glued to a row
 *   Device: rrqm/s wrqm/s ... wkB/s a   vgrq-sz avgqu-sz ...          <- a header token split in two
 *
 * yields the bare lines `r/s w/s ... device`, `0.1 0.3 0.8 ... d5`, `134.4 ... c0t21d0` (with a
 * warning naming the tag) and the header tokens with `avgrq-sz` joined again.
 */

/** A prefix that every line of a block carries: what it is, and whether it opens a quoted string. */
export interface BlockPrefix {
  /** The prefix without the blanks around it (`*`, `#`, `#   "`, `--`, `//`, `;`). */
  core: string;
  /** The prefix opens a quote: each line ends in the closing quote (and a comma) too. */
  quoted: boolean;
}

/** The end of a line that a quoted prefix opened: the closing quote, maybe a `\n` escape and a comma before it. */
const QUOTED_SUFFIX = /[ \t]*(?:\\n)?["'`][ \t]*[,;.+]?[ \t]*(?:\*\/)?[ \t]*$/;
/** Characters a prefix may start with (after blanks): the cheap test before the regular expression. */
const PREFIX_START = new Set(['/', '*', '#', '-', ';', '%', '|', '>', '"', "'", '`']);

/** One marker of a prefix and the blanks after it. */
const PREFIX_PART = /(?:\/\/+|\/\*+|\*+|#+|--+|;+|%+|\|+|>+|["'`])[ \t]*/y;

/**
 * The ways the line splits into a block prefix and the text behind it, longest prefix first; none when
 * it has no prefix. A marker glued to the text is part of it (` * --Device:` is `*` before `--Device:`),
 * but for an opening quote (`#   "r/s w/s ...",` is `#   "` before `r/s w/s ...`).
 */
export function splitPrefix(line: string): { prefix: BlockPrefix; body: string }[] {
  let i = 0;
  while (line[i] === ' ' || line[i] === '\t') i++;
  if (i >= line.length || !PREFIX_START.has(line[i]!)) return [];
  const splits: { prefix: BlockPrefix; body: string }[] = [];
  PREFIX_PART.lastIndex = i;
  for (let m = PREFIX_PART.exec(line); m !== null; m = PREFIX_PART.exec(line)) {
    const end = PREFIX_PART.lastIndex;
    const core = line.slice(0, end).trim();
    const quoted = /["'`]/.test(core);
    if (!/[ \t]$/.test(m[0]) && !/["'`]$/.test(core) && end < line.length) continue;
    const rest = line.slice(end);
    splits.push({ prefix: { core, quoted }, body: quoted ? rest.replace(QUOTED_SUFFIX, '') : rest });
  }
  return splits.reverse();
}

/** The line without the block's prefix, or undefined when the line does not carry it (the block ended). */
export function stripPrefix(line: string, prefix: BlockPrefix): string | undefined {
  let i = 0;
  while (line[i] === ' ' || line[i] === '\t') i++;
  if (!line.startsWith(prefix.core, i)) return undefined;
  const rest = line.slice(i + prefix.core.length);
  // `\t *` with nothing after it is the comment's blank line.
  if (!prefix.quoted) return rest;
  return rest.replace(QUOTED_SUFFIX, '');
}

/**
 * Where the text after the block's prefix starts in bytes [start, end) of buf, or -1 when the line
 * does not carry it: the fast path's test, for prefixes without quotes.
 */
export function bytesAfterPrefix(buf: Buffer, start: number, end: number, core: Buffer): number {
  let i = start;
  // Blanks and `>` quote marks: what the text path's cleanLine takes off before the prefix is looked for.
  while (i < end && (buf[i] === 32 || buf[i] === 9 || buf[i] === 0x3e)) i++;
  if (end - i < core.length) return -1;
  for (let k = 0; k < core.length; k++) if (buf[i + k] !== core[k]) return -1;
  return i + core.length;
}

const LEADING_TAGS = /^[ \t]*(?:<\/?[A-Za-z!][^<>]*>[ \t]*)+/;
const TRAILING_TAGS = /(?:[ \t]*<\/?[A-Za-z][^<>]*>)+[ \t]*$/;

/** The line without HTML tags at its start and end, and the tags taken off; undefined when it had none. */
export function stripEdgeTags(line: string): { text: string; tags: string } | undefined {
  const lead = LEADING_TAGS.exec(line);
  const afterLead = lead === null ? line : line.slice(lead[0].length);
  const trail = TRAILING_TAGS.exec(afterLead);
  if (lead === null && trail === null) return undefined;
  const text = trail === null ? afterLead : afterLead.slice(0, trail.index);
  const tags = `${lead?.[0].trim() ?? ''}${lead !== null && trail !== null ? ' ... ' : ''}${trail?.[0].trim() ?? ''}`;
  return { text: decodeEntities(text), tags };
}

/**
 * Whether bytes [start, end) may carry an HTML tag at an end: a `<` first, or a `>` last (trailing blanks
 * aside). The row's first byte only, not after its indentation: the fast path's test runs on every row.
 */
export function bytesMayHaveEdgeTag(buf: Buffer, start: number, end: number): boolean {
  if (buf[start] === 0x3c) return true;
  let j = end - 1;
  while (j > start && (buf[j] === 32 || buf[j] === 9)) j--;
  return buf[j] === 0x3e;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** `&#45;`, `&#x2d;`, `&gt;` as the characters they stand for (an exported page's command lines). */
function decodeEntities(text: string): string {
  if (text.indexOf('&') === -1) return text;
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#\d{1,7}|[a-z]{2,6});/g, (all, name: string) => {
    if (name.startsWith('#x')) return safeChar(Number.parseInt(name.slice(2), 16), all);
    if (name.startsWith('#')) return safeChar(Number(name.slice(1)), all);
    return ENTITIES[name] ?? all;
  });
}

function safeChar(code: number, otherwise: string): string {
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : otherwise;
}

/**
 * Header tokens with one split token joined again: the first pair of neighbours whose joined text
 * makes `accepts` take the whole line. Undefined when no join does.
 */
export function rejoinSplitToken<T>(
  tokens: readonly string[],
  accepts: (tokens: readonly string[]) => T | undefined,
): { result: T; joined: string; parts: [string, string] } | undefined {
  for (let i = 0; i + 1 < tokens.length; i++) {
    const joined = tokens[i]! + tokens[i + 1]!;
    const candidate = [...tokens.slice(0, i), joined, ...tokens.slice(i + 2)];
    const result = accepts(candidate);
    if (result !== undefined) return { result, joined, parts: [tokens[i]!, tokens[i + 1]!] };
  }
  return undefined;
}
