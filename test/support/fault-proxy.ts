/**
 * A fault-injecting HTTP proxy for DynamoDB (dynalite) or S3 (s3rver): clients
 * point their endpoint at it and, for a seeded fraction of requests, get what the
 * real services sometimes answer instead of the right answer:
 *
 *   throttle  DynamoDB: 400 ProvisionedThroughputExceededException or
 *             ThrottlingException (JSON body and x-amzn-ErrorType, as DynamoDB
 *             sends them); a BatchWriteItem may instead be half-written and answer
 *             200 with the other half as UnprocessedItems. S3: 503 SlowDown.
 *   error500  DynamoDB InternalServerError (JSON) / S3 InternalError (XML),
 *             either before the request reached the service or after it was
 *             applied (the client cannot tell which: a retry must be harmless).
 *   reset     the connection reset before forwarding, after forwarding (applied,
 *             answer lost), or mid-answer (status, headers and part of the body,
 *             then the connection closes: a GetObject body that ends early).
 *   slow      a delay before forwarding or before the answer.
 *
 * Bodies stream through (an S3 GET of a large object is never held in memory);
 * only a BatchWriteItem chosen for UnprocessedItems and requests held by an
 * `intercept` hook are buffered. The Host header goes through unchanged, so
 * SigV4 signatures made for the proxy's address still verify at s3rver.
 *
 * Decisions come from a hash of (seed, request number): the same seed gives the
 * same sequence of faults (which request gets which one still depends on the
 * order in which concurrent requests arrive).
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { crc32 } from 'node:zlib';

export type Service = 'dynamodb' | 's3';
export type FaultKind = 'throttle' | 'error500' | 'reset' | 'slow';
export const FAULT_KINDS: readonly FaultKind[] = ['throttle', 'error500', 'reset', 'slow'];
/** Each kind's variants (see the list above). */
export const FAULT_VARIANTS = {
  throttle: ['refused', 'unprocessed-items'],
  error500: ['before', 'after'],
  reset: ['before', 'after', 'mid-answer'],
  slow: ['request', 'answer'],
} as const satisfies Record<FaultKind, readonly string[]>;
export type FaultVariant = { [K in FaultKind]: `${K}:${(typeof FAULT_VARIANTS)[K][number]}` }[FaultKind];

/** What a request is, for counting and for intercept hooks. */
export interface ProxiedRequest {
  /** 1-based, in arrival order. */
  number: number;
  method: string;
  path: string;
  /** DynamoDB: the operation (`BatchWriteItem`); S3: the method. */
  operation: string;
  /** The request body: read in full only when there is an intercept hook. */
  body?: Buffer;
}

/** Return 'drop' to reset the connection instead of forwarding the request. */
export type Intercept = (request: ProxiedRequest) => void | 'drop' | Promise<void | 'drop'>;

export interface FaultProxyOptions {
  /** The service's endpoint, e.g. http://127.0.0.1:PORT. */
  target: string;
  service: Service;
  /** Fraction of requests (0..1) that get a fault; changeable later with setFaultRate. */
  faultRate?: number;
  /** Instead of the fraction: which requests get a fault (e.g. the first GET of each object). */
  faultWhen?: (request: ProxiedRequest) => boolean;
  seed?: number;
  /** Relative weights of the kinds (default: all equal). */
  weights?: Partial<Record<FaultKind, number>>;
  /** Only these variants (`reset:mid-answer`, ...), for a test about one fault; default all. */
  variants?: readonly FaultVariant[];
  /** Range of a slow answer's delay, in ms. */
  slowMs?: { min: number; max: number };
  /** Called before each request is forwarded (after its body is read); it may hold the request. */
  intercept?: Intercept;
}

export interface FaultCounts {
  requests: number;
  /** Requests that reached the service (in full or, for UnprocessedItems, in part). */
  forwarded: number;
  /** Faults by kind. */
  injected: Record<FaultKind, number>;
  /** Faults by kind and variant, e.g. `reset:mid-answer`, `throttle:unprocessed-items`. */
  variants: Record<string, number>;
  /** Requests by operation. */
  operations: Record<string, number>;
}

export interface FaultProxy {
  endpoint: string;
  counts: FaultCounts;
  setFaultRate(rate: number): void;
  /** One line: "N throttles, N 500s, N resets, N slow (of N requests)". */
  describe(): string;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

/** A number in [0, 1) from the seed, the request number and what it decides. */
function chance(seed: number, n: number, what: string): number {
  return createHash('sha256').update(`${seed}:${n}:${what}`).digest().readUInt32BE(0) / 2 ** 32;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function forwardableHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => parts.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(parts)));
    stream.on('error', reject);
  });
}

