import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath, type SchemaObject } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';
import { ErrorCode } from '../domain/error-codes';
import { ERROR_MESSAGES, isCatalogued } from '../domain/error-messages';
import { ErrorEnvelope, ErrorEnvelopeSchema, FieldProblemSchema } from './envelope';
import { statusOfCode } from './error-envelope.filter';
import { ExpectationFailed } from './edge.errors';
import { ResponseMessage } from './answer';
import { ERROR_DOCS_PATH, errorDocAnchor } from './error-docs';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad input: malformed JSON, unknown field, bad format or a broken rule',
  401: 'No credentials, or a token, proof or session that is not accepted (the provider’s envelope, with the code added)',
  403: 'The client token lacks the role this endpoint needs',
  404: 'Not found, or not visible to this client',
  408: 'The request did not arrive whole in time',
  417: 'The Expect header cannot be met (only 100-continue is understood)',
  409: 'The same reference is still being processed, or an earlier request with it has an unknown outcome',
  413: 'The request body is too large',
  414: 'The request path is too long',
  415: 'The content type is not application/json, or the body is compressed',
  422: 'The reference was already used with a different body, or by another client',
  429: 'Rate limited; see Retry-After',
  431: 'The request headers are too large',
  500: 'The service failed; quote the error id to support',
  502: 'The provider refused the request or answered garbage',
  503: 'A dependency is unavailable; see Retry-After',
  504: 'The provider did not answer in time',
};

/**
 * What an example of each code says beyond its message, which is the catalogue's (ERROR_MESSAGES,
 * the words the errors themselves say): `error.details`, and fields for a 400.
 */
const ERROR_EXAMPLES: Partial<Record<ErrorCode, { details: string; fields?: { field: string; message: string }[] }>> = {
  'REQUEST.VALIDATION_FAILED': {
    details: 'currency must be EUR or GBP',
    fields: [{ field: 'currency', message: 'currency must be EUR or GBP' }],
  },
  'AUTH.TOKEN_MISSING': { details: 'Send the token as `Authorization: Bearer <token>`' },
  'AUTH.INVALID_TOKEN': { details: 'The token is invalid or expired' },
  'AUTH.DPOP_REQUIRED': { details: 'The token is bound to a key: send it as `Authorization: DPoP <token>` with a DPoP proof' },
  'AUTH.FORBIDDEN': { details: 'Requires the admin role' },
  'AUTH.INSUFFICIENT_SCOPE': { details: 'Requires the balances:read scope' },
  'AUTH.MFA_REQUIRED': { details: 'The support role needs a second factor: sign in again with it' },
  'AUTH.INVALID_DPOP_PROOF': { details: 'The DPoP proof was already used' },
  'IDEMPOTENCY.IN_FLIGHT': { details: 'Retry after the Retry-After delay with the same body to get its result.' },
  'IDEMPOTENCY.REFERENCE_REUSED': {
    details: 'A reference identifies one transaction: send a new reference for a different request.',
    fields: [{ field: 'reference', message: 'reference was already used with a different body' }],
  },
  'RATE_LIMIT.EXCEEDED': { details: 'At most 600 requests per minute per caller' },
  'UPSTREAM.REJECTED': { details: 'The provider answered 400. Quote the error id to support.' },
  'AUDIT.UNAVAILABLE': { details: 'Every request is recorded before it is acted on, and the record could not be written.' },
  'IDEMPOTENCY.OUTCOME_PENDING': {
    details: 'The operation may have completed: retry with the same reference and body, and the retry returns its result once it is recorded.',
  },
  'UPSTREAM.TIMEOUT': { details: 'The request may or may not have been processed; retry with the same reference to find out.' },
  'SERVICE.NOT_READY': { details: 'A readiness check failed; an admin reads which at GET /health/details' },
  'REQUEST.EXPECTATION_FAILED': { details: new ExpectationFailed().details! },
};

const EXAMPLE_ERROR_ID = '0b5a3f5e-3f0c-4c55-9a2c-7f1d2b9a7c11';

