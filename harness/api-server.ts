/**
 * The API handler served over real HTTP on 127.0.0.1 and a free port, as the
 * local lab serves it (infra/local/http.ts: API Gateway's event shapes, its
 * route keys), for the tests and benches that drive the API through a client.
 */
import type { AddressInfo } from 'node:net';
import { handler as apiHandler } from '../functions/api/handler.ts';
import { startHttpServer, type ApiHandler } from '../infra/local/http.ts';
import { ROUTES } from '../shared/api.ts';
import { lambdaContext } from './lambda.ts';

export interface ServedApi {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  /** Stops listening and ends open connections. */
  close(): Promise<void>;
}

/** Serves `handler` (default: the deployed API handler, with whatever deps setApiDeps gave it). */
export async function serveApi(handler: ApiHandler = apiHandler as ApiHandler): Promise<ServedApi> {
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    handler,
    context: () => lambdaContext('benchdrop-api'),
    routeKeys: Object.values(ROUTES),
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
