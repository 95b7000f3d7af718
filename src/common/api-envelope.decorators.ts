import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorEnvelopeSchema } from './envelope';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad input: malformed JSON, unknown field, bad format or a broken rule',
  401: 'Missing, invalid, expired or revoked client token',
  403: 'The client token lacks the role this endpoint needs',
  404: 'Not found, or not visible to this client',
  409: 'The same reference is still being processed',
  413: 'The request body is too large',
  415: 'The content type is not application/json',
  422: 'The reference was already used with a different body',
  429: 'Rate limited; see Retry-After',
  502: 'The provider refused the request or answered garbage',
  503: 'A dependency is unavailable; see Retry-After',
  504: 'The provider did not answer in time',
};

/** Documents error statuses with the envelope as their schema. */
export function ApiErrorResponses(...statuses: number[]) {
  return applyDecorators(
    ApiExtraModels(ErrorEnvelopeSchema),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: ERROR_DESCRIPTIONS[status] ?? 'Error',
        schema: { $ref: getSchemaPath(ErrorEnvelopeSchema) },
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
