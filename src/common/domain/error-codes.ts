/**
 * What went wrong, in words the transport can map to a status. Domain code and adapters throw
 * these; the one exception filter turns them into the envelope. Nothing HTTP-specific lives here.
 */
export type ErrorKind =
  | 'invalid_input'
  | 'request_timeout'
  | 'expectation_failed'
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
  | 'unavailable'
  | 'internal';

/**
 * Every error code the service gives, with the kind of failure it is (the transport maps a kind to
 * a status). A partner app branches on `error.code`; docs/errors.md says what each one means and
 * what to do, and a test holds that page to this list. Codes are stable: a new failure gets a new
 * code, and a code is never given another meaning.
 */
export const ERROR_CODES = {
  // The request as sent
  'REQUEST.VALIDATION_FAILED': 'invalid_input',
  'REQUEST.MALFORMED_JSON': 'invalid_input',
  'REQUEST.JSON_TOO_DEEP': 'invalid_input',
  'REQUEST.BAD_CONTENT_LENGTH': 'invalid_input',
  'REQUEST.BAD_PATH': 'invalid_input',
  'REQUEST.NON_CANONICAL_PATH': 'invalid_input',
  'REQUEST.MALFORMED': 'invalid_input',
  'REQUEST.REFUSED': 'invalid_input',
  'REQUEST.TIMEOUT': 'request_timeout',
  'REQUEST.EXPECTATION_FAILED': 'expectation_failed',
  'REQUEST.URI_TOO_LONG': 'uri_too_long',
  'REQUEST.HEADERS_TOO_LARGE': 'headers_too_large',
  'REQUEST.CLIENT_CLOSED': 'client_closed',
  'REQUEST.BODY_TOO_LARGE': 'payload_too_large',
  'REQUEST.UNSUPPORTED_MEDIA_TYPE': 'unsupported_media_type',
  'REQUEST.UNSUPPORTED_ENCODING': 'unsupported_media_type',
  'ROUTE.NOT_FOUND': 'not_found',
  'RATE_LIMIT.EXCEEDED': 'rate_limited',
  // Who is calling
  'AUTH.TOKEN_MISSING': 'unauthenticated',
  'AUTH.INVALID_TOKEN': 'unauthenticated',
  'AUTH.DPOP_REQUIRED': 'unauthenticated',
  'AUTH.FORBIDDEN': 'forbidden',
  'AUTH.INSUFFICIENT_SCOPE': 'forbidden',
  'AUTH.MFA_REQUIRED': 'unauthenticated',
  'AUTH.INVALID_DPOP_PROOF': 'unauthenticated',
  'AUTH.ISSUER_UNAVAILABLE': 'unavailable',
  'AUTH.CLIENT_NAME_TAKEN': 'conflict',
  'AUTH.INVALID_CLIENT': 'invalid_input',
  // A web app's browser session
  'SESSION.NOT_CONFIGURED': 'not_found',
  'SESSION.ENDED': 'unauthenticated',
  'SESSION.CSRF_REJECTED': 'forbidden',
  'SESSION.RETURN_TO_REFUSED': 'invalid_input',
  'SESSION.LOGIN_FAILED': 'invalid_input',
  'SESSION.INVALID_LOGOUT_TOKEN': 'invalid_input',
  // The partner API
  'CUSTOMER.ALREADY_BOUND': 'conflict',
  'CUSTOMER.NOT_FOUND': 'not_found',
  'BANK_ACCOUNT.NOT_FOUND': 'not_found',
  'EVENT.NOT_FOUND': 'not_found',
  'WEBHOOK_ENDPOINT.NOT_FOUND': 'not_found',
  'WEBHOOK_ENDPOINT.DELIVERY_NOT_FOUND': 'not_found',
  'WEBHOOK_ENDPOINT.URL_REFUSED': 'invalid_input',
  'BALANCE.NOT_FOUND': 'not_found',
  'IDEMPOTENCY.IN_FLIGHT': 'conflict',
  'IDEMPOTENCY.REFERENCE_REUSED': 'unprocessable',
  'IDEMPOTENCY.REFERENCE_TAKEN': 'unprocessable',
  'IDEMPOTENCY.OUTCOME_UNKNOWN': 'conflict',
  'IDEMPOTENCY.OUTCOME_PENDING': 'unavailable',
  // The provider
  'UPSTREAM.BAD_RESPONSE': 'upstream_rejected',
  'UPSTREAM.CREDENTIALS_REFUSED': 'upstream_rejected',
  'UPSTREAM.NOT_FOUND': 'not_found',
  'UPSTREAM.CONFLICT': 'upstream_rejected',
  'UPSTREAM.RATE_LIMITED': 'unavailable',
  'UPSTREAM.REJECTED': 'upstream_rejected',
  'UPSTREAM.SERVER_ERROR': 'upstream_rejected',
  'UPSTREAM.TIMEOUT': 'upstream_timeout',
  'UPSTREAM.UNREACHABLE': 'upstream_rejected',
  'UPSTREAM.CONNECTION_LOST': 'upstream_rejected',
  'UPSTREAM.CIRCUIT_OPEN': 'unavailable',
  // The audit log (admin)
  'AUDIT.EVENT_NOT_FOUND': 'not_found',
  'AUDIT.INVALID_CURSOR': 'invalid_input',
  'AUDIT.INVALID_RANGE': 'invalid_input',
  // A partner's request log
  'REQUEST_LOG.NOT_FOUND': 'not_found',
  'RECEIPT.NOT_FOUND': 'not_found',
  'RECEIPT.PROOF_UNAVAILABLE': 'not_found',
  'CHECKPOINT.NOT_FOUND': 'not_found',
  'CHECKPOINT.PROOF_UNAVAILABLE': 'not_found',
  // The service itself
  'AUDIT.UNAVAILABLE': 'unavailable',
  'DATABASE.UNAVAILABLE': 'unavailable',
  'SERVICE.SHUTTING_DOWN': 'unavailable',
  'SERVICE.NOT_READY': 'unavailable',
  INTERNAL: 'internal',
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ALL_ERROR_CODES = Object.keys(ERROR_CODES) as ErrorCode[];
