import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { contextOf, Identification } from '../../common/http/request-context';
import type { AuthenticatedClient } from '../domain/api-client';
import { ApiClientRole } from '../domain/api-client';
import { EndUsersNotAllowed, InsufficientScope, RoleNotAllowed, TokenMissing } from '../domain/auth.errors';
import { BrowserSessions } from '../domain/browser-sessions.service';
import { END_USER_SCOPE, IS_PUBLIC, REQUIRED_ROLES } from './auth.decorators';

/**
 * The caller the identify stage found, for a route that needs one: the stored refusal raised, or
 * a 401 when nothing was presented.
 * @throws what identification refused with; TokenMissing when no credentials were presented.
 */
export function callerOf(identity: Identification | undefined, details?: string): AuthenticatedClient {
  if (identity?.refusal) throw identity.refusal;
  if (!identity?.caller) throw new TokenMissing(details);
  return identity.caller;
}

/**
 * Global guard: may this caller call this route? Who the caller is was decided once, by the edge's
 * identify stage; this only checks what the route allows. Every route needs a caller unless marked
 * @Public(). Partner and admin clients pass where their role is allowed (@Roles); end users (with
 * an access token or a browser session) only where the route names the scope it needs
 * (@EndUsers), and only when their token grants it.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  /** What a request with no credentials is told to send. */
  private readonly missing: string;

  constructor(
    private readonly reflector: Reflector,
    sessions: BrowserSessions,
  ) {
    this.missing = sessions.enabled
      ? 'Send the token as `Authorization: Bearer <token>` (or `DPoP <token>`), or, from a web app, the session cookie with `X-CSRF: 1`'
      : 'Send the token as `Authorization: Bearer <token>`';
  }

  canActivate(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;

    const identity = contextOf(context.switchToHttp().getRequest<FastifyRequest>().raw).identity;
    // Basic is for the browser's prompt on /docs: an API call presents its token as a token.
    if (identity?.presentedAs === 'basic') throw new TokenMissing('Basic authentication is for /docs only: send the token as `Authorization: Bearer <token>`');
    const client = callerOf(identity, this.missing);

    if (client.role === 'end_user') {
      const scope = this.reflector.getAllAndOverride<string | null | undefined>(END_USER_SCOPE, targets);
      if (scope === undefined) throw new EndUsersNotAllowed();
      if (scope !== null && !client.scopes?.includes(scope)) {
        throw new InsufficientScope(scope, identity?.presentedAs === 'dpop' ? 'dpop' : 'bearer');
      }
      return true;
    }
    const roles = this.reflector.getAllAndOverride<ApiClientRole[] | undefined>(REQUIRED_ROLES, targets);
    if (roles && !roles.includes(client.role)) throw new RoleNotAllowed(roles);
    return true;
  }
}
