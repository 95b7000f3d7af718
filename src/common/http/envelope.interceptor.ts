import { STATUS_CODES } from 'node:http';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor, Optional, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mergeMap, Observable } from 'rxjs';
import { SuccessEnvelope } from './envelope';
import { RequestRecorder } from './request-recorder.port';

const RESPONSE_MESSAGE = 'response-message';

/** The envelope's `message` for a handler's success, e.g. "Customer created". */
export const ResponseMessage = (message: string) => SetMetadata(RESPONSE_MESSAGE, message);

/**
 * The answer to every successful handler: its terminal event is recorded (RequestRecorder, the
 * same port the error filter records failures through), then its result is wrapped in
 * `{ status, message, data, error: null }`. When the recording fails, the request fails with it
 * (the audit log fails closed) and the error filter answers.
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    @Optional() private readonly recorder?: RequestRecorder,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<SuccessEnvelope<unknown>> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const message = this.reflector.getAllAndOverride<string | undefined>(RESPONSE_MESSAGE, [context.getHandler(), context.getClass()]);
    return next.handle().pipe(
      mergeMap(async (data: unknown) => {
        await this.recorder?.recordSuccess(request, reply.statusCode);
        return {
          status: reply.statusCode,
          message: message ?? STATUS_CODES[reply.statusCode] ?? 'OK',
          data: data ?? null,
          error: null,
        };
      }),
    );
  }
}
