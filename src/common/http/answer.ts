import { STATUS_CODES } from 'node:http';
import { SetMetadata } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import type { SuccessEnvelope } from './envelope';
import { contextOf } from './request-context';
import { AUDIT_RECEIPT_HEADER, RequestRecorder } from './request-recorder.port';

/** The metadata key of a route's success message (read by the access guard, which notes it for the answer). */
export const RESPONSE_MESSAGE = 'response-message';

/** The envelope's `message` for a handler's success, e.g. "Customer created". */
export const ResponseMessage = (message: string) => SetMetadata(RESPONSE_MESSAGE, message);

/** The answers the error filter made: sent through the same reply, and never wrapped again. */
const failureAnswers = new WeakSet<object>();

/** Marks `envelope` as a failure's answer (the error filter's), which the success answer leaves as it is. */
export function asFailureAnswer<T extends object>(envelope: T): T {
  failureAnswers.add(envelope);
  return envelope;
}

/**
 * The answer to every successful handler of the controllers, as Fastify serialises it (its
 * `preSerialization` hook, global): its terminal event is recorded (RequestRecorder, the port the
 * error filter records failures through), then its result is wrapped in `{ status, message, data,
 * error: null }`, `message` the route's @ResponseMessage or the status's text. When recording
 * fails, the error filter answers (the audit log fails closed). A handler returns its data, or null
 * for none; what Fastify does not serialise (a string, bytes, a stream, nothing) goes out as it
 * is, and its success is recorded as it is sent (`onSend`), so that none goes unrecorded. Only a
 * controller's route is answered so: the access guard, which every one passes, notes its message;
 * routes outside the controllers (Swagger UI, the metrics) answer for themselves.
 *
 * Fastify's hooks rather than a Nest interceptor: an interceptor's Observable pipeline cost a
 * balance read 12–14 % of the gateway's CPU (docs/benchmarks.md, "The answer").
 */
export function installAnswer(fastify: FastifyInstance, recorder: RequestRecorder | undefined): void {
  fastify.addHook('preSerialization', async (request, reply, payload: unknown) => {
    if (typeof payload === 'object' && payload !== null && failureAnswers.has(payload)) return payload;
    const answer = contextOf(request.raw).answer;
    if (answer === undefined) return payload;
    answer.recorded = true;
    const receipt = await recorder?.recordSuccess(request, reply.statusCode);
    if (receipt !== undefined) void reply.header(AUDIT_RECEIPT_HEADER, receipt);
    const envelope: SuccessEnvelope<unknown> = {
      status: reply.statusCode,
      message: answer.message ?? STATUS_CODES[reply.statusCode] ?? 'OK',
      data: payload ?? null,
      error: null,
    };
    return envelope;
  });
  if (!recorder) return;
  fastify.addHook('onSend', async (request, reply, payload) => {
    const answer = contextOf(request.raw).answer;
    if (answer !== undefined && !answer.recorded && reply.statusCode < 400) {
      answer.recorded = true;
      const receipt = await recorder.recordSuccess(request, reply.statusCode);
      if (receipt !== undefined) void reply.header(AUDIT_RECEIPT_HEADER, receipt);
    }
    return payload;
  });
}
