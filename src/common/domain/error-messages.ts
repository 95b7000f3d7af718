import type { ErrorCode } from './error-codes';

/**
 * What an error says (`error.message`), for every code whose sentence is the same for every
 * request: one place for the words, which the errors say and the OpenAPI document's examples show
 * (so the two cannot drift). What depends on the request goes in `details`. The codes not here say
 * something that depends on what was refused (a target, a JSON body, a client's name, which
 * part of the provider's answer was bad), and their errors build it.
 */
export const ERROR_MESSAGES = {
  'REQUEST.VALIDATION_FAILED': 'The request has invalid fields',
  'REQUEST.BAD_CONTENT_LENGTH': 'The Content-Length header does not match the body',
  'REQUEST.MALFORMED': 'The request is not valid HTTP/1.1',
  'REQUEST.TIMEOUT': 'The request did not arrive whole in time',
  'REQUEST.EXPECTATION_FAILED': 'The Expect header cannot be met',
  'REQUEST.HEADERS_TOO_LARGE': 'The request headers are larger than the service accepts',
  'REQUEST.CLIENT_CLOSED': 'The client closed the connection before the request arrived whole',
  'REQUEST.BODY_TOO_LARGE': 'The request body is larger than the service accepts',
  'REQUEST.UNSUPPORTED_MEDIA_TYPE': 'The content type is not supported; send application/json',
  'REQUEST.UNSUPPORTED_ENCODING': 'The content encoding is not supported; send the body uncompressed',
  'ROUTE.NOT_FOUND': 'No such route',
  'RATE_LIMIT.EXCEEDED': 'Too many requests; retry after the number of seconds in Retry-After',
  'AUTH.TOKEN_MISSING': 'The request carries no token this service can read',
  'AUTH.INVALID_TOKEN': 'The supplied token is invalid or expired',
  'AUTH.DPOP_REQUIRED': 'The token must be sent bound to its key, with a DPoP proof',
  'AUTH.FORBIDDEN': 'This client is not allowed to call this endpoint',
  'AUTH.INSUFFICIENT_SCOPE': 'The access token does not grant the scope this endpoint needs',
  'AUTH.MFA_REQUIRED': 'This operation needs a sign-in with a second factor',
  'AUTH.INVALID_DPOP_PROOF': 'The DPoP proof is missing or invalid',
  'AUTH.ISSUER_UNAVAILABLE': 'The identity provider could not be reached; try again shortly',
  'SESSION.NOT_CONFIGURED': 'Browser sessions are not configured on this service',
  'SESSION.ENDED': 'The session has ended or expired: log in again',
  'SESSION.CSRF_REJECTED': 'A request with the session cookie must come from an allowed origin and carry the X-CSRF header',
  'SESSION.RETURN_TO_REFUSED': 'return_to must be a path on this service or an allowed origin',
  'SESSION.LOGIN_FAILED': 'The login could not be completed: start it again',
  'SESSION.INVALID_LOGOUT_TOKEN': 'The logout token is invalid',
  'CUSTOMER.ALREADY_BOUND': 'The customer already belongs to another end user',
  'CUSTOMER.NOT_FOUND': 'There is no customer with this id',
  'BANK_ACCOUNT.NOT_FOUND': 'There is no bank account with this id',
  'EVENT.NOT_FOUND': 'There is no event with this id',
  'WEBHOOK_ENDPOINT.NOT_FOUND': 'There is no webhook endpoint with this id',
  'WEBHOOK_ENDPOINT.DELIVERY_NOT_FOUND': 'This endpoint was never sent this event',
  'BALANCE.NOT_FOUND': 'The provider has no balance in this currency for this customer',
  'IDEMPOTENCY.IN_FLIGHT': 'A request with this reference is still being processed',
  'IDEMPOTENCY.REFERENCE_REUSED': 'This reference was already used with a different request',
  'IDEMPOTENCY.REFERENCE_TAKEN': 'This reference was already used by another API client',
  'IDEMPOTENCY.OUTCOME_UNKNOWN': 'An earlier request with this reference reached the provider, and its outcome is not known',
  'IDEMPOTENCY.OUTCOME_PENDING': 'The outcome of a request with this reference is not recorded yet',
  'UPSTREAM.CREDENTIALS_REFUSED': 'The provider refused the request',
  'UPSTREAM.NOT_FOUND': 'The provider has no such resource',
  'UPSTREAM.RATE_LIMITED': 'The provider is limiting requests; try again later',
  'UPSTREAM.REJECTED': 'The provider refused the request',
  'UPSTREAM.SERVER_ERROR': 'The provider failed to handle the request',
  'UPSTREAM.TIMEOUT': 'The provider did not answer in time',
  'UPSTREAM.UNREACHABLE': 'The provider could not be reached',
  'UPSTREAM.CONNECTION_LOST': 'The connection to the provider was lost',
  'UPSTREAM.CIRCUIT_OPEN': 'The provider is unavailable; try again later',
  'AUDIT.EVENT_NOT_FOUND': 'There is no audit event with this id',
  'AUDIT.INVALID_CURSOR': 'The cursor is not one this service issued',
  'REQUEST_LOG.NOT_FOUND': 'No request of yours has this id',
  'RECEIPT.NOT_FOUND': 'No audit event of yours has this id',
  'RECEIPT.PROOF_UNAVAILABLE': 'No inclusion proof can be given for this event',
  'CHECKPOINT.NOT_FOUND': 'No checkpoint has this number',
  'CHECKPOINT.PROOF_UNAVAILABLE': 'No consistency proof can be given between these checkpoints',
  'AUDIT.UNAVAILABLE': 'The service cannot record requests right now; try again shortly',
  'DATABASE.UNAVAILABLE': 'The service’s database is unavailable; try again shortly',
  'SERVICE.SHUTTING_DOWN': 'This instance is shutting down; retry the request',
  'SERVICE.NOT_READY': 'The service is not ready',
} as const satisfies Partial<Record<ErrorCode, string>>;

/** A code whose message is the catalogue's. */
export type CataloguedCode = keyof typeof ERROR_MESSAGES;

/** A code whose error says its own message (see above). */
export type UncataloguedCode = Exclude<ErrorCode, CataloguedCode>;

export function isCatalogued(code: ErrorCode): code is CataloguedCode {
  return code in ERROR_MESSAGES;
}
