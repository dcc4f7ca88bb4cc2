/**
 * Numeric options of the benches (`--runs 5`, `--duration 20`), read from the
 * command line: a missing option is the fallback, a bad value an error naming it.
 */

export const isPositive = (n: number) => Number.isFinite(n) && n > 0;

/** The number after `name` in `args`, or `fallback` when `name` is absent. */
export function numberArg(
  name: string,
  fallback: number,
  valid: (n: number) => boolean = isPositive,
  what = 'a positive number',
  args: readonly string[] = process.argv.slice(2),
): number {
  const at = args.indexOf(name);
  if (at === -1) return fallback;
  const value = Number(args[at + 1]);
  if (!valid(value)) throw new Error(`${name} must be ${what}, not ${args[at + 1]}`);
  return value;
}
