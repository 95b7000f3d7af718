import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyRequest } from 'fastify';
import { CsrfRejected } from '../domain/auth.errors';

/** The cookies: `__Host-` (RFC 6265bis section 4.1.3.2): Secure, Path=/, no Domain, so no other host can set or read them. */
export const SESSION_COOKIE = '__Host-gw_session';
export const LOGIN_COOKIE = '__Host-gw_login';
/** The anti-forgery header a request with the session cookie must carry (a cross-site form cannot send it; a cross-site fetch needs CORS's consent). */
export const CSRF_HEADER = 'x-csrf';

/**
 * A cookie's value from the Cookie header: undefined when absent, an array when sent more than
 * once (which cookie the browser meant cannot be told, so such a request has no session).
 */
export function cookieOf(header: string | undefined, name: string): string | string[] | undefined {
  if (!header || !header.includes(name)) return undefined;
  const values: string[] = [];
  for (const part of header.split(';')) {
    const { [name]: value } = parseCookie(part.trim());
    if (value !== undefined) values.push(value);
  }
  return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
}

/** The session cookie's value, when the request carries it once (sent twice, it names no session). */
export function sessionCookieOf(request: FastifyRequest): string | string[] | undefined {
  return cookieOf(request.headers.cookie, SESSION_COOKIE);
}

/**
 * The anti-forgery rules of a request that carries the session cookie: the header `X-CSRF: 1`
 * (which a cross-site form cannot send, and a cross-site fetch only with CORS's consent), and, when
 * the browser names one, an allowed origin.
 * @throws CsrfRejected.
 */
export function checkAntiForgery(request: FastifyRequest, allowedOrigins: readonly string[]): void {
  if (request.headers[CSRF_HEADER] !== '1') throw new CsrfRejected(`Send the header X-CSRF: 1 with requests that carry the session cookie`);
  const origin = request.headers.origin;
  if (origin !== undefined && (typeof origin !== 'string' || !allowedOrigins.includes(origin))) {
    throw new CsrfRejected('The request comes from an origin that is not allowed');
  }
}

/**
 * The session cookie (RFC 6265bis): `__Host-` (Secure, Path=/, no Domain: this host only),
 * HttpOnly (no script reads it), SameSite=Strict (no request started by another site carries it),
 * and no Max-Age (it ends with the browser; the service's timeouts end it sooner).
 */
export function sessionCookie(id: string): string {
  return stringifySetCookie({ name: SESSION_COOKIE, value: id, path: '/', httpOnly: true, secure: true, sameSite: 'strict' });
}

/**
 * A login cookie (`name`: a web app's, LOGIN_COOKIE, unless said), which binds the provider's
 * callback to the browser that started the login, or another `__Host-` cookie a navigation from the
 * provider must carry (staff's sign-in to /docs). SameSite=Lax: the callback is a top-level
 * navigation from the provider's site.
 */
export function loginCookie(value: string, maxAgeSeconds: number, name: `__Host-${string}` = LOGIN_COOKIE): string {
  return stringifySetCookie({ name, value, path: '/', httpOnly: true, secure: true, sameSite: 'lax', maxAge: maxAgeSeconds });
}

/** Removes a cookie from the browser. */
export function clearedCookie(name: `__Host-${string}`): string {
  return stringifySetCookie({ name, value: '', path: '/', httpOnly: true, secure: true, sameSite: name === SESSION_COOKIE ? 'strict' : 'lax', maxAge: 0 });
}

/** A cookie's value when the request carries it once; sent twice, which one the browser meant cannot be told: none. */
export function onlyCookieOf(request: FastifyRequest, name: string): string | undefined {
  const value = cookieOf(request.headers.cookie, name);
  return typeof value === 'string' ? value : undefined;
}
