import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { recordOf } from '../../common/http/request-context';
import { ApiClientRole, AuthenticatedClient } from '../domain/api-client';

export const IS_PUBLIC = 'auth:public';
export const REQUIRED_ROLES = 'auth:roles';

/** The route needs no client token (health checks). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/** Only clients with one of these roles may call the route; without it any valid client may. */
export const Roles = (...roles: ApiClientRole[]) => SetMetadata(REQUIRED_ROLES, roles);

/** The authenticated caller of the current request, from the request's record (noteClient). */
export const CurrentClient = createParamDecorator((_: unknown, context: ExecutionContext): AuthenticatedClient => {
  const client = recordOf(context.switchToHttp().getRequest<FastifyRequest>().raw).client;
  if (!client) throw new Error('CurrentClient used on a route without authentication');
  return client;
});
