/**
 * Which non-table lines are worth keeping as a run's context. People paste the
 * commands they ran (`tunefs -a 16 /opt`, `# diskperf -W -n x ...`, `$ iostat -xn 5`)
 * between prose; the commands explain the numbers, the prose does not.
 *
 *   commandFromLine('root@box:~# tunefs -a 16 /opt') -> 'tunefs -a 16 /opt'
 *   commandFromLine('Then I ran it again.')          -> undefined
 */

/** Words that are commands even without options (`sync`, `date`). */
const BARE_COMMANDS = new Set([
  'sync',
  'date',
  'uname',
  'hostname',
  'df',
  'mount',
  'iostat',
  'diskperf',
  'hinv',
  'sar',
  'vmstat',
  'zpool',
  'metastat',
  'lsblk',
]);

// A shell prompt: `$ `, `# `, `% `, `> `, `host# `, `root@box:~# `, `[user@box ~]$ `.
const PROMPT = /^(?:\[[^\]]{1,80}\]\s?[#$%]\s+|[\w.@:~/[\]-]*\s?[#$%]\s+|[\w-]+>\s+)/;
const WORD = /^[a-z][\w.+-]*$/;
// `/usr/bin/iostat`, `./diskperf`: a command given by its path.
const PATH_WORD = /^\.{0,2}(?:\/[\w.+-]+)+$/;
const ENV_ASSIGNMENT = /^[A-Z_][A-Z0-9_]*=\S*$/;

/** The command in `line` with any prompt removed, or undefined if the line does not look like one. */
export function commandFromLine(line: string): string | undefined {
  let text = line.trim();
  if (text.length === 0 || text.length > 300) return undefined;
  const prompt = PROMPT.exec(text);
  if (prompt) text = text.slice(prompt[0].length).trim();
  // `LANG=de_DE.UTF-8 iostat -x 5`: environment assignments before the command word.
  const words = text.split(/\s+/);
  let first = 0;
  while (first < words.length - 1 && ENV_ASSIGNMENT.test(words[first]!)) first++;
  return commandWords(text, words.slice(first));
}

function commandWords(text: string, words: string[]): string | undefined {
  const first = baseName(words[0] ?? '');
  if (!WORD.test(first)) return undefined;
  if (words.length === 1) return BARE_COMMANDS.has(first) ? text : undefined;
  // Shell commands carry options, paths, assignments or redirections; sentences do not.
  const looksLikeArgs = words
    .slice(1)
    .some(
      (w) =>
        /^-{1,2}[\w?]/.test(w) || w.startsWith('/') || w.includes('=') || w === '|' || w === '>' || /^\d+$/.test(w),
    );
  if (!looksLikeArgs && !BARE_COMMANDS.has(first)) return undefined;
  // A sentence ends with a full stop and has capitals or several plain words.
  if (/[.!?]$/.test(text) && words.length > 4) return undefined;
  return text;
}

function baseName(word: string): string {
  return PATH_WORD.test(word) ? word.slice(word.lastIndexOf('/') + 1) : word;
}

/** The program a command line runs (`LANG=C /usr/bin/iostat -xn 5` -> `iostat`), if the line is a command. */
export function commandName(line: string): string | undefined {
  const command = commandFromLine(line);
  if (command === undefined) return undefined;
  const words = command.split(/\s+/);
  const first = words.find((w) => !ENV_ASSIGNMENT.test(w));
  return first === undefined ? undefined : baseName(first);
}

/**
 * Whether a Linux iostat command line asks for no since-boot report: sysstat's `-y`, alone
 * or among other one-letter options (`iostat -xy 5`, `iostat -d -y 1 3`).
 */
export function omitsSinceBootReport(command: string): boolean {
  const words = command.split(/\s+/);
  const at = words.findIndex((w) => baseName(w) === 'iostat');
  return at >= 0 && words.slice(at + 1).some((w) => /^-[A-Za-z]*y[A-Za-z]*$/.test(w));
}

/**
 * Whether an iostat run of this platform, started by this command, prints a since-boot report first:
 * all do but sysstat's with `-y` (other platforms' -y means something else: NetBSD's queue columns).
 */
export function printsBootReport(platform: string, command: string | undefined): boolean {
  return platform !== 'linux' || command === undefined || !omitsSinceBootReport(command);
}

/** Keep at most this many context lines per run: the ones nearest to it. */
export const MAX_CONTEXT_LINES = 20;

export function pushContext(context: string[], line: string): void {
  const command = commandFromLine(line);
  if (command === undefined) return;
  context.push(command);
  if (context.length > MAX_CONTEXT_LINES) context.shift();
}
