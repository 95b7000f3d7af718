import type { FastifyRequest } from 'fastify';
import { CsrfRejected } from '../domain/auth.errors';
import { checkAntiForgery, cookieOf } from './browser-session-http';

const ORIGIN = 'https://api.partner.example';
const request = (headers: Record<string, string | string[] | undefined>) => ({ headers }) as unknown as FastifyRequest;

describe(checkAntiForgery.name, () => {
  it.each([
    ['no X-CSRF header', { origin: undefined }],
    ['X-CSRF other than 1', { 'x-csrf': 'true' }],
    ['X-CSRF sent twice', { 'x-csrf': ['1', '1'] }],
    ['an origin not allowed', { 'x-csrf': '1', origin: 'https://evil.example' }],
    ['the null origin', { 'x-csrf': '1', origin: 'null' }],
    ['two origins', { 'x-csrf': '1', origin: [ORIGIN, ORIGIN] }],
  ])('when a request with the cookie has %s, then it is refused as a forgery', (_what, headers) => {
    expect(() => checkAntiForgery(request(headers), [ORIGIN, 'https://app.partner.example'])).toThrow(CsrfRejected);
  });

  it.each([
    ['no Origin', { 'x-csrf': '1' }],
    ['an allowed origin', { 'x-csrf': '1', origin: 'https://app.partner.example' }],
  ])('when a request with the cookie has X-CSRF: 1 and %s, then it passes', (_what, headers) => {
    expect(() => checkAntiForgery(request(headers), [ORIGIN, 'https://app.partner.example'])).not.toThrow();
  });
});

describe(cookieOf.name, () => {
  it.each([
    [undefined, undefined],
    ['a=1', undefined],
    ['__Host-gw_session=abc', 'abc'],
    ['a=1; __Host-gw_session=abc; b=2', 'abc'],
    ['__Host-gw_session=abc; __Host-gw_session=def', ['abc', 'def']],
    ['x__Host-gw_session=abc', undefined],
  ])('when the Cookie header is %j, then the session cookie is %j', (header, value) => {
    expect(cookieOf(header, '__Host-gw_session')).toEqual(value);
  });
});
