/**
 * The FILE argument of a bundled bench entry (`node bench/out/NAME.mjs FILE`):
 * without it the entry prints its usage and exits 2, so a parent bench fails loudly.
 */
export function fileArgument(entry: string): string {
  const file = process.argv[2];
  if (file !== undefined) return file;
  process.stderr.write(`usage: node bench/out/${entry}.mjs FILE\n`);
  process.exit(2);
}
