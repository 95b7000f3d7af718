import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiClientRole, AuthenticatedClient } from '../domain/api-client';

export const IS_PUBLIC = 'auth:public';
export const REQUIRED_ROLES = 'auth:roles';

/** The route needs no client token (health checks). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/** Only clients with one of these roles may call the route; without it any valid client may. */
export const Roles = (...roles: ApiClientRole[]) => SetMetadata(REQUIRED_ROLES, roles);

const CLIENT = Symbol('authenticated-client');
type WithClient = FastifyRequest & { [CLIENT]?: AuthenticatedClient };

export function attachClient(request: FastifyRequest, client: AuthenticatedClient): void {
  (request as WithClient)[CLIENT] = client;
}

export function clientOf(request: FastifyRequest): AuthenticatedClient | undefined {
  return (request as WithClient)[CLIENT];
}

/** The authenticated caller of the current request. */
export const CurrentClient = createParamDecorator((_: unknown, context: ExecutionContext): AuthenticatedClient => {
  const client = clientOf(context.switchToHttp().getRequest<FastifyRequest>());
  if (!client) throw new Error('CurrentClient used on a route without authentication');
  return client;
});
