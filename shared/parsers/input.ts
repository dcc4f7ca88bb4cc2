/**
 * The bytes a parse reads: a file in chunks (fileChunks), and any source of
 * chunks gunzipped when it starts with the gzip magic and refused past a size
 * limit (inputBytes).
 *
 *   1f 8b 08 00 ... (gzip)  or  "extended device statistics\n..." (plain)
 *
 * yields Buffers of the plain text, in order, for the line splitter (lines.ts).
 */
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { ParseError } from './errors.ts';

/** Large enough that reading overlaps parsing, small enough to stay in cache. */
export const READ_CHUNK_BYTES = 256 * 1024;

/**
 * Chunks of input. A source may reuse a chunk's memory once the next chunk is
 * asked for (fileChunks does): what the parser keeps longer, it copies.
 */
export type ByteSource = AsyncIterable<Buffer | string> | Iterable<Buffer | string>;

/**
 * Bytes [start, end) of a file, read in READ_CHUNK_BYTES into two buffers that
 * take turns: the next read runs while the caller parses the chunk it has. A
 * read stream allocates a fresh buffer per read instead, and those allocations
 * (page faults, garbage collection of external memory) cost more than the
 * reading. A chunk is valid until the next one is asked for.
 */
export async function* fileChunks(path: string, start = 0, end = Number.POSITIVE_INFINITY): AsyncGenerator<Buffer> {
  const file = await open(path, 'r');
  const buffers = [Buffer.allocUnsafeSlow(READ_CHUNK_BYTES), Buffer.allocUnsafeSlow(READ_CHUNK_BYTES)] as const;
  const readInto = (buffer: Buffer, position: number) => {
    const reading = file.read(buffer, 0, Math.min(buffer.length, end - position), position);
    // Handled when awaited; until then a failed read must not count as an unhandled rejection.
    reading.catch(() => undefined);
    return reading;
  };
  let position = start;
  let next = position < end ? readInto(buffers[0], position) : undefined;
  try {
    for (let turn = 0; next !== undefined; turn ^= 1) {
      const { bytesRead } = await next;
      next = undefined;
      if (bytesRead === 0) return;
      position += bytesRead;
      // The next read goes to the other buffer, so it starts only once this one's length is known.
      if (position < end) next = readInto(buffers[turn ^ 1], position);
      yield buffers[turn].subarray(0, bytesRead);
    }
  } finally {
    // A read still running when the caller stops finishes before the file closes.
    await next?.catch(() => undefined);
    await file.close();
  }
}

function asBuffer(chunk: Buffer | string): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
}

type ChunkIterator = AsyncIterator<Buffer | string> | Iterator<Buffer | string>;

/** What inputBytes learnt while reading: whether the input is gzip, and an error of the source itself. */
interface Reading {
  gzip: boolean;
  /** An error of the input itself (a download that broke off) is not damage to the gzip data. */
  sourceError?: { error: unknown };
}

/**
 * The bytes of the input, gunzipped when they start with the gzip magic, refused
 * past maxBytes (counted after decompression, so a gzip bomb stops at the limit).
 * However the consumer stops (end, ParseError, any error), the input is closed:
 * a file stream gives its descriptor back.
 */
export async function* inputBytes(
  input: ByteSource,
  source: string,
  maxBytes: number,
  counter: { bytes: number },
): AsyncGenerator<Buffer> {
  const iterator: ChunkIterator =
    Symbol.asyncIterator in input ? input[Symbol.asyncIterator]() : input[Symbol.iterator]();
  const reading: Reading = { gzip: false };
  try {
    const head = await readHead(iterator);
    reading.gzip = head.first.length >= 2 && head.first[0] === 0x1f && head.first[1] === 0x8b;
    const raw = rawChunks(iterator, head, reading);
    const gunzip = reading.gzip ? gunzipped(raw) : undefined;
    try {
      for await (const chunk of gunzip?.chunks ?? raw) {
        counter.bytes += chunk.length;
        if (counter.bytes > maxBytes) throw tooLarge(source, maxBytes, reading.gzip);
        yield chunk;
      }
    } finally {
      await gunzip?.close();
    }
  } catch (error) {
    throw inputFailure(error, reading, source);
  } finally {
    await iterator.return?.();
  }
}

/**
 * The first bytes, at least the 2 of the gzip magic unless the input is shorter (a stream may
 * deliver fewer per chunk).
 */
async function readHead(iterator: ChunkIterator): Promise<{ first: Buffer; done: boolean }> {
  const head: Buffer[] = [];
  let headLength = 0;
  while (headLength < 2) {
    const next = await iterator.next();
    if (next.done) return { first: Buffer.concat(head), done: true };
    const chunk = asBuffer(next.value);
    // Read on, the source may reuse this chunk's memory: keep a copy.
    head.push(headLength + chunk.length < 2 ? Buffer.from(chunk) : chunk);
    headLength += chunk.length;
  }
  return { first: Buffer.concat(head), done: false };
}

/** The input's chunks as read, the head first; an error of the source is noted in `reading`. */
async function* rawChunks(
  iterator: ChunkIterator,
  head: { first: Buffer; done: boolean },
  reading: Reading,
): AsyncGenerator<Buffer> {
  yield head.first;
  if (head.done) return;
  for (;;) {
    let next: IteratorResult<Buffer | string>;
    try {
      next = await iterator.next();
    } catch (error) {
      reading.sourceError = { error };
      throw error;
    }
    if (next.done) return;
    const chunk = asBuffer(next.value);
    // gunzip takes chunks ahead of decompressing them: a copy, as the source may reuse the memory.
    yield reading.gzip ? Buffer.from(chunk) : chunk;
  }
}

/** The raw chunks through gunzip; errors of the feed surface through the chunks read. */
function gunzipped(raw: AsyncIterable<Buffer>): { chunks: AsyncIterable<Buffer>; close(): Promise<void> } {
  const gunzip = createGunzip();
  const feeding = pipeline(Readable.from(raw), gunzip).catch(() => undefined);
  return {
    chunks: gunzip,
    async close() {
      gunzip.destroy();
      await feeding;
    },
  };
}

function tooLarge(source: string, maxBytes: number, gzip: boolean): ParseError {
  return new ParseError({
    source,
    line: 0,
    problem: `more than ${maxBytes} bytes${gzip ? ' after decompression' : ''}`,
    expected: `a log of at most ${maxBytes} bytes`,
  });
}

/**
 * What leaves inputBytes for an error met while reading: the source's own error as it is, broken
 * gzip as a ParseError.
 */
function inputFailure(error: unknown, reading: Reading, source: string): unknown {
  if (error instanceof ParseError) return error;
  if (reading.sourceError !== undefined) return reading.sourceError.error;
  if (!reading.gzip) return error;
  return new ParseError({
    source,
    line: 0,
    problem: `a damaged gzip file (${(error as Error).message})`,
    expected: 'a complete gzip file',
  });
}
