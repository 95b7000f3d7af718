import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorEnvelope, problemOf } from '../../common/http/error-envelope.filter';
import { targetOf } from '../../common/http/request-context';
import type { ErrorDocs } from '../../common/http/error-docs';
import { AccessTokens } from '../domain/access-tokens.port';
import { InvalidToken, LoginFailed, MfaRequired, StaffNotAllowed } from '../domain/auth.errors';
import { RelyingParty } from '../domain/relying-party.port';
import { SealedBox } from '../../common/domain/sealed-box.port';
import { rolesUsed, StaffPolicy, staffMemberOf } from '../domain/staff';
import { STAFF_ROLES } from '../../common/domain/staff-roles';
import { clearedCookie, loginCookie, onlyCookieOf } from './browser-session-http';

/** Where a staff member's browser signs in to /docs, and where the company's provider sends it back. */
export const STAFF_LOGIN_PATHS = { login: '/staff/login', callback: '/staff/callback' } as const;

/** `__Host-` (Secure, Path=/, no Domain); HttpOnly; SameSite=Lax, as the provider's callback is a navigation from its site. */
export const STAFF_COOKIE = '__Host-gw_staff' as const;
const STAFF_LOGIN_COOKIE = '__Host-gw_staff_login' as const;

/** A sign-in to /docs lasts a working day; a login started and not finished, ten minutes. */
const SIGNED_IN_SECONDS = 8 * 3600;
const LOGIN_SECONDS = 600;

/** What the sealed cookies hold, and the context each is sealed for (one does not open as the other). */
interface SignedIn {
  readonly staffId: string;
  /** Their display name and the roles their sign-in was admitted with (absent in a sign-in sealed before they were kept). */
  readonly name?: string;
  readonly roles?: readonly string[];
  readonly until: number;
}

/** Who a good sign-in is: the staff member, as their audit events name them. */
export interface SignedInStaff {
  readonly id: string;
  readonly name: string;
  readonly roles: readonly string[];
}
interface LoginInProgress {
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  readonly returnTo: string;
}
const SIGNED_IN = 'staff-docs';
const LOGIN = 'staff-docs-login';

/** Where a sign-in may return to: Swagger UI and what it serves, nothing else. */
const RETURN_TO = /^\/docs(?:[/-][A-Za-z0-9._~/-]*)?$/;

/**
 * Swagger UI in live mode sits behind the staff's own sign-in (docs/security.md, "Staff"): a
 * browser without it is sent to the company's provider (authorization code with PKCE, this service
 * as STAFF_OIDC_CLIENT_ID), and comes back with a sealed cookie that opens /docs for a working day.
 * The cookie opens the page only: every API call from it carries the staff member's own access
 * token (Swagger UI's Authorize), checked on each request as any other. The sign-in admits a staff
 * member whom at least one role admits, with the second factor that role needs.
 */
export class StaffDocsLogin {
  constructor(
    private readonly provider: RelyingParty,
    private readonly tokens: AccessTokens,
    private readonly policy: StaffPolicy,
    private readonly box: SealedBox,
    /** The origin browsers reach the service at (PUBLIC_BASE_URL, or loopback and the port listened on). */
    private readonly publicOrigin: () => string,
    private readonly docs: ErrorDocs,
    private readonly now: () => number = Date.now,
  ) {}

  /** Who the request's sign-in is, when it carries one that is still good. */
  async signedIn(request: FastifyRequest): Promise<SignedInStaff | undefined> {
    const sealed = onlyCookieOf(request, STAFF_COOKIE);
    if (!sealed) return undefined;
    let signedIn: SignedIn;
    try {
      signedIn = await this.box.open<SignedIn>(sealed, SIGNED_IN);
    } catch {
      return undefined;
    }
    if (typeof signedIn.until !== 'number' || signedIn.until <= this.now() || typeof signedIn.staffId !== 'string') return undefined;
    return { id: signedIn.staffId, name: signedIn.name ?? signedIn.staffId, roles: signedIn.roles ?? [] };
  }

