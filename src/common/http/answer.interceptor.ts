import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor, Optional, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mergeMap, Observable } from 'rxjs';
import type { SuccessEnvelope } from './envelope';
import { AUDIT_RECEIPT_HEADER, RequestRecorder } from './request-recorder.port';

const RESPONSE_MESSAGE = 'response-message';

/** The envelope's `message` for a handler's success, e.g. "Customer created". */
export const ResponseMessage = (message: string) => SetMetadata(RESPONSE_MESSAGE, message);

/** What goes out as it is, never in the envelope: a string (a JWKS, say), bytes, a stream. */
function isBare(payload: unknown): boolean {
  return typeof payload === 'string' || Buffer.isBuffer(payload) || payload instanceof Readable;
}

/**
 * The answer to every successful handler (Nest's interceptor, global): its terminal event is
 * recorded (RequestRecorder, the same port the error filter records failures through), then its
 * result is wrapped in `{ status, message, data, error: null }`, `message` the route's
 * @ResponseMessage or the status's text. When recording fails, the error filter answers instead
 * (the audit log fails closed). A handler returns its data, or null for none; a string, bytes or a
 * stream go out as they are, recorded all the same.
 */
@Injectable()
export class AnswerInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    @Optional() private readonly recorder?: RequestRecorder,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const message = this.reflector.getAllAndOverride<string | undefined>(RESPONSE_MESSAGE, [context.getHandler(), context.getClass()]);
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    return next.handle().pipe(mergeMap((payload) => this.answer(request, reply, payload, message)));
  }

  private async answer(request: FastifyRequest, reply: FastifyReply, payload: unknown, message: string | undefined): Promise<unknown> {
    const receipt = await this.recorder?.recordSuccess(request, reply.statusCode);
    if (receipt !== undefined) void reply.header(AUDIT_RECEIPT_HEADER, receipt);
    if (isBare(payload)) return payload;
    const envelope: SuccessEnvelope<unknown> = {
      status: reply.statusCode,
      message: message ?? STATUS_CODES[reply.statusCode] ?? 'OK',
      data: payload ?? null,
      error: null,
    };
    return envelope;
  }
}
