import { STATUS_CODES } from 'node:http';
import { SetMetadata } from '@nestjs/common';
import type { FastifyReply, FastifyRequest, onSendAsyncHookHandler, preSerializationAsyncHookHandler } from 'fastify';
import type { SuccessEnvelope } from './envelope';
import { AUDIT_RECEIPT_HEADER, RequestRecorder } from './request-recorder.port';
import { addRouteHook, RouteRule } from './route-rules';

const RESPONSE_MESSAGE = 'response-message';

/** The envelope's `message` for a handler's success, e.g. "Customer created". */
export const ResponseMessage = (message: string) => SetMetadata(RESPONSE_MESSAGE, message);

/** The answers the error filter made: sent through the same route, and never wrapped again. */
const failureAnswers = new WeakSet<object>();

/** Marks `envelope` as a failure's answer (the error filter's), which the success answer leaves as it is. */
export function asFailureAnswer<T extends object>(envelope: T): T {
  failureAnswers.add(envelope);
  return envelope;
}

/** The requests whose success the answer hook recorded. */
const recorded = new WeakSet<FastifyRequest>();

/** A route's answer: the envelope's message for its success (its @ResponseMessage, or the status's text). */
interface AnswerRule {
  readonly message: string | undefined;
}

/**
 * The answer to every successful handler, as Fastify serialises it (a hook of each controller
 * route, no interceptor): its terminal event is recorded (RequestRecorder, the same port the
 * error filter records failures through), then its result is wrapped in
 * `{ status, message, data, error: null }`. When the recording fails, the hook throws, and the
 * error filter answers (the audit log fails closed). A handler returns its data, or null for none:
 * Fastify serialises no other payload (`undefined`, a string, a buffer, a stream), so such an
 * answer goes out as it is — but never unrecorded: a hook as it is sent records its success then.
 */
export function answerRule(recorder: RequestRecorder | undefined): RouteRule<AnswerRule> {
  return {
    key: 'answer',
    read: (reflector, handler, controller) => ({ message: reflector.getAllAndOverride<string | undefined>(RESPONSE_MESSAGE, [handler, controller]) }),
    attach: (route, rule) => {
      const answer: preSerializationAsyncHookHandler = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
        if (typeof payload === 'object' && payload !== null && failureAnswers.has(payload)) return payload;
        const receipt = await recorder?.recordSuccess(request, reply.statusCode);
        recorded.add(request);
        if (receipt !== undefined) void reply.header(AUDIT_RECEIPT_HEADER, receipt);
        const envelope: SuccessEnvelope<unknown> = {
          status: reply.statusCode,
          message: rule.message ?? STATUS_CODES[reply.statusCode] ?? 'OK',
          data: payload ?? null,
          error: null,
        };
        return envelope;
      };
      addRouteHook(route, 'preSerialization', answer);
      if (!recorder) return;
      // A success the answer hook never saw (a payload Fastify does not serialise) is recorded as it is sent.
      const unserialised: onSendAsyncHookHandler = async (request, reply, payload) => {
        if (reply.statusCode < 400 && !recorded.has(request)) {
          const receipt = await recorder.recordSuccess(request, reply.statusCode);
          if (receipt !== undefined) void reply.header(AUDIT_RECEIPT_HEADER, receipt);
        }
        return payload;
      };
      addRouteHook(route, 'onSend', unserialised);
    },
  };
}
