/**
 * A lab API stand-in for the CLI tests: a real node:http server on 127.0.0.1:0
 * answering routes with canned JSON (or whatever a route function returns), and
 * remembering every request it saw, headers included.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
}

export interface Reply {
  status?: number;
  body: unknown;
}

/** `GET /devices` -> a reply, or a function of the request making one. */
export type Routes = Record<string, Reply | ((request: SeenRequest) => Reply)>;

export interface FakeApi {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startFakeApi(routes: Routes): Promise<FakeApi> {
  const requests: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const seen: SeenRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
    };
    requests.push(seen);
    const route = routes[`${seen.method} ${seen.path}`];
    const reply: Reply =
      route === undefined
        ? { status: 404, body: { error: { code: 'NotFound', message: `no route ${seen.method} ${seen.path}` } } }
        : typeof route === 'function'
          ? route(seen)
          : route;
    const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** A port nothing listens on: a server's, after it closed. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** An Output that keeps what commands print. */
export function captureOutput() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: {
      out: (text: string) => void out.push(text.replace(/\n$/, '')),
      err: (text: string) => void err.push(text.replace(/\n$/, '')),
    },
    get out() {
      return out.join('\n');
    },
    get err() {
      return err.join('\n');
    },
  };
}
