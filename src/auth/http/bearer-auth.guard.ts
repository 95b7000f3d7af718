import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { noteClient } from '../../common/domain/request-record';
import { contextOf } from '../../common/http/request-context';
import { CallerIdentity } from '../../common/http/caller-identity.port';
import { ApiClientRole, AuthenticatedClient } from '../domain/api-client';
import { ApiClientsService } from '../domain/api-clients.service';
import { RoleNotAllowed } from '../domain/auth.errors';
import { IS_PUBLIC, REQUIRED_ROLES } from './auth.decorators';

/** `Bearer <token>`, scheme case-insensitive; anything else counts as no token. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(header);
  return match?.[1];
}

/**
 * The client the request's bearer token belongs to, looked up once per request: the rate limiter
 * asks first, this guard asks again and gets the same answer (the pending lookup is the request
 * context's `caller`; the client itself is kept in the request's record, where CurrentClient and
 * the audit read it).
 * @throws InvalidClientToken (through the promise) when there is no valid token.
 */
export function authenticationOf(request: FastifyRequest, clients: ApiClientsService): Promise<AuthenticatedClient> {
  const context = contextOf(request.raw);
  context.caller ??= clients.authenticate(bearerToken(request.headers.authorization)).then((client) => {
    noteClient(context.record, client);
    return client;
  });
  return context.caller;
}

/** The caller's identity for the stages before authentication (CallerIdentity): the same lookup, shared. */
@Injectable()
export class BearerCallerIdentity extends CallerIdentity {
  constructor(private readonly clients: ApiClientsService) {
    super();
  }

  clientIdOf(request: FastifyRequest): Promise<string | undefined> {
    return authenticationOf(request, this.clients).then(
      (client) => client.id,
      // No token, a bad one, or the token store is down: authentication will say which.
      () => undefined,
    );
  }
}

/** Global guard: every route needs a valid client token unless marked @Public(). */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly clients: ApiClientsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;

    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const client = await authenticationOf(request, this.clients);

    const roles = this.reflector.getAllAndOverride<ApiClientRole[] | undefined>(REQUIRED_ROLES, targets);
    if (roles && !roles.includes(client.role)) throw new RoleNotAllowed(roles);
    return true;
  }
}
