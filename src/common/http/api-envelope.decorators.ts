import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';
import { ErrorEnvelope, ErrorEnvelopeSchema } from './envelope';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad input: malformed JSON, unknown field, bad format or a broken rule',
  401: 'Missing, invalid, expired or revoked client token',
  403: 'The client token lacks the role this endpoint needs',
  404: 'Not found, or not visible to this client',
  409: 'The same reference is still being processed',
  413: 'The request body is too large',
  415: 'The content type is not application/json',
  422: 'The reference was already used with a different body, or by another client',
  429: 'Rate limited; see Retry-After',
  502: 'The provider refused the request or answered garbage',
  503: 'A dependency is unavailable; see Retry-After',
  504: 'The provider did not answer in time',
};

/** What each status's example says (`error.message`, `error.details`, and fields for a 400). */
const ERROR_EXAMPLES: Record<number, { message: string; details: string; fields?: { field: string; message: string }[] }> = {
  400: {
    message: 'The request has invalid fields',
    details: 'currency must be EUR or GBP',
    fields: [{ field: 'currency', message: 'currency must be EUR or GBP' }],
  },
  401: { message: 'The supplied token is invalid or expired', details: 'The token is invalid or expired' },
  403: { message: 'This client may not use this endpoint', details: 'This endpoint needs the role: admin' },
  404: { message: 'No such customer', details: 'No customer with this id is visible to this client' },
  409: { message: 'A request with this reference is still being processed', details: 'Retry after the Retry-After delay with the same body to get its result.' },
  413: { message: 'The request body is larger than the service accepts', details: 'The request body is larger than the service accepts' },
  415: { message: 'The content type is not supported; send application/json', details: 'The content type is not supported; send application/json' },
  422: {
    message: 'This reference was already used with a different request',
    details: 'A reference identifies one transaction: send a new reference for a different request.',
    fields: [{ field: 'reference', message: 'reference was already used with a different body' }],
  },
  429: { message: 'Too many requests for this client', details: 'Retry after the Retry-After delay' },
  502: { message: 'The provider refused the request', details: 'The provider answered 400; quote the error id to support' },
  503: { message: 'The audit log is unavailable', details: 'Nothing was sent to the provider; retry after the Retry-After delay' },
  504: { message: 'The provider did not answer in time', details: 'The outcome is unknown; retry with the same reference' },
};

/** The error envelope as a response with this status would carry it. */
export function errorExample(status: number): ErrorEnvelope {
  const example = ERROR_EXAMPLES[status] ?? { message: STATUS_CODES[status] ?? 'Error', details: STATUS_CODES[status] ?? 'Error' };
  return {
    status,
    data: null,
    message: STATUS_CODES[status] ?? 'Error',
    error: { id: '0b5a3f5e-3f0c-4c55-9a2c-7f1d2b9a7c11', details: example.details, message: example.message, ...(example.fields ? { fields: example.fields } : {}) },
  };
}

/** Documents error statuses with the envelope as their schema and an example of each status. */
export function ApiErrorResponses(...statuses: number[]) {
  return applyDecorators(
    ApiExtraModels(ErrorEnvelopeSchema),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: ERROR_DESCRIPTIONS[status] ?? 'Error',
        schema: { $ref: getSchemaPath(ErrorEnvelopeSchema) },
        example: errorExample(status),
      }),
    ),
  );
}

/** Documents a success status whose `data` is `model` (or an array of it) inside the envelope. */
export function ApiEnvelopeResponse(status: number, model: Type<unknown>, options: { isArray?: boolean; description?: string } = {}) {
  const data = options.isArray ? { type: 'array', items: { $ref: getSchemaPath(model) } } : { $ref: getSchemaPath(model) };
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status,
      description: options.description,
      schema: {
        type: 'object',
        required: ['status', 'message', 'data', 'error'],
        properties: {
          status: { type: 'integer', example: status },
          message: { type: 'string', example: status === 201 ? 'Created' : 'OK' },
          data,
          error: { type: 'object', nullable: true, example: null, description: 'Always null on success' },
        },
      },
    }),
  );
}
