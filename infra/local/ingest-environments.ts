/**
 * One ingest execution environment per queue worker. Lambda runs one invocation
 * at a time in an environment, and the ingest handler keeps an invocation's state
 * at module level (Powertools' BatchProcessor holds the batch's records and its
 * failures, the logger its context): two invocations at once in one module would
 * report each other's failures. So each worker gets the handler module loaded
 * as a copy of its own, as each concurrent Lambda invocation gets its own environment.
 */
import type * as IngestHandler from '../../functions/ingest/handler.ts';
import type { IngestDeps } from '../../shared/ingest.ts';
import { siblingModule } from '../../shared/module-paths.ts';

type IngestModule = typeof IngestHandler;

/** `count` independent copies of functions/ingest/handler.ts, each given `deps`. */
export async function ingestEnvironments(count: number, deps: IngestDeps): Promise<IngestModule[]> {
  const environments: IngestModule[] = [];
  for (let i = 0; i < count; i++) {
    // A query string makes the module loader (Node's, tsx's, Vite's) evaluate the file again, as a module of its own.
    // A URL built at run time, not a template literal: Vite rewrites those into a lookup of the files it knows.
    const url = siblingModule(import.meta.url, '../../functions/ingest/handler');
    url.search = `environment=${i}`;
    const environment = (await import(url.href)) as IngestModule;
    environment.setIngestDeps(deps);
    environments.push(environment);
  }
  return environments;
}
