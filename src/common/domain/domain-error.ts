/**
 * What went wrong, in words the transport can map to a status. Domain code and adapters throw
 * these; the one exception filter turns them into the envelope. Nothing HTTP-specific lives here.
 */
export type ErrorKind =
  | 'invalid_input'
  | 'request_timeout'
  | 'uri_too_long'
  | 'headers_too_large'
  | 'client_closed'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'unprocessable'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'upstream_rejected'
  | 'upstream_timeout'
  | 'unavailable';

export interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

export interface DomainErrorOptions {
  /** Longer explanation for the partner's developer; never secrets or personal data. */
  readonly details?: string;
  readonly fields?: readonly FieldProblem[];
  readonly retryAfterSeconds?: number;
  readonly cause?: unknown;
}

export class DomainError extends Error {
  readonly details?: string;
  readonly fields?: readonly FieldProblem[];
  readonly retryAfterSeconds?: number;

  constructor(
    /** Stable, machine-readable: `AUTH.INVALID_TOKEN`, `UPSTREAM.TIMEOUT`. */
    readonly code: string,
    readonly kind: ErrorKind,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.details = options.details;
    this.fields = options.fields;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}
