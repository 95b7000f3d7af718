import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, mergeMap, Observable } from 'rxjs';
import { RequestAuditor } from './request-auditor';

/** Writes the terminal `succeeded` event before a successful response leaves. */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(private readonly auditor: RequestAuditor) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    return next.handle().pipe(mergeMap((result: unknown) => from(this.auditor.recordSuccess(request, reply.statusCode).then(() => result))));
  }
}
