import type { FastifyRequest } from 'fastify';
import { requestOrigin } from '../../common/http/request-origin';
import { targetOf } from '../../common/http/request-context';
import type { PresentedCredentials } from '../domain/authenticator';
import { SessionEnded } from '../domain/auth.errors';
import { checkAntiForgery, sessionCookieOf } from './browser-session-http';

/** `Bearer <token>` or `DPoP <token>`, scheme case-insensitive (RFC 9110 section 11.1). */
const AUTHORIZATION = /^(Bearer|DPoP)[ ]+([^\s]+)[ ]*$/i;
const BASIC = /^Basic[ ]+([A-Za-z0-9+/=]+)[ ]*$/i;

/** The token an Authorization header presents, and under which scheme; undefined for none (another scheme, a header sent twice). */
export function presentedToken(header: string | string[] | undefined): { scheme: 'bearer' | 'dpop'; token: string } | undefined {
  const match = typeof header === 'string' ? AUTHORIZATION.exec(header) : null;
  if (!match) return undefined;
  return { scheme: match[1].toLowerCase() === 'dpop' ? 'dpop' : 'bearer', token: match[2] };
}

/** The password of `Basic` (any user name, the client token as password: what a browser prompts for on /docs). */
function basicPassword(header: string): string | undefined {
  const basic = BASIC.exec(header);
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 && colon < decoded.length - 1 ? decoded.slice(colon + 1) : undefined;
}

/**
 * Every `DPoP` header of the request, as sent: Node joins repeated unknown headers with `, `, which
 * would hide a second proof (RFC 9449 section 4.3 wants exactly one), so they are read raw.
 */
function dpopHeaders(request: FastifyRequest): string | string[] | undefined {
  if (request.headers.dpop === undefined) return undefined;
  const raw = request.raw.rawHeaders;
  const values: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === 'dpop') values.push(raw[i + 1]);
  return values.length === 1 ? values[0] : values;
}

/** The canonical path as the router was given it: percent-encoded once, no query. */
function encodedPathOf(request: FastifyRequest): string {
  const { url } = targetOf(request.raw);
  const mark = url.indexOf('?');
  return mark === -1 ? url : url.slice(0, mark);
}

/** What the identify stage needs to read a request's credentials. */
export interface CredentialRules {
  /**
   * The origin a DPoP proof's `htu` must name: PUBLIC_BASE_URL when set, never a header the caller
   * controls; without it (a developer's machine), the origin the request was sent to.
   */
  readonly publicOrigin?: string;
  /** Browser sessions are on, and requests carrying the cookie may come from these origins. */
  readonly sessions?: { readonly allowedOrigins: () => readonly string[] };
}

/**
 * What the request presents to say who it is: the Authorization header decides; without one, the
 * session cookie does (when browser sessions are on), once its anti-forgery rules are met.
 * Undefined when it presents nothing.
 * @throws CsrfRejected (the cookie without its anti-forgery rules), SessionEnded (the cookie sent twice).
 */
export function credentialsOf(request: FastifyRequest, rules: CredentialRules): PresentedCredentials | undefined {
  const authorization = request.headers.authorization;
  if (authorization === undefined) {
    if (!rules.sessions) return undefined;
    const cookie = sessionCookieOf(request);
    if (cookie === undefined) return undefined;
    checkAntiForgery(request, rules.sessions.allowedOrigins());
    if (typeof cookie !== 'string') throw new SessionEnded('The session cookie was sent more than once');
    return { kind: 'session', cookie };
  }
  const presented = presentedToken(authorization);
  if (presented) {
    const dpop = dpopHeaders(request);
    return {
      kind: 'token',
      ...presented,
      dpop,
      method: request.method,
      // Only a DPoP proof looks at it: built when one may be checked, on the canonical path the router used.
      // The origin is PUBLIC_BASE_URL, or the request's own from its validated parts (never a forwarded header as sent);
      // the path as the router was given it, encoded once, without its query: a decoded `?`, `#` or `%` would be read again.
      url: dpop === undefined ? '' : `${rules.publicOrigin ?? requestOrigin(request) ?? ''}${encodedPathOf(request)}`,
    };
  }
  const password = basicPassword(authorization);
  if (password !== undefined) return { kind: 'password', token: password };
  return { kind: 'malformed', details: 'The Authorization header must be `Bearer <token>` or `DPoP <token>`' };
}
