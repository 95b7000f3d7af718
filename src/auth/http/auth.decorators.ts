import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiSecurity } from '@nestjs/swagger';
import type { StaffRole } from '../../common/domain/staff-roles';
import type { FastifyRequest } from 'fastify';
import { contextOf } from '../../common/http/request-context';
import type { AuthenticatedClient } from '../domain/api-client';
import type { ClientRole } from '../../common/domain/request-record';
import type { Scope } from '../domain/scopes';

export const IS_PUBLIC = 'auth:public';
export const REQUIRED_ROLES = 'auth:roles';
export const END_USER_SCOPE = 'auth:end-user-scope';
export const STAFF_ROLES_ALLOWED = 'auth:staff-roles';

/**
 * The route needs no credential (health checks, a browser's login, the audit keys). The OpenAPI
 * document says so with an empty requirement, which buildOpenApiDocument writes as `security: []`.
 */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiSecurity({}));

/** Only clients with one of these roles may call the route; without it any valid client may. */
export const Roles = (...roles: ClientRole[]) => SetMetadata(REQUIRED_ROLES, roles);

/**
 * End users may call the route when their access token grants `scope`; with no scope, any end
 * user may (their own data only). Without this decorator, end users' tokens are refused (403).
 */
export const EndUsers = (scope: Scope | null = null) =>
  applyDecorators(
    SetMetadata(END_USER_SCOPE, scope),
    // The OpenAPI document: a partner's client token, an end user's access token with this scope, or a web app's session.
    ApiSecurity(END_USER_SECURITY_SCHEME, scope ? [scope] : []),
    ApiSecurity(BROWSER_SESSION_SECURITY_SCHEME),
  );

/**
 * Staff with one of these roles may call the route (docs/security.md, "Staff"); without this
 * decorator, staff tokens are refused (403). The roles are the route's row of the staff table, read
 * once at start, and shown in the OpenAPI document (`x-staff-roles`, and the staff security scheme).
 */
export const Staff = (...roles: [StaffRole, ...StaffRole[]]) =>
  applyDecorators(SetMetadata(STAFF_ROLES_ALLOWED, roles), ApiExtension('x-staff-roles', roles), ApiSecurity(STAFF_SECURITY_SCHEME));

/** The OpenAPI security scheme of staff access tokens, from the company's OpenID provider (swagger.ts declares it). */
export const STAFF_SECURITY_SCHEME = 'staff';

/** The OpenAPI security scheme of end users' access tokens (swagger.ts declares it). */
export const END_USER_SECURITY_SCHEME = 'end-user';
/** The OpenAPI security scheme of web apps' session cookie (swagger.ts declares it). */
export const BROWSER_SESSION_SECURITY_SCHEME = 'browser-session';

/** The caller of the current request, as the edge's identify stage found it (its record holds the same, less the end user's profile). */
export const CurrentClient = createParamDecorator((_: unknown, context: ExecutionContext): AuthenticatedClient => {
  const client = contextOf(context.switchToHttp().getRequest<FastifyRequest>().raw).identity?.caller;
  if (!client) throw new Error('CurrentClient used on a route without authentication');
  return client;
});
