/**
 * The clients' time limits (shared/aws.ts CLIENT_TIMEOUTS_MS) against real
 * sockets on 127.0.0.1: a server that accepts a connection and never answers,
 * which no emulator can be made to do, and one that answers at once.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient, createS3Client } from '../../shared/aws.ts';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const servers: (Server | HttpServer)[] = [];
/** Sockets the silent server holds open (a TCP server's close waits for them). */
const held: Socket[] = [];

afterEach(async () => {
  for (const socket of held.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A server that reads requests and never answers: the number of connections it accepted so far. */
async function silentServer(): Promise<{ endpoint: string; connections: () => number }> {
  let accepted = 0;
  const server = createTcpServer((socket) => {
    accepted++;
    held.push(socket);
    socket.resume();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => accepted };
}

describe('client time limits', () => {
  it('a DynamoDB call to a server that never answers fails with a TimeoutError after the socket timeout, and is retried', async () => {
    const silent = await silentServer();
    const db = createDocumentClient({
      dynamodbEndpoint: silent.endpoint,
      credentials,
      region: 'us-east-1',
      maxAttempts: 2,
      socketTimeoutMs: 300,
    });
    const started = performance.now();
    const error = await db.send(new GetCommand({ TableName: 't', Key: { pk: 'a', sk: 'b' } })).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    const ms = performance.now() - started;
    db.destroy();
    expect(error?.name).toBe('TimeoutError');
    expect(error?.message).toMatch(/timed out after 300 ms of inactivity/);
    // Two attempts, each given up after 300 ms of silence (plus the retry's backoff), not a wait without end.
    expect(silent.connections()).toBe(2);
    expect(ms).toBeGreaterThanOrEqual(600);
    expect(ms).toBeLessThan(10_000);
  });

  it('an S3 download whose body stops mid-way fails with a TimeoutError instead of hanging', async () => {
    const server = createServer((_request, response) => {
      // Headers and the first bytes of a 1 MB body, then silence.
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(1_000_000) });
      response.write('x'.repeat(1000));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const s3 = createS3Client({
      s3Endpoint: endpoint,
      credentials,
      region: 'us-east-1',
      maxAttempts: 1,
      socketTimeoutMs: 300,
    });
    const response = await s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }));
    const reading = response.Body!.transformToString();
    await expect(reading).rejects.toMatchObject({ name: 'TimeoutError' });
    s3.destroy();
    server.closeAllConnections();
  });

  it('by default: 3 s to connect, 30 s of silence for DynamoDB and 2 minutes for S3', async () => {
    // A server that answers every call at once, so each client resolves its handler's settings.
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      response.end('{}');
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const db = createDocumentClient({ dynamodbEndpoint: endpoint, credentials, region: 'us-east-1' });
    const s3 = createS3Client({ s3Endpoint: endpoint, credentials, region: 'us-east-1' });
    await db.send(new GetCommand({ TableName: 't', Key: { pk: 'a', sk: 'b' } }));
    await s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' })).catch(() => undefined);
    const settings = (client: { config: { requestHandler: unknown } }) =>
      (client.config.requestHandler as { httpHandlerConfigs(): Record<string, unknown> }).httpHandlerConfigs();
    expect(settings(db)).toMatchObject({ connectionTimeout: 3_000, socketTimeout: 30_000 });
    expect(settings(s3)).toMatchObject({ connectionTimeout: 3_000, socketTimeout: 120_000 });
    db.destroy();
    s3.destroy();
    server.closeAllConnections();
  });
});
