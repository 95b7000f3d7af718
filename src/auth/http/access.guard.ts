import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { RESPONSE_MESSAGE } from '../../common/http/answer';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answeredVersion, API_VERSION_HEADER, API_VERSIONS } from '../../common/domain/api-versions';
import { RequestValidationFailed } from '../../common/http/validation';
import { contextOf, Identification } from '../../common/http/request-context';
import type { AuthenticatedClient } from '../domain/api-client';
import type { ClientRole } from '../../common/domain/request-record';
import { EndUsersNotAllowed, InsufficientScope, MfaRequired, RoleNotAllowed, StaffNotAllowed, TokenMissing } from '../domain/auth.errors';
import { BrowserSessions } from '../domain/browser-sessions.service';
import { rolesUsed, StaffPolicy } from '../domain/staff';
import { type StaffRole } from '../../common/domain/staff-roles';
import { RequestRecord } from '../../common/domain/request-record';
import { END_USER_SCOPE, IS_PUBLIC, REQUIRED_ROLES, STAFF_ROLES_ALLOWED } from './auth.decorators';

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

/** What a route allows, from its decorators (its handler's, then its controller's). */
export interface AccessRule {
  /** @ResponseMessage(): what its success's envelope says (noted for the answer, common/http/answer.ts). */
  readonly message?: string;
  /** @Public(): no caller needed. */
  readonly public: boolean;
  /** @Roles(): the client roles allowed; undefined, any client. */
  readonly roles: readonly ClientRole[] | undefined;
  /** @EndUsers(): the scope an end user needs (null, none); undefined, end users are refused. */
  readonly endUserScope: string | null | undefined;
  /** @Staff(): the staff roles allowed; undefined, staff are refused. */
  readonly staffRoles: readonly StaffRole[] | undefined;
}

/**
 * May this caller call this route? Who the caller is was decided once, by the edge's identify
 * stage; this only checks what the route allows, from its rule. Every route needs a caller unless
 * marked @Public(). Partner and admin clients pass where their role is allowed (@Roles); end users
 * (with an access token or a browser session) only where the route names the scope it needs
 * (@EndUsers), and only when their token grants it; staff only where the route names their role
 * (@Staff), with the second factor that role needs. A staff member's roles used are noted in the
 * request's record (its audit event names them).
 * @throws the refusal: TokenMissing, EndUsersNotAllowed, InsufficientScope, RoleNotAllowed,
 *   StaffNotAllowed, MfaRequired, or what identification refused with.
 */
export function checkAccess(rule: AccessRule, identity: Identification | undefined, missing: string, staffPolicy: StaffPolicy, record?: RequestRecord): void {
  if (rule.public) return;
  // Basic is for the browser's prompt on /docs: an API call presents its token as a token.
  if (identity?.presentedAs === 'basic') throw new TokenMissing('Basic authentication is for /docs only: send the token as `Authorization: Bearer <token>`');
  const client = callerOf(identity, missing);

  if (client.role === 'end_user') {
    const scope = rule.endUserScope;
    if (scope === undefined) throw new EndUsersNotAllowed();
    if (scope !== null && !client.scopes?.includes(scope)) {
      throw new InsufficientScope(scope, identity?.presentedAs === 'dpop' ? 'dpop' : 'bearer');
    }
    return;
  }
  if (client.role === 'staff') return checkStaffAccess(client, rule.staffRoles, staffPolicy, record);
  if (rule.roles && !rule.roles.includes(client.role)) throw new RoleNotAllowed([...rule.roles]);
}

/**
 * A staff member on an operation: one of their roles must be among those it allows (`allowed`;
 * undefined, none), with the second factor the role needs; the roles used go into the record.
 * @throws StaffNotAllowed, MfaRequired.
 */
export function checkStaffAccess(
  client: AuthenticatedClient,
  allowed: readonly StaffRole[] | undefined,
  staffPolicy: StaffPolicy,
  record: RequestRecord | undefined,
): void {
  if (!allowed) throw new StaffNotAllowed();
  const theirs = (client.staff?.roles ?? []) as StaffRole[];
  const used = rolesUsed({ roles: theirs, secondFactor: client.staff?.secondFactor === true }, allowed, staffPolicy.mfaRoles);
  if (used.needsSecondFactor)
    throw new MfaRequired(
      allowed.filter((role) => theirs.includes(role)),
      [...staffPolicy.mfaAcrValues],
    );
  if (used.roles.length === 0) throw new StaffNotAllowed(allowed);
  if (record) record.noteStaffRoles(used.roles);
}

/**
 * Every controller route's access (Nest's guard, global): the route's rule is read from its
 * decorators (once per handler, then remembered), and the caller is the one the edge's identify
 * stage found; this guard never authenticates. Every controller route passes it, so it also notes
 * the route's success message in the request's context, for the answer (common/http/answer.ts).
 */
@Injectable()
export class AccessGuard implements CanActivate {
  /** What a request with no credentials is told to send. */
  private readonly missing: string;
  /** Each route's rule, by its controller and handler (a handler two controllers inherit reads each one's decorators). */
  private readonly rules = new WeakMap<object, WeakMap<object, AccessRule>>();

  constructor(
    private readonly reflector: Reflector,
    sessions: BrowserSessions,
    private readonly staffPolicy: StaffPolicy,
  ) {
    this.missing = sessions.enabled
      ? 'Send the token as `Authorization: Bearer <token>` (or `DPoP <token>`), or, from a web app, the session cookie with `X-CSRF: 1`'
      : 'Send the token as `Authorization: Bearer <token>`';
  }

  canActivate(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    const controller = context.getClass();
    let ofController = this.rules.get(controller);
    if (!ofController) this.rules.set(controller, (ofController = new WeakMap()));
    let rule = ofController.get(handler);
    if (!rule) {
      const targets = [handler, controller];
      rule = {
        message: this.reflector.getAllAndOverride<string | undefined>(RESPONSE_MESSAGE, targets),
        public: this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, targets) === true,
        roles: this.reflector.getAllAndOverride<ClientRole[] | undefined>(REQUIRED_ROLES, targets),
        endUserScope: this.reflector.getAllAndOverride<string | null | undefined>(END_USER_SCOPE, targets),
        staffRoles: this.reflector.getAllAndOverride<StaffRole[] | undefined>(STAFF_ROLES_ALLOWED, targets),
      };
      ofController.set(handler, rule);
    }
    const http = context.switchToHttp();
    const raw = http.getRequest<FastifyRequest>().raw;
    const request = contextOf(raw);
    // Every controller route passes here first: the answer learns it is one, and its message.
    request.answer = { message: rule.message, recorded: false };
    if (!rule.public) checkAccess(rule, request.identity, this.missing, this.staffPolicy, request.record);
    const version = answeredVersion(raw.headers[API_VERSION_HEADER.toLowerCase()], request.identity?.caller?.apiVersion);
    if (version === undefined) {
      throw new RequestValidationFailed([{ field: API_VERSION_HEADER, message: `${API_VERSION_HEADER} must be one of ${API_VERSIONS.join(', ')}` }]);
    }
    void http.getResponse<FastifyReply>().header(API_VERSION_HEADER, version);
    return true;
  }
}