/** A TCP reset where the platform offers one, else a plain close. */
function reset(socket: Socket | null): void {
  if (!socket || socket.destroyed) return;
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

// ---------------------------------------------------------------- the services' error answers

interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const requestId = () => randomBytes(39).toString('base64').toUpperCase().replace(/[+/=]/g, '0');

function dynamodbError(status: number, type: string, namespace: string, message: string): ErrorAnswer {
  const body = JSON.stringify({ __type: `${namespace}#${type}`, message });
  return {
    status,
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-requestid': requestId(),
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/${namespace}/`,
      'x-amz-crc32': String(crc32(body)),
    },
    body,
  };
}

function s3Error(status: number, code: string, message: string, resource: string): ErrorAnswer {
  const id = randomBytes(8).toString('hex').toUpperCase();
  const host = randomBytes(57).toString('base64');
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><Resource>${resource}</Resource><RequestId>${id}</RequestId><HostId>${host}</HostId></Error>`;
  return { status, headers: { 'content-type': 'application/xml', 'x-amz-request-id': id, 'x-amz-id-2': host }, body };
}

const THROUGHPUT_EXCEEDED =
  'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.';

function throttleAnswer(service: Service, pick: number, path: string): ErrorAnswer {
  if (service === 's3') return s3Error(503, 'SlowDown', 'Please reduce your request rate.', path);
  return pick < 0.5
    ? dynamodbError(
        400,
        'ProvisionedThroughputExceededException',
        'com.amazonaws.dynamodb.v20120810',
        THROUGHPUT_EXCEEDED,
      )
    : dynamodbError(
        400,
        'ThrottlingException',
        'com.amazon.coral.availability',
        'Rate of requests exceeds the allowed throughput.',
      );
}

function internalErrorAnswer(service: Service, path: string): ErrorAnswer {
  return service === 's3'
    ? s3Error(500, 'InternalError', 'We encountered an internal error. Please try again.', path)
    : dynamodbError(500, 'InternalServerError', 'com.amazonaws.dynamodb.v20120810', 'Internal server error');
}

function send(res: ServerResponse, answer: ErrorAnswer): void {
  res.writeHead(answer.status, { ...answer.headers, 'content-length': String(Buffer.byteLength(answer.body)) });
  res.end(answer.body);
}

// ---------------------------------------------------------------- the proxy

type Plan =
  | { kind: 'none' }
  | { kind: 'throttle'; variant: 'refused' | 'unprocessed-items' }
  | { kind: 'error500'; variant: 'before' | 'after' }
  | { kind: 'reset'; variant: 'before' | 'after' | 'mid-answer' }
  | { kind: 'slow'; variant: 'request' | 'answer'; ms: number };

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  const seed = options.seed ?? 1;
  const slow = options.slowMs ?? { min: 100, max: 800 };
  const weights = FAULT_KINDS.map((kind) => Math.max(0, options.weights?.[kind] ?? 1));
  let faultRate = options.faultRate ?? 0;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const counts: FaultCounts = {
    requests: 0,
    forwarded: 0,
    injected: { throttle: 0, error500: 0, reset: 0, slow: 0 },
    variants: {},
    operations: {},
  };

  /** The variants a request may get: unprocessed items only for batch writes. */
  const allowed = (kind: FaultKind, operation: string): string[] =>
    FAULT_VARIANTS[kind].filter(
      (v) =>
        (v !== 'unprocessed-items' || operation === 'BatchWriteItem') &&
        (!options.variants || options.variants.includes(`${kind}:${v}` as FaultVariant)),
    );

  const plan = (request: ProxiedRequest): Plan => {
    const { number: n, operation } = request;
    const faulty = options.faultWhen
      ? options.faultWhen(request)
      : faultRate > 0 && chance(seed, n, 'fault') < faultRate;
    if (!faulty) return { kind: 'none' };
    const kinds = FAULT_KINDS.map((kind, i) => ({
      kind,
      weight: allowed(kind, operation).length > 0 ? weights[i]! : 0,
    }));
    const total = kinds.reduce((a, k) => a + k.weight, 0);
    if (total === 0) return { kind: 'none' };
    let pick = chance(seed, n, 'kind') * total;
    const chosen = kinds.find((k) => (pick -= k.weight) < 0) ?? kinds.findLast((k) => k.weight > 0)!;
    const variants = allowed(chosen.kind, operation);
    const variant = variants[Math.floor(chance(seed, n, 'variant') * variants.length)]!;
    const ms = Math.round(slow.min + chance(seed, n, 'delay') * (slow.max - slow.min));
    return { kind: chosen.kind, variant, ms } as Plan;
  };

  const count = (p: Exclude<Plan, { kind: 'none' }>) => {
    counts.injected[p.kind]++;
    const name = `${p.kind}:${p.variant}`;
    counts.variants[name] = (counts.variants[name] ?? 0) + 1;
  };

  /** Forward to the service; resolves with its answer (not yet read). */
  const forward = (req: IncomingMessage, body: Buffer | undefined): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const headers = forwardableHeaders(req.headers);
      if (body !== undefined) headers['content-length'] = String(body.length);
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
        resolve,
      );
      upstream.on('error', reject);
      counts.forwarded++;
      if (body !== undefined) upstream.end(body);
      else req.pipe(upstream);
    });

  /** Relay the service's answer; for mid-answer, stop after `cutAt` bytes of the body and close the connection. */
  const relay = (answer: IncomingMessage, res: ServerResponse, cutAt?: number) => {
    res.writeHead(answer.statusCode ?? 502, forwardableHeaders(answer.headers));
    if (cutAt === undefined) {
      answer.pipe(res);
      return;
    }
    // Headers out now: the client must see an answer begin, then break off.
    res.flushHeaders();
    let sent = 0;
    const cut = (chunk: Buffer) => {
      answer.destroy();
      // Close only once the part before the cut has left (a write callback), mid-body.
      res.write(chunk, () => res.socket?.destroy());
    };
    answer.on('data', (chunk: Buffer) => {
      if (answer.destroyed) return;
      const room = cutAt - sent;
      sent += chunk.length;
      if (room < chunk.length) return cut(chunk.subarray(0, Math.max(0, room)));
      if (!res.write(chunk)) {
        answer.pause();
        res.once('drain', () => answer.resume());
      }
    });
    // A body no longer than the cut (or none): it breaks off before its last byte is sent.
    answer.on('end', () => res.socket?.destroy());
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const n = ++counts.requests;
    const amzTarget = req.headers['x-amz-target'];
    // DynamoDB_20120810.BatchWriteItem -> BatchWriteItem
    const opName = typeof amzTarget === 'string' ? amzTarget.slice(amzTarget.indexOf('.') + 1) : (req.method ?? 'GET');
    counts.operations[opName] = (counts.operations[opName] ?? 0) + 1;
    const path = (req.url ?? '/').split('?')[0]!;

    let body: Buffer | undefined;
    const request: ProxiedRequest = { number: n, method: req.method ?? 'GET', path, operation: opName };
    if (options.intercept) {
      body = await readBody(req);
      if ((await options.intercept({ ...request, body })) === 'drop') {
        reset(req.socket);
        return;
      }
    }

    const p = plan(request);
    if (p.kind !== 'none') count(p);
    switch (p.kind) {
      case 'throttle':
        if (p.variant === 'refused') {
          req.resume();
          return send(res, throttleAnswer(options.service, chance(seed, n, 'which'), path));
        }
        return unprocessedItems(req, res, body ?? (await readBody(req)));
      case 'error500':
        if (p.variant === 'before') {
          req.resume();
          return send(res, internalErrorAnswer(options.service, path));
        }
        (await forward(req, body)).resume();
        return send(res, internalErrorAnswer(options.service, path));
      case 'reset':
        if (p.variant === 'before') {
          req.resume();
          return reset(req.socket);
        }
        if (p.variant === 'after') {
          const answer = await forward(req, body);
          answer.resume();
          answer.on('end', () => reset(req.socket));
          return;
        }
        {
          const answer = await forward(req, body);
          const length = Number(answer.headers['content-length'] ?? NaN);
          // Somewhere inside the body: at least the headers and one byte go out, never the last byte.
          const cutAt =
            Number.isFinite(length) && length > 1 ? 1 + Math.floor(chance(seed, n, 'cut') * (length - 1)) : 0;
          return relay(answer, res, cutAt);
        }
      case 'slow':
        if (p.variant === 'request') await sleep(p.ms);
        {
          const answer = await forward(req, body);
          if (p.variant === 'answer') await sleep(p.ms);
          return relay(answer, res);
        }
      case 'none':
        return relay(await forward(req, body), res);
    }
  };

  /** Write the first half of a BatchWriteItem; answer 200 with the rest as UnprocessedItems, as a throttled table does. */
  const unprocessedItems = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const input = JSON.parse(body.toString('utf8')) as { RequestItems: Record<string, unknown[]> };
    const written: Record<string, unknown[]> = {};
    const unprocessed: Record<string, unknown[]> = {};
    for (const [table, requests] of Object.entries(input.RequestItems)) {
      const keep = Math.floor(requests.length / 2);
      if (keep > 0) written[table] = requests.slice(0, keep);
      unprocessed[table] = requests.slice(keep);
    }
    if (Object.keys(written).length > 0) {
      const answer = await forward(req, Buffer.from(JSON.stringify({ ...input, RequestItems: written })));
      const text = (await readBody(answer)).toString('utf8');
      if (answer.statusCode !== 200) {
        // The service refused the half: pass its answer on as it is.
        res.writeHead(answer.statusCode ?? 502, forwardableHeaders(answer.headers));
        return res.end(text);
      }
    }
    const out = JSON.stringify({ UnprocessedItems: unprocessed });
    res.writeHead(200, {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-requestid': requestId(),
      'x-amz-crc32': String(crc32(out)),
      'content-length': String(Buffer.byteLength(out)),
    });
    res.end(out);
  };

  const server = createServer((req, res) => {
    // A client that gave up (or was killed) must not take the proxy down.
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    handle(req, res).catch(() => reset(req.socket));
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts,
    setFaultRate(rate: number) {
      faultRate = rate;
    },
    describe() {
      const i = counts.injected;
      return `${i.throttle} throttles, ${i.error500} 500s, ${i.reset} resets, ${i.slow} slow (of ${counts.requests} requests)`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
