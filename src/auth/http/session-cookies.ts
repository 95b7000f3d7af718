import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyRequest } from 'fastify';
import { CSRF_HEADER, LOGIN_COOKIE, SESSION_COOKIE, SessionPresentation } from '../domain/browser-sessions.service';

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

/** What a request presents with the session cookie, when it has one. */
export function sessionPresentedBy(request: FastifyRequest): SessionPresentation | undefined {
  const cookie = cookieOf(request.headers.cookie, SESSION_COOKIE);
  if (cookie === undefined) return undefined;
  return {
    cookie,
    csrf: request.headers[CSRF_HEADER],
    origin: request.headers.origin,
    method: request.method,
  };
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
 * The login cookie, which binds the provider's callback to the browser that started the login.
 * SameSite=Lax: the callback is a top-level navigation from the provider's site.
 */
export function loginCookie(value: string, maxAgeSeconds: number): string {
  return stringifySetCookie({ name: LOGIN_COOKIE, value, path: '/', httpOnly: true, secure: true, sameSite: 'lax', maxAge: maxAgeSeconds });
}

/** Removes a cookie from the browser. */
export function clearedCookie(name: typeof SESSION_COOKIE | typeof LOGIN_COOKIE): string {
  return stringifySetCookie({ name, value: '', path: '/', httpOnly: true, secure: true, sameSite: name === SESSION_COOKIE ? 'strict' : 'lax', maxAge: 0 });
}
