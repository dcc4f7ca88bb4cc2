/**
 * A thread that encodes samples row groups (samples-encoding.ts) while the
 * ingest's own thread parses. It keeps nothing between requests: any thread
 * of the pool may encode any group of any file, and the footer is written
 * from the groups' entries the writer sends back.
 *
 *   { id: 7, op: 'write', group, first: true }  ->  { id: 7, bytes, rowGroup }
 *   { id: 8, op: 'footer', groups: [...] }      ->  { id: 8, bytes }
 *
 * Started by samples-encoder.ts; bundled beside the ingest function.
 */
import { parentPort } from 'node:worker_threads';
import { encodeFooter, encodeRowGroup } from './samples-encoding.ts';
import type { EncoderReply, EncoderRequest } from './samples-encoder.ts';

function answer(request: EncoderRequest): EncoderReply {
  if (request.op === 'write') return { id: request.id, ...encodeRowGroup(request.group, request.first) };
  return { id: request.id, bytes: encodeFooter(request.groups) };
}

parentPort!.on('message', (request: EncoderRequest) => {
  let reply: EncoderReply;
  try {
    reply = answer(request);
  } catch (error) {
    reply = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(reply, reply.bytes ? [reply.bytes.buffer as ArrayBuffer] : []);
});
