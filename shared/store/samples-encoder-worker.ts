/**
 * The thread that encodes samples objects (samples-encoding.ts) while the
 * ingest's own thread parses: one file's encoder per writer that asks, each
 * request answered in the order it came.
 *
 *   { id: 7, file: 2, op: 'write', group }  ->  { id: 7, bytes }   (the row group)
 *   { id: 8, file: 2, op: 'finish' }        ->  { id: 8, bytes }   (the footer; the encoder dropped)
 *   { id: 9, file: 3, op: 'drop' }          ->  { id: 9 }          (an aborted file)
 *
 * Started by samples-encoder.ts; bundled beside the ingest function.
 */
import { parentPort } from 'node:worker_threads';
import { SamplesEncoder } from './samples-encoding.ts';
import type { EncoderReply, EncoderRequest } from './samples-encoder.ts';

const encoders = new Map<number, SamplesEncoder>();

function answer(request: EncoderRequest): EncoderReply {
  const { id, file } = request;
  if (request.op === 'drop') {
    encoders.delete(file);
    return { id };
  }
  let encoder = encoders.get(file);
  if (encoder === undefined) encoders.set(file, (encoder = new SamplesEncoder()));
  if (request.op === 'write') return { id, bytes: encoder.write(request.group) };
  encoders.delete(file);
  return { id, bytes: encoder.finish() };
}

parentPort!.on('message', (request: EncoderRequest) => {
  let reply: EncoderReply;
  try {
    reply = answer(request);
  } catch (error) {
    encoders.delete(request.file);
    reply = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(reply, reply.bytes ? [reply.bytes.buffer as ArrayBuffer] : []);
});
