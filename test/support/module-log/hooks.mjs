// Module resolution hooks: pass every resolution through, noting its URL.
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (process.env.BENCHDROP_MODULE_LOG) appendFileSync(process.env.BENCHDROP_MODULE_LOG, `${resolved.url}\n`);
  return resolved;
}