/** The error envelope as a response with this code would carry it. */
export function errorExample(code: ErrorCode): ErrorEnvelope {
  const status = statusOfCode(code);
  const text = STATUS_CODES[status] ?? 'Error';
  const message = isCatalogued(code) ? ERROR_MESSAGES[code] : text;
  const example = ERROR_EXAMPLES[code] ?? { details: message };
  return {
    status,
    data: null,
    message: text,
    error: {
      id: EXAMPLE_ERROR_ID,
      code,
      details: example.details,
      message,
      ...(example.fields ? { fields: example.fields } : {}),
      doc_url: `https://gateway.partner.example${ERROR_DOCS_PATH}#${errorDocAnchor(code)}`,
    },
  };
}

/**
 * The codes an endpoint can answer with, in groups: every request under /api/v1 can meet the edge,
 * the limits and the audit log; a caller with a token can be refused; a body can be bad; a call to
 * the provider can fail; a write is idempotent.
 */
export const ERRORS = {
  edge: [
    // A Gateway-Version the gateway does not know, on any operation (docs/api-contract.md, "Versions").
    'REQUEST.VALIDATION_FAILED',
    'REQUEST.BAD_PATH',
    'REQUEST.NON_CANONICAL_PATH',
    'REQUEST.MALFORMED',
    'REQUEST.REFUSED',
    'REQUEST.TIMEOUT',
    'REQUEST.EXPECTATION_FAILED',
    'REQUEST.URI_TOO_LONG',
    'REQUEST.HEADERS_TOO_LARGE',
    'REQUEST.UNSUPPORTED_ENCODING',
    'RATE_LIMIT.EXCEEDED',
    'AUDIT.UNAVAILABLE',
    'DATABASE.UNAVAILABLE',
    'SERVICE.SHUTTING_DOWN',
    'INTERNAL',
  ],
  authenticated: ['AUTH.TOKEN_MISSING', 'AUTH.INVALID_TOKEN', 'AUTH.FORBIDDEN'],
  /** What a public probe or key set can still be refused for: headers that are not HTTP, or a Gateway-Version the gateway does not know. */
  probe: ['REQUEST.MALFORMED', 'REQUEST.VALIDATION_FAILED'],
  /** What a staff member's access token can also be refused for, on the staff operations. */
  staff: ['AUTH.TOKEN_MISSING', 'AUTH.INVALID_TOKEN', 'AUTH.FORBIDDEN', 'AUTH.MFA_REQUIRED', 'AUTH.ISSUER_UNAVAILABLE'],
  /** What an end user's access token can also be refused for, on the routes end users may call. */
  endUser: [
    'AUTH.TOKEN_MISSING',
    'AUTH.INVALID_TOKEN',
    'AUTH.DPOP_REQUIRED',
    'AUTH.FORBIDDEN',
    'AUTH.INVALID_DPOP_PROOF',
    'AUTH.INSUFFICIENT_SCOPE',
    'AUTH.ISSUER_UNAVAILABLE',
  ],
  query: ['REQUEST.VALIDATION_FAILED'],
  body: [
    'REQUEST.VALIDATION_FAILED',
    'REQUEST.MALFORMED_JSON',
    'REQUEST.JSON_TOO_DEEP',
    'REQUEST.BAD_CONTENT_LENGTH',
    'REQUEST.BODY_TOO_LARGE',
    'REQUEST.UNSUPPORTED_MEDIA_TYPE',
  ],
  providerRead: [
    'UPSTREAM.BAD_RESPONSE',
    'UPSTREAM.CREDENTIALS_REFUSED',
    'UPSTREAM.NOT_FOUND',
    'UPSTREAM.RATE_LIMITED',
    'UPSTREAM.REJECTED',
    'UPSTREAM.SERVER_ERROR',
    'UPSTREAM.TIMEOUT',
    'UPSTREAM.UNREACHABLE',
    'UPSTREAM.CONNECTION_LOST',
    'UPSTREAM.CIRCUIT_OPEN',
  ],
  providerWrite: [
    'UPSTREAM.CONFLICT',
    'IDEMPOTENCY.IN_FLIGHT',
    'IDEMPOTENCY.REFERENCE_REUSED',
    'IDEMPOTENCY.REFERENCE_TAKEN',
    'IDEMPOTENCY.OUTCOME_UNKNOWN',
    'IDEMPOTENCY.OUTCOME_PENDING',
  ],
} as const satisfies Record<string, readonly ErrorCode[]>;

