import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../common/domain/domain-error';
import { ANSWERED, type EdgeStage } from '../../common/http/edge-stage';
import { contextOf } from '../../common/http/request-context';
import { AUDIT_RECEIPT_HEADER, RequestRecorder } from '../../common/http/request-recorder.port';
import { OPERATION, type AuditOperation } from '../../common/domain/audit-operations';
import { ALL_TENANTS } from '../../common/domain/request-record';
import type { SignedInStaff } from './staff-docs-login';
import { InvalidToken, RoleNotAllowed, TokenMissing } from '../domain/auth.errors';
import type { StaffPolicy } from '../domain/staff';
import type { StaffRole } from '../../common/domain/staff-roles';
import { presentedToken } from './presented-credentials';
import { callerOf, checkStaffAccess } from './access.guard';

export interface AdminPath {
  /** The path itself and everything under it (`/docs` covers `/docs/`, `/docs-json`, `/docs/x.js`). */
  readonly prefix: string;
  /** What a use of it is audited as. */
  readonly operation: AuditOperation;
  /** `basic` makes a browser prompt (any user name, the admin token as password). */
  readonly challenge: 'basic' | 'bearer';
  /**
   * A credential of this path's own (METRICS_TOKEN on /metrics), as `tokenDigest` makes it: its
   * bearer token, and nothing else, is accepted there; no caller is identified, so nothing is looked up.
   */
  readonly token?: Buffer;
  /** The staff roles that may read it too (with the second factor they need); none, admin tokens only. */
  readonly staffRoles?: readonly StaffRole[];
  /**
   * A browser's own sign-in (/docs in live mode, with staff sign-in): a request that presents no
   * credential passes when it carries the sign-in, and a page request is sent to sign in.
   */
  readonly signIn?: { signedIn(request: FastifyRequest): Promise<SignedInStaff | undefined>; signInUrl(path: string): string };
}

/** What a path's own token is kept as, and compared by: its SHA-256 (so that lengths do not show). */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The refusal for a request to a path with a token of its own, or undefined when it presents that token. */
function ownTokenRefusal(request: FastifyRequest, expected: Buffer): DomainError | undefined {
  if (request.headers.authorization === undefined) return new TokenMissing();
  const presented = presentedToken(request.headers.authorization);
  if (presented?.scheme !== 'bearer') return new TokenMissing('Send the metrics token as `Authorization: Bearer <token>`');
  return timingSafeEqual(tokenDigest(presented.token), expected) ? undefined : new InvalidToken();
}

/**
 * An admin path whatever the configuration: what each readiness check found (HealthController's
 * details; /health/ready itself answers anyone with its verdict alone). A bearer token, as on /metrics.
 */
export const READINESS_DETAILS: AdminPath = {
  prefix: '/health/details',
  operation: OPERATION.adminHealthDetails,
  challenge: 'bearer',
  staffRoles: ['operator'],
};

function covers(prefix: string, path: string | undefined): boolean {
  if (path === undefined) return false;
  const lower = path.toLowerCase();
  return lower === prefix || lower.startsWith(`${prefix}/`) || lower.startsWith(`${prefix}-`);
}

/** The admin path a request falls under, on the route the router matched and the canonical path (never the request line as spelled). */
export function adminPathOf(paths: readonly AdminPath[], request: FastifyRequest): AdminPath | undefined {
  const path = contextOf(request.raw).target.path;
  return paths.find((candidate) => covers(candidate.prefix, request.routeOptions.url) || covers(candidate.prefix, path));
}

/**
 * Routes served outside the controllers (Swagger UI, the OpenAPI document, metrics) that need an
 * admin client, and the readiness details (READINESS_DETAILS): the caller the identify stage found
 * must be one. Refusals are the usual envelope (401 or 403) through the one error filter, with the
 * challenge that makes a browser prompt.
 *
 * Every use is audited (docs/security.md, "Staff"): admitted or refused, under the path's operation,
 * naming the caller (an admin token as break-glass, a staff member with the roles used) and the
 * status. The error filter records a refusal; an admitted use is recorded as its answer leaves
 * (`recorder`), unless its route recorded it already. Three requests are not: one that presents
 * no credential (it names nobody: a browser before its prompt, a scanner), a scrape of /metrics
 * with its own token (METRICS_TOKEN: Prometheus's credential, counters only; a refused one is
 * audited), and a browser sent to sign in (nothing was used).
 */
