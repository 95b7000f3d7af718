import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { AUDIT_OPERATIONS } from '../../search/domain/audit-operations';
import type { AuditOperation } from '../../../common/domain/audit-operations';
import { DURATION_PATTERN, DURATION_RULE } from '../../../common/domain/duration';
import { Rules, toDecimalInteger } from '../../../common/http/field-rules';
import { UnresolvedCall } from '../../trail/domain/unresolved-call';
import { MAX_UNRESOLVED_PAGE, UnresolvedCallsPage } from '../domain/unresolved-calls.service';

export class UnresolvedCallsQueryDto {
  @ApiPropertyOptional({
    default: '60s',
    description: `Only calls attempted at least this long ago (younger ones may still be running): ${DURATION_RULE}.`,
    example: '60s',
    pattern: DURATION_PATTERN.source,
  })
  @IsOptional()
  @Matches(DURATION_PATTERN, { message: `older_than must be ${DURATION_RULE}` })
  readonly older_than?: string;

  @ApiPropertyOptional({
    default: '30d',
    description: `Only calls attempted at most this long ago: ${DURATION_RULE}.`,
    example: '30d',
    pattern: DURATION_PATTERN.source,
  })
  @IsOptional()
  @Matches(DURATION_PATTERN, { message: `since must be ${DURATION_RULE}` })
  readonly since?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_UNRESOLVED_PAGE, default: 100, description: 'Calls per page.' })
  @IsOptional()
  @Transform(toDecimalInteger)
  @Rules(
    IsInt({ message: 'limit must be an integer' }),
    Min(1, { message: `limit must be between 1 and ${MAX_UNRESOLVED_PAGE}` }),
    Max(MAX_UNRESOLVED_PAGE, { message: `limit must be between 1 and ${MAX_UNRESOLVED_PAGE}` }),
  )
  readonly limit?: number;

  @ApiPropertyOptional({ description: 'The `next_cursor` of the previous page.', maxLength: 200 })
  @IsOptional()
  @Rules(IsString(), MaxLength(200, { message: 'cursor is not one this service issued' }))
  readonly cursor?: string;
}

/** One unresolved call, as the API and `npm run audit:reconcile` print it. */
@ApiSchema({ name: 'UnresolvedCall' })
export class UnresolvedCallDto {
  @ApiProperty({ enum: AUDIT_OPERATIONS, example: 'bank_account.create' })
  readonly operation!: AuditOperation;

  @ApiProperty({ format: 'uuid', description: 'The transaction’s reference, as the provider knows it.', example: '7d0f1f3e-5b9a-4f0e-9a52-2b8c6f1d4e21' })
  readonly reference!: string;

  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'The customer; null for a customer creation (its id is what was lost).',
    example: '3c9e7a52-1f4b-4d8e-b0a6-95e2d7c41f08',
  })
  readonly customer_id!: string | null;

  @ApiProperty({ nullable: true, type: String, description: 'The API client’s name.', example: 'acme-ios' })
  readonly client!: string | null;

  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'The API client’s id.', example: '0b6f2d8e-4c1a-4e57-9f3b-7a2d5c8e1f64' })
  readonly client_id!: string | null;

  @ApiProperty({ format: 'date-time', description: 'When its `attempted` event was committed.', example: '2026-11-22T09:15:03.004Z' })
  readonly attempted_at!: string;

  @ApiProperty({ description: 'The request’s id (`X-Request-Id`): every event it left carries it.', example: 'b1f4c2d6-8e3a-4f71-a95c-2d7e6f8a1b30' })
  readonly request_id!: string;

  @ApiProperty({
    enum: ['no_outcome', 'unknown'],
    description: '`no_outcome`: the gateway stopped between sending and the answer (no terminal event); `unknown`: the provider did not answer in time.',
    example: 'no_outcome',
  })
  readonly state!: 'no_outcome' | 'unknown';

  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'The `error.id` the partner was given (`unknown` only).', example: null })
  readonly error_id!: string | null;

  static from(call: UnresolvedCall): UnresolvedCallDto {
    return {
      operation: call.operation,
      reference: call.reference,
      customer_id: call.customerId ?? null,
      client: call.clientName ?? null,
      client_id: call.clientId ?? null,
      attempted_at: call.attemptedAt.toISOString(),
      request_id: call.requestId,
      state: call.state,
      error_id: call.errorId ?? null,
    };
  }
}

@ApiSchema({ name: 'UnresolvedCallList' })
export class UnresolvedCallsResponseDto {
  @ApiProperty({ type: [UnresolvedCallDto], description: 'Newest attempt first.' })
  readonly calls!: UnresolvedCallDto[];

  @ApiProperty({ format: 'date-time', description: 'The window looked at: attempts at or after this…', example: '2026-10-23T09:16:03.004Z' })
  readonly since!: string;

  @ApiProperty({ format: 'date-time', description: '…and before this.', example: '2026-11-22T09:15:03.004Z' })
  readonly before!: string;

  @ApiPropertyOptional({ description: 'Pass as `cursor` for the next (older) page; absent on the last.' })
  readonly next_cursor?: string;

  static from(page: UnresolvedCallsPage): UnresolvedCallsResponseDto {
    return {
      calls: page.calls.map((call) => UnresolvedCallDto.from(call)),
      since: page.window.since.toISOString(),
      before: page.window.before.toISOString(),
      ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
    };
  }
}