  /** Where a browser is sent to sign in, coming back to `path` (or /docs). */
  signInUrl(path: string): string {
    return `${STAFF_LOGIN_PATHS.login}?return_to=${encodeURIComponent(RETURN_TO.test(path) ? path : '/docs')}`;
  }

  install(fastify: FastifyInstance): void {
    fastify.get(STAFF_LOGIN_PATHS.login, (request, reply) => this.answer(reply, () => this.start(request, reply)));
    fastify.get(STAFF_LOGIN_PATHS.callback, (request, reply) => this.answer(reply, () => this.finish(request, reply)));
  }

  private async start(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const asked = (request.query as Record<string, unknown>).return_to;
    const returnTo = typeof asked === 'string' && RETURN_TO.test(asked) ? asked : '/docs';
    const login = await this.provider.startLogin(this.callbackUrl());
    const inProgress: LoginInProgress = { state: login.state, nonce: login.nonce, codeVerifier: login.codeVerifier, returnTo };
    return reply
      .header('set-cookie', loginCookie(await this.box.seal(inProgress, LOGIN), LOGIN_SECONDS, STAFF_LOGIN_COOKIE))
      .header('cache-control', 'no-store')
      .redirect(login.url, 302);
  }

  private async finish(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const sealed = onlyCookieOf(request, STAFF_LOGIN_COOKIE);
    if (!sealed) throw new LoginFailed('No sign-in was started from this browser: open /docs again');
    let expected: LoginInProgress;
    try {
      expected = await this.box.open<LoginInProgress>(sealed, LOGIN);
    } catch (error) {
      throw new LoginFailed('The sign-in started from this browser has expired: open /docs again', error);
    }
    const { path, query } = targetOf(request.raw);
    const completed = await this.provider.finishLogin(new URL(`${path}${query ? `?${query}` : ''}`, this.publicOrigin()), {
      state: expected.state,
      nonce: expected.nonce,
      codeVerifier: expected.codeVerifier,
      redirectUri: this.callbackUrl(),
    });
    const holder = await this.tokens
      .verify(completed.accessToken, { scheme: 'bearer', proof: undefined, method: 'GET', url: '', heldByService: true })
      .catch((error: unknown) => {
        throw error instanceof InvalidToken ? new LoginFailed('The provider’s access token is not a staff token this service accepts', error) : error;
      });
    if (holder.kind !== 'staff' || holder.subject !== completed.subject) throw new LoginFailed('The access token is not the signed-in staff member’s');
    const member = staffMemberOf(holder.claims, this.policy);
    const used = rolesUsed(member, STAFF_ROLES, this.policy.mfaRoles);
    if (used.needsSecondFactor) throw new MfaRequired(member.roles, [...this.policy.mfaAcrValues]);
    if (used.roles.length === 0) throw new StaffNotAllowed(STAFF_ROLES);
    const signedIn: SignedIn = { staffId: member.id, name: member.name, roles: used.roles, until: this.now() + SIGNED_IN_SECONDS * 1000 };
    return reply
      .header('set-cookie', [loginCookie(await this.box.seal(signedIn, SIGNED_IN), SIGNED_IN_SECONDS, STAFF_COOKIE), clearedCookie(STAFF_LOGIN_COOKIE)])
      .header('cache-control', 'no-store')
      .redirect(expected.returnTo, 303);
  }

  private callbackUrl(): string {
    return `${this.publicOrigin()}${STAFF_LOGIN_PATHS.callback}`;
  }

  /** A refusal is the envelope, with an error id, as everywhere (no stack, no token, no claim). */
  private async answer(reply: FastifyReply, work: () => Promise<FastifyReply>): Promise<FastifyReply> {
    try {
      return await work();
    } catch (error) {
      const problem = problemOf(error);
      if (problem.challenge) void reply.header('www-authenticate', problem.challenge);
      return reply
        .status(problem.status)
        .header('cache-control', 'no-store')
        .send(errorEnvelope(problem, randomUUID(), { docUrl: this.docs.urlOf(problem.code, this.publicOrigin()) }));
    }
  }
}
