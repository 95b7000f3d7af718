import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { RequestRecord } from '../domain/request-record';
import { recordOf } from './request-context';

/**
 * The request's audit record (common/domain/request-record.ts), from the request's context: a
 * controller passes it to the domain services, which pass it on to the ports that note what the
 * request is about and what the provider answered.
 */
export const CurrentRecord = createParamDecorator((_: unknown, context: ExecutionContext): RequestRecord =>
  recordOf(context.switchToHttp().getRequest<FastifyRequest>().raw),
);
