/**
 * The local lab's API Gateway: HTTP requests in, API Gateway HTTP API (payload
 * v2) events out to the very same API handler, its answer written back. Bodies
 * are capped (the lab is for logs' metadata, uploads go to S3) and every request
 * is answered, even when the handler throws.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export type ApiHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2 | string | object | void>;

export interface HttpOptions {
  host: string;
  port: number;
  handler: ApiHandler;
  context: () => Context;
  /** Extra routes answered here (the report page): return true when handled. */
  serve?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
}

const MAX_BODY = 1024 * 1024;

/** The API Gateway v2 event for a request, as the HTTP API would build it. */
export function apiEvent(
  req: IncomingMessage,
  body: Buffer,
  routeKeys: readonly string[] = [],
): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? '/', 'http://local');
  const method = req.method ?? 'GET';
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams)
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  const matched = matchRoute(method, url.pathname, routeKeys);
  const now = new Date();
  const text = body.toString('utf8');
  const binary = body.length > 0 && Buffer.from(text, 'utf8').length !== body.length;
  return {
    version: '2.0',
    routeKey: matched?.routeKey ?? '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(matched && Object.keys(matched.params).length > 0 ? { pathParameters: matched.params } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'local',
      domainName: headers['host'] ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: matched?.routeKey ?? '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 ? { body: binary ? body.toString('base64') : text } : {}),
    isBase64Encoded: binary,
  };
}

/** A path parameter, percent-decoded; a malformed escape (`%ZZ`) is passed on as sent, for the route to refuse. */
function decodePathPart(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `GET /runs/{id}` against `GET /runs/r01...`: the route key and its path parameters. */
function matchRoute(
  method: string,
  path: string,
  routeKeys: readonly string[],
): { routeKey: string; params: Record<string, string> } | undefined {
  for (const routeKey of routeKeys) {
    const [m, pattern] = routeKey.split(' ') as [string, string];
    if (m !== method) continue;
    const names: string[] = [];
    const re = new RegExp(`^${pattern.replace(/\{(\w+)\}/g, (_, name: string) => (names.push(name), '([^/]+)'))}$`);
    const match = re.exec(path);
    if (match) return { routeKey, params: Object.fromEntries(names.map((n, i) => [n, decodePathPart(match[i + 1]!)])) };
  }
  return undefined;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw Object.assign(new Error('request body over 1 MiB'), { status: 413 });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function send(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | number | boolean>,
  body: string | Buffer,
): void {
  res.writeHead(status, Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)])));
  res.end(body);
}

export function startHttpServer(options: HttpOptions & { routeKeys: readonly string[] }): Promise<Server> {
  const server = createServer((req, res) => {
    void (async () => {
      try {
        if (options.serve && (await options.serve(req, res))) return;
        const body = await readBody(req);
        const result = await options.handler(apiEvent(req, body, options.routeKeys), options.context());
        const structured = (
          typeof result === 'object' && result !== null && 'statusCode' in result
            ? result
            : { statusCode: 200, body: typeof result === 'string' ? result : JSON.stringify(result ?? null) }
        ) as APIGatewayProxyStructuredResultV2;
        const payload = structured.body ?? '';
        send(
          res,
          structured.statusCode ?? 200,
          structured.headers ?? {},
          structured.isBase64Encoded ? Buffer.from(payload, 'base64') : payload,
        );
      } catch (error) {
        const status = (error as { status?: number }).status ?? 500;
        // As the API's own 500s: a generic message and an id, the details only in the lab's output.
        const requestId = randomUUID();
        if (status !== 413)
          process.stderr.write(`local API: request ${requestId} failed: ${(error as Error)?.stack ?? String(error)}\n`);
        const body =
          status === 413
            ? { code: 'too_large', message: 'request body over 1 MiB' }
            : { code: 'internal', message: `internal error (request id ${requestId})`, requestId };
        if (!res.headersSent)
          send(res, status, { 'content-type': 'application/json' }, JSON.stringify({ error: body }));
        else res.end();
      }
    })();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve(server));
  });
}
