import { DomainError } from '../domain/domain-error';
import type { EdgeRefusal } from './canonical-target';

/** A request target the edge will not read (bad escapes, dot segments, too long). */
export class RequestTargetRefused extends DomainError {
  constructor(refusal: EdgeRefusal) {
    super(refusal.code, refusal.message);
  }
}

export class RequestTimedOut extends DomainError {
  constructor(timeoutMs: number) {
    super('REQUEST.TIMEOUT', {
      details: `Headers and body must arrive within ${timeoutMs} ms; the connection is closed`,
    });
  }
}

export class RequestHeadersTooLarge extends DomainError {
  constructor() {
    super('REQUEST.HEADERS_TOO_LARGE');
  }
}

export class MalformedRequest extends DomainError {
  constructor(details = 'The request line or a header could not be read (for example two Content-Length headers, or a control character in a header)') {
    super('REQUEST.MALFORMED', { details });
  }

  /** RFC 9112 §3.2: an HTTP/1.1 request has exactly one Host header, with a valid value. */
  static badHost(problem: 'missing' | 'repeated' | 'invalid'): MalformedRequest {
    const said = { missing: 'has no Host header', repeated: 'has more than one Host header', invalid: 'has a Host header that is not a host name or address' }[
      problem
    ];
    return new MalformedRequest(`The request ${said}; HTTP/1.1 requires exactly one valid Host (RFC 9112, section 3.2)`);
  }

  /**
   * What a trusted proxy forwarded (the request's origin as the caller sent it) is not an origin's
   * part: a DPoP proof's URL and a login's return are built from it, so it must be exactly one.
   */
  static badForwarded(header: 'X-Forwarded-Host' | 'X-Forwarded-Proto'): MalformedRequest {
    const expected = header === 'X-Forwarded-Host' ? 'a host name or address with an optional port' : 'http or https';
    return new MalformedRequest(`The request's ${header} header is not ${expected}; the proxy in front must forward what it received`);
  }

  /**
   * A header that may appear once, sent twice: two parsers could each read another one (a proxy the
   * second Authorization, this service the first), so neither is read.
   */
  static repeatedHeader(name: string): MalformedRequest {
    return new MalformedRequest(`The request has more than one ${name} header; send it once`);
  }
}

/** An Expect header this service cannot meet: only `100-continue` is understood (RFC 9110 §10.1.1). */
export class ExpectationFailed extends DomainError {
  constructor() {
    super('REQUEST.EXPECTATION_FAILED', {
      details: 'Only Expect: 100-continue is understood; send the request without the header',
    });
  }
}

/** A method no route answers to, refused before a route is looked for (CONNECT: this is no proxy). */
export class MethodNotRouted extends DomainError {
  constructor() {
    super('ROUTE.NOT_FOUND', { details: 'No endpoint matches this method and path' });
  }
}

/** The caller hung up before its request arrived whole: nothing was done for it. */
export class ClientClosedRequest extends DomainError {
  constructor() {
    super('REQUEST.CLIENT_CLOSED');
  }
}

const MALFORMED_JSON = {
  empty: ['The request body is empty but the content type is JSON', undefined],
  syntax: ['The request body is not valid JSON', undefined],
  // Bytes that are not UTF-8 are not JSON text: refused, never read as U+FFFD.
  encoding: ['The request body is not valid JSON', 'The body is not valid UTF-8; JSON must be sent as UTF-8 (RFC 8259, section 8.1)'],
  // Parsers disagree on which of two equal names wins (RFC 8259, section 4): a proxy could check one and this service act on the other.
  duplicate: ['The request body is not valid JSON', 'An object in the body has the same name twice; send each field once (RFC 8259, section 4)'],
} as const;

export class MalformedJson extends DomainError {
  constructor(reason: keyof typeof MALFORMED_JSON) {
    const [message, details] = MALFORMED_JSON[reason];
    super('REQUEST.MALFORMED_JSON', message, { details });
  }
}

export class JsonTooDeep extends DomainError {
  constructor(maxDepth: number) {
    super('REQUEST.JSON_TOO_DEEP', `The JSON body is nested deeper than ${maxDepth} levels`, {
      details: `Objects and arrays may be nested at most ${maxDepth} deep`,
    });
  }
}

/** Bodies are read as sent: a compressed one would be parsed as something the caller did not mean. */
export class UnsupportedContentEncoding extends DomainError {
  constructor() {
    super('REQUEST.UNSUPPORTED_ENCODING');
  }
}
