/**
 * One parser target fuzzed in a process of its own: `node --import tsx
 * test/support/fuzz/parser-process.ts <target> <cases>` prints its FuzzFinding as
 * one JSON line. The stress run keeps two of these busy (fuzzParsersInProcesses),
 * so its 620,000 cases use both cores, and a target that hangs is stopped by the
 * process's timeout.
 */
import { fuzz } from './cases.ts';
import { parserProperty, parserTargets } from './parsers.ts';

const [name, cases] = process.argv.slice(2);
const target = parserTargets().find((t) => t.name === name);
if (target === undefined || !(Number(cases) > 0)) {
  process.stderr.write(
    `usage: parser-process.ts <${parserTargets()
      .map((t) => t.name)
      .join('|')}> <cases>\n`,
  );
  process.exit(2);
}
const finding = await fuzz(target.name, parserProperty(target), Number(cases));
process.stdout.write(`${JSON.stringify(finding)}\n`);