/**
 * The envelope of an error answer with `status`, its `error.code` one of `codes`: the `ErrorEnvelope`
 * schema written out whole, so that a validator that refuses properties a schema does not name (as
 * a generated client's may) reads it the same way as one that does not.
 */
function errorEnvelopeWith(status: number, codes: readonly ErrorCode[]): SchemaObject {
  return {
    allOf: [{ $ref: getSchemaPath(ErrorEnvelopeSchema) }],
    type: 'object',
    description: `The error envelope of a ${status}.`,
    required: ['status', 'message', 'data', 'error'],
    properties: {
      status: { type: 'integer', enum: [status] },
      message: { type: 'string' },
      data: { type: 'null' },
      error: {
        type: 'object',
        description: 'As `Error`, its code one of this answer’s.',
        required: ['id', 'code', 'details', 'message'],
        properties: {
          id: { type: 'string', format: 'uuid' },
          code: { type: 'string', enum: [...codes] },
          details: { type: 'string' },
          message: { type: 'string' },
          fields: { type: 'array', items: { $ref: getSchemaPath(FieldProblemSchema) } },
          request_log_url: { type: 'string' },
          doc_url: { type: 'string', format: 'uri' },
        },
      },
    },
  };
}

/**
 * Documents the error responses an endpoint can give: one per status, its schema the envelope with
 * `error.code` narrowed to the codes that status can carry here, and an example of the first.
 */
export function ApiErrorResponses(...codes: (ErrorCode | readonly ErrorCode[])[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes.flat())) {
    const status = statusOfCode(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return applyDecorators(
    ApiExtraModels(ErrorEnvelopeSchema, FieldProblemSchema),
    ...[...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, statusCodes]) => {
        const listed = statusCodes;
        const example = statusCodes.find((code) => ERROR_EXAMPLES[code]) ?? statusCodes[0];
        const schema = errorEnvelopeWith(status, listed);
        return ApiResponse({
          status,
          description: `${ERROR_DESCRIPTIONS[status] ?? STATUS_CODES[status] ?? 'Error'}.${listed.length > 0 ? ` Codes: ${listed.map((code) => `\`${code}\``).join(', ')}.` : ''}`,
          schema,
          example: errorExample(example),
        });
      }),
  );
}

/** A write's answer, refusals and unknown outcomes included: its receipt (docs/security.md, "Receipts"). */
const RECEIPT_HEADER = {
  'Audit-Receipt': {
    description:
      'A compact JWS (EdDSA, `typ` audit-receipt+jws) signed with the audit key over the audit event that recorded this answer: ' +
      'its id and hash, the request id, operation, outcome, status, reference and customer. Verify it with the keys at /.well-known/audit-keys.json; ' +
      'the error answers of this write carry one too, and a replay carries the original’s.',
    schema: { type: 'string' },
  },
};

/**
 * A success status whose `data` is `model` (or an array of it) inside the envelope. `message` is
 * the envelope's message, declared here once: the answer carries it, and the document shows it.
 */
export function ApiEnvelopeResponse(
  status: number,
  model: Type<unknown>,
  options: { isArray?: boolean; description?: string; message?: string; receipt?: boolean } = {},
) {
  const data = options.isArray ? { type: 'array', items: { $ref: getSchemaPath(model) } } : { $ref: getSchemaPath(model) };
  return applyDecorators(
    ...(options.message ? [ResponseMessage(options.message)] : []),
    ApiExtraModels(model),
    ApiResponse({
      status,
      description: options.description,
      ...(options.receipt ? { headers: RECEIPT_HEADER } : {}),
      schema: {
        type: 'object',
        required: ['status', 'message', 'data', 'error'],
        properties: {
          status: { type: 'integer', example: status },
          message: { type: 'string', example: options.message ?? STATUS_CODES[status] ?? 'OK' },
          data,
          error: { type: 'object', nullable: true, example: null, description: 'Always null on success' },
        },
      },
    }),
  );
}
