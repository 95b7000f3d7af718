import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ALL_ERROR_CODES, type ErrorCode } from '../domain/error-codes';

/** The body of every error response: the provider's 401 envelope, generalised. */
export interface ErrorEnvelope {
  readonly status: number;
  readonly data: null;
  readonly message: string;
  readonly error: {
    readonly id: string;
    readonly code: ErrorCode;
    readonly details: string;
    readonly message: string;
    readonly fields?: readonly { field: string; message: string }[];
    /** Where the partner's request log shows the request (a path under the API's base URL). */
    readonly request_log_url?: string;
    /** The code's entry in the error catalogue: an absolute URL. */
    readonly doc_url?: string;
  };
}

export interface SuccessEnvelope<T> {
  readonly status: number;
  readonly message: string;
  readonly data: T;
  readonly error: null;
}

@ApiSchema({ name: 'FieldProblem' })
export class FieldProblemSchema {
  @ApiProperty({ example: 'currency' })
  readonly field!: string;

  @ApiProperty({ example: 'currency must be EUR or GBP' })
  readonly message!: string;
}

@ApiSchema({ name: 'Error' })
export class ErrorBodySchema {
  @ApiProperty({
    format: 'uuid',
    description: 'Error id: quote it to support; it finds the event in the audit log.',
    example: '0b5a3f5e-3f0c-4c55-9a2c-7f1d2b9a7c11',
  })
  readonly id!: string;

  @ApiProperty({
    enum: ALL_ERROR_CODES,
    enumName: 'ErrorCode',
    description: 'Stable and machine-readable: branch on it (docs/errors.md says what each means and what to do).',
    example: 'REQUEST.VALIDATION_FAILED',
  })
  readonly code!: ErrorCode;

  @ApiProperty({ example: 'currency must be EUR or GBP' })
  readonly details!: string;

  @ApiProperty({ example: 'The request has invalid fields' })
  readonly message!: string;

  @ApiPropertyOptional({ type: [FieldProblemSchema] })
  readonly fields?: FieldProblemSchema[];

  @ApiPropertyOptional({
    description:
      'Where the partner’s request log shows this request, its provider attempts and what became of it: a path under the API’s base URL, ' +
      'opened with a partner server token of the same tenant (an end user’s request is in its partner’s log; their own token cannot open it). ' +
      'Present once the request is recorded under a partner’s token or an end user’s; absent when nobody’s log holds it (no valid credentials, for one).',
    example: '/api/v1/requests/c0ffee00-1234-4abc-9def-000000000001',
  })
  readonly request_log_url?: string;

  @ApiPropertyOptional({
    format: 'uri',
    description:
      'The code’s entry in the error catalogue (what it means, what to do), as an absolute URL: the page the gateway serves at `/reference/errors`, ' +
      'on PUBLIC_BASE_URL or the origin the request was sent to, or where the operator publishes it (ERROR_DOCS_URL). ' +
      'Absent when none of these gives an origin the gateway can trust (a request whose own Host header was refused).',
    example: 'https://gateway.partner.example/reference/errors#request-validation-failed',
  })
  readonly doc_url?: string;
}

@ApiSchema({ name: 'ErrorEnvelope' })
export class ErrorEnvelopeSchema {
  @ApiProperty({ description: 'The HTTP status, repeated', example: 400 })
  readonly status!: number;

  @ApiProperty({ type: 'null', example: null, description: 'Always null on an error' })
  readonly data!: null;

  @ApiProperty({ description: 'The status text', example: 'Bad Request' })
  readonly message!: string;

  @ApiProperty({ type: ErrorBodySchema })
  readonly error!: ErrorBodySchema;
}
