import { STATUS_CODES } from 'node:http';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply } from 'fastify';
import { map, Observable } from 'rxjs';
import { SuccessEnvelope } from './envelope';

const RESPONSE_MESSAGE = 'response-message';

/** The envelope's `message` for a handler's success, e.g. "Customer created". */
export const ResponseMessage = (message: string) => SetMetadata(RESPONSE_MESSAGE, message);

/** Wraps every successful handler result in `{ status, message, data, error: null }`. */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<SuccessEnvelope<unknown>> {
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const message = this.reflector.getAllAndOverride<string | undefined>(RESPONSE_MESSAGE, [context.getHandler(), context.getClass()]);
    return next.handle().pipe(
      map((data: unknown) => ({
        status: reply.statusCode,
        message: message ?? STATUS_CODES[reply.statusCode] ?? 'OK',
        data: data ?? null,
        error: null,
      })),
    );
  }
}