export function adminPathsStage(paths: readonly AdminPath[], staffPolicy: StaffPolicy, recorder?: RequestRecorder): EdgeStage {
  const check = (request: FastifyRequest, reply: FastifyReply, guarded: AdminPath): void => {
    const context = contextOf(request.raw);
    if (guarded.token !== undefined) {
      const refusal = ownTokenRefusal(request, guarded.token);
      if (!refusal) return;
      // A use is audited when it presented a credential: a request with none names nobody (a browser before its prompt, a scanner).
      if (request.headers.authorization !== undefined) context.auditAs = guarded.operation;
      // RFC 6750 section 3.1: a token that was presented and refused is named in the challenge.
      void reply.header('www-authenticate', `Bearer realm="Partner gateway metrics"${refusal instanceof InvalidToken ? ', error="invalid_token"' : ''}`);
      throw refusal;
    }
    // A browser session is an end user's: on these paths it counts for nothing, so that an admin whose browser also holds one still gets the prompt.
    // Basic is what a browser's prompt sends, and only where it is asked for (/docs).
    const ignored = context.identity?.presentedAs === 'session' || (context.identity?.presentedAs === 'basic' && guarded.challenge !== 'basic');
    const identity = ignored ? undefined : context.identity;
    if (identity?.caller !== undefined || identity?.refusal !== undefined) context.auditAs = guarded.operation;
    try {
      const client = callerOf(identity);
      if (client.role === 'staff') checkStaffAccess(client, guarded.staffRoles, staffPolicy, context.record);
      else if (client.role !== 'admin') throw new RoleNotAllowed(['admin']);
    } catch (refusal) {
      if (guarded.challenge === 'basic') void reply.header('www-authenticate', 'Basic realm="Partner gateway admin", charset="UTF-8"');
      else void reply.header('www-authenticate', 'Bearer realm="Partner gateway admin"');
      throw refusal;
    }
  };
  return {
    name: 'admin-paths',
    onRequest: (request, reply) => {
      const guarded = adminPathOf(paths, request);
      if (!guarded) return;
      const presented = contextOf(request.raw).identity?.presentedAs;
      // Nothing presented (an end user's browser session counts for nothing here): the browser's own sign-in, where there is one.
      if (!guarded.signIn || (presented !== undefined && presented !== 'session')) return check(request, reply, guarded);
      const signIn = guarded.signIn;
      return signIn.signedIn(request).then((staff) => {
        if (staff) {
          const context = contextOf(request.raw);
          context.record.noteClient({ id: staff.id, name: staff.name, tenant: ALL_TENANTS, role: 'staff', staff: { roles: staff.roles, secondFactor: true } });
          context.record.noteStaffRoles(staff.roles);
          context.auditAs = guarded.operation;
          return;
        }
        if (request.method !== 'GET' && request.method !== 'HEAD') return check(request, reply, guarded);
        void reply.header('cache-control', 'no-store').redirect(signIn.signInUrl(contextOf(request.raw).target.path), 302);
        return ANSWERED;
      });
    },
    // An admitted use, as its answer leaves: a route of the controllers (the readiness details) has recorded it already.
    onSend: (request, reply) => {
      const context = contextOf(request.raw);
      if (context.auditAs === undefined || context.record.concluded || reply.statusCode >= 400 || !recorder) return;
      return recorder.recordSuccess(request, reply.statusCode).then((receipt) => {
        if (receipt !== undefined) void reply.header(AUDIT_RECEIPT_HEADER, receipt);
      });
    },
  };
}
