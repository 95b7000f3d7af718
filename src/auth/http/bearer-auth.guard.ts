import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { noteClient } from '../../common/domain/request-record';
import { contextOf, targetOf } from '../../common/http/request-context';
import { DomainError } from '../../common/domain/domain-error';
import { statusOfCode } from '../../common/http/error-envelope.filter';
import { SPAN_ATTRIBUTES, traced } from '../../common/telemetry/tracing';
import { CallerIdentity } from '../../common/http/caller-identity.port';
import { ApiClientRole, AuthenticatedClient } from '../domain/api-client';
import { EndUsersNotAllowed, InsufficientScope, RoleNotAllowed } from '../domain/auth.errors';
import { Callers, PresentedCredentials, presentedToken } from '../domain/callers.service';
import { END_USER_SCOPE, IS_PUBLIC, REQUIRED_ROLES } from './auth.decorators';
import { sessionPresentedBy } from './session-cookies';

/** The request's credentials as Callers reads them; the URL is built on the canonical path the router used. */
function presentedBy(request: FastifyRequest): PresentedCredentials {
  const dpop = request.headers.dpop;
  return {
    authorization: request.headers.authorization,
    dpop,
    method: request.method,
    // Only a DPoP proof looks at it: built when one may be checked.
    url: dpop === undefined ? '' : `${request.protocol}://${request.host}${targetOf(request.raw).path}`,
    session: request.headers.authorization === undefined ? sessionPresentedBy(request) : undefined,
  };
}

/**
 * The caller the request's token belongs to, looked up once per request: the rate limiter asks
 * first, this guard asks again and gets the same answer (the pending lookup is the request
 * context's `caller`; the caller itself is kept in the request's record, where CurrentClient and
 * the audit read it).
 * @throws InvalidClientToken, InvalidDpopProof or IssuerUnavailable (through the promise).
 */
export function authenticationOf(request: FastifyRequest, callers: Callers): Promise<AuthenticatedClient> {
  const context = contextOf(request.raw);
  context.caller ??= traced('gateway.authenticate', { [SPAN_ATTRIBUTES.operation]: 'authenticate' }, () => callers.authenticate(presentedBy(request)), {
    failed: (error) => (error instanceof DomainError && statusOfCode(error.code) < 500 ? 'refused' : 'failed'),
  }).then((client) => {
    noteClient(context.record, client);
    return client;
  });
  return context.caller;
}

/** The caller's identity for the stages before authentication (CallerIdentity): the same lookup, shared. */
@Injectable()
export class BearerCallerIdentity extends CallerIdentity {
  constructor(private readonly callers: Callers) {
    super();
  }

  clientIdOf(request: FastifyRequest): Promise<string | undefined> {
    return authenticationOf(request, this.callers).then(
      (client) => client.id,
      // No token, a bad one, or the token store is down: authentication will say which.
      () => undefined,
    );
  }
}

/**
 * Global guard: every route needs a valid token unless marked @Public(). Client tokens pass where
 * their role is allowed (@Roles); end users' tokens only where the route names the scope it needs
 * (@Scope), and only when the token grants it.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly callers: Callers,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;

    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const client = await authenticationOf(request, this.callers);

    if (client.role === 'end_user') {
      const scope = this.reflector.getAllAndOverride<string | null | undefined>(END_USER_SCOPE, targets);
      if (scope === undefined) throw new EndUsersNotAllowed();
      if (scope !== null && !client.scopes?.includes(scope)) {
        throw new InsufficientScope(scope, presentedToken(request.headers.authorization)?.scheme ?? 'bearer');
      }
      return true;
    }
    const roles = this.reflector.getAllAndOverride<ApiClientRole[] | undefined>(REQUIRED_ROLES, targets);
    if (roles && !roles.includes(client.role)) throw new RoleNotAllowed(roles);
    return true;
  }
}
