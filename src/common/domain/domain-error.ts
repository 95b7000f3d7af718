import { ERROR_CODES, ErrorCode, ErrorKind } from './error-codes';
import { CataloguedCode, ERROR_MESSAGES, isCatalogued, UncataloguedCode } from './error-messages';

export interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

export interface DomainErrorOptions {
  /** Longer explanation for the partner's developer; never secrets or personal data. */
  readonly details?: string;
  readonly fields?: readonly FieldProblem[];
  readonly retryAfterSeconds?: number;
  /** The `WWW-Authenticate` challenge a 401 or 403 answers with (RFC 6750, RFC 9449). */
  readonly challenge?: string;
  /**
   * The error id the partner is answered with, when it was given before the answer (an audit event
   * held with it names it): otherwise the error filter makes one.
   */
  readonly errorId?: string;
  readonly cause?: unknown;
}

export class DomainError extends Error {
  /** What kind of failure this is, as the code's entry in ERROR_CODES says. */
  readonly kind: ErrorKind;
  readonly details?: string;
  readonly fields?: readonly FieldProblem[];
  readonly retryAfterSeconds?: number;
  /** The WWW-Authenticate challenge to answer with. */
  readonly challenge?: string;
  /** The error id to answer with, when one was given already. */
  readonly errorId?: string;

  /** Stable, machine-readable: `AUTH.INVALID_TOKEN`, `UPSTREAM.TIMEOUT` (see ERROR_CODES). */
  readonly code: ErrorCode;

  /** A catalogued code says the catalogue's message (ERROR_MESSAGES); any other code says its own. */
  constructor(code: CataloguedCode, options?: DomainErrorOptions);
  constructor(code: UncataloguedCode, message: string, options?: DomainErrorOptions);
  constructor(code: ErrorCode, messageOrOptions?: string | DomainErrorOptions, maybeOptions?: DomainErrorOptions) {
    const message = typeof messageOrOptions === 'string' ? messageOrOptions : isCatalogued(code) ? ERROR_MESSAGES[code] : code;
    const options = (typeof messageOrOptions === 'string' ? maybeOptions : messageOrOptions) ?? {};
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
    this.kind = ERROR_CODES[code];
    this.details = options.details;
    this.fields = options.fields;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.challenge = options.challenge;
    this.errorId = options.errorId;
  }
}
