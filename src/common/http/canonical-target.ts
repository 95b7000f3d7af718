import type { UncataloguedCode } from '../domain/error-messages';

/**
 * The one reading of a request line's target that every decision at the edge is made on: the
 * router routes it, the audit, the admin guard, draining and the logs read it. A target is
 * reduced to a decoded path and the query as sent; spellings that could mean two things are
 * refused (400), after being read the way they would most likely be meant so that the refusal
 * still lands on the right route's audit trail.
 */
export interface EdgeRefusal {
  readonly status: 400 | 414;
  readonly code: UncataloguedCode;
  readonly message: string;
}

export interface CanonicalTarget {
  /** The decoded path: starts with `/`, no query, no dot segments, no empty segments but a trailing one. */
  readonly path: string;
  /** The query string as sent, without `?`; '' when none. */
  readonly query: string;
  /** What the router is given: the path, percent-encoded once, and the query. */
  readonly url: string;
  /** Set when the target is refused; `path` is then the closest reading of it. */
  readonly refusal?: EdgeRefusal;
}

/** Longer paths are refused with 414 (after routing, so that the refusal is audited where it belongs). */
export const MAX_PATH_LENGTH = 1024;

/** A path of plain RFC 3986 path characters only: nothing to decode, the common case. */
const PLAIN_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/;
/** Raw characters a path may carry (RFC 3986 pchar, `/` and `%` escapes). */
const PATH_CHARACTERS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$/;
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;
/** After decoding: no control characters, no separators a second parser could split on. */
const FORBIDDEN_DECODED = /[\p{Cc}/\\]/u;
const utf8 = new TextDecoder('utf-8', { fatal: true });

const refusal = (status: EdgeRefusal['status'], code: UncataloguedCode, message: string): EdgeRefusal => ({ status, code, message });

const BAD_PATH = refusal(400, 'REQUEST.BAD_PATH', 'The request path is not a valid, percent-encoded path');
const NON_CANONICAL = refusal(400, 'REQUEST.NON_CANONICAL_PATH', 'The request path has empty or dot segments; send the path as the API documents it');
const TOO_LONG = refusal(414, 'REQUEST.URI_TOO_LONG', `The request path is longer than ${MAX_PATH_LENGTH} characters`);

/** Decodes one segment strictly, or undefined when its escapes or its UTF-8 are broken. */
function decodeSegment(segment: string): string | undefined {
  if (!segment.includes('%')) return segment;
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    const char = segment.charCodeAt(i);
    if (char !== 37 /* % */) {
      bytes.push(char);
      continue;
    }
    const hex = segment.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
    bytes.push(parseInt(hex, 16));
    i += 2;
  }
  try {
    return utf8.decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}

/** A segment as the router will decode it back: escapes only where RFC 3986 needs them. */
function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/%(?:21|24|26|27|28|29|2A|2B|2C|3A|3B|3D|40)/g, decodeURIComponent);
}

/** Reads a request target (the request line's target, as Node received it). */
export function canonicalTarget(raw: string): CanonicalTarget {
  let target = raw;
  if (!target.startsWith('/')) {
    // The absolute form (`GET http://host/path`): the path is what the router would serve.
    const origin = ABSOLUTE_FORM.exec(target);
    if (!origin) return { path: '/', query: '', url: '/', refusal: BAD_PATH };
    target = target.slice(origin[0].length);
    if (!target.startsWith('/')) target = `/${target}`;
  }
  const mark = target.indexOf('?');
  const rawPath = mark === -1 ? target : target.slice(0, mark);
  const query = mark === -1 ? '' : target.slice(mark + 1);
  const tail = mark === -1 ? '' : `?${query}`;

  const tooLong = rawPath.length > MAX_PATH_LENGTH;
  if (!tooLong && PLAIN_PATH.test(rawPath) && !/\/\/|\/\.\.?(?:\/|$)/.test(rawPath)) {
    return { path: rawPath, query, url: target === raw ? raw : `${rawPath}${tail}` };
  }

  let problem: EdgeRefusal | undefined = PATH_CHARACTERS.test(rawPath) ? undefined : BAD_PATH;
  const segments: string[] = [];
  const parts = rawPath.split('/').slice(1);
  parts.forEach((part, index) => {
    const decoded = decodeSegment(part);
    if (decoded === undefined || FORBIDDEN_DECODED.test(decoded)) {
      problem ??= BAD_PATH;
      segments.push(part.replace(/[^A-Za-z0-9\-._~]/g, '_'));
      return;
    }
    if (decoded === '.' || decoded === '..') {
      problem ??= NON_CANONICAL;
      if (decoded === '..') segments.pop();
      return;
    }
    if (decoded === '' && index < parts.length - 1) {
      problem ??= NON_CANONICAL;
      return;
    }
    segments.push(decoded);
  });
  const path = `/${segments.join('/')}`;
  return { path, query, url: `/${segments.map(encodeSegment).join('/')}${tail}`, refusal: tooLong ? TOO_LONG : problem };
}

/** Whether a path is `prefix` itself or below it (`/api/v1`, `/api/v1/...`), in any letter case. */
export function isUnder(prefix: string, path: string): boolean {
  const lower = path.toLowerCase();
  return lower === prefix || lower.startsWith(`${prefix}/`);
}
