/**
 * The ingest handler in a process of its own, as a Lambda container runs it: it
 * reads one SQS event (JSON) on stdin, builds its clients from the environment
 * (ingestDeps: BENCHDROP_TABLE, the endpoint variables, AWS_* credentials), and
 * writes the handler's answer (batchItemFailures) as JSON on stdout. The fault
 * tests kill it with SIGKILL in the middle of a file.
 */
import '../../harness/quiet.ts';
import type { SQSEvent } from 'aws-lambda';
import { handler } from '../../functions/ingest/handler.ts';
import { lambdaContext } from '../../harness/lambda.ts';

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SQSEvent;
const response = await handler(event, lambdaContext());
process.stdout.write(JSON.stringify(response));
