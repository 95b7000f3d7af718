import { ERROR_CODES, ErrorCode, ErrorKind } from './error-codes';

export type { ErrorKind } from './error-codes';

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
  /** What kind of failure this is, as the code's entry in ERROR_CODES says. */
  readonly kind: ErrorKind;
  readonly details?: string;
  readonly fields?: readonly FieldProblem[];
  readonly retryAfterSeconds?: number;

  constructor(
    /** Stable, machine-readable: `AUTH.INVALID_TOKEN`, `UPSTREAM.TIMEOUT` (see ERROR_CODES). */
    readonly code: ErrorCode,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.kind = ERROR_CODES[code];
    this.details = options.details;
    this.fields = options.fields;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}
