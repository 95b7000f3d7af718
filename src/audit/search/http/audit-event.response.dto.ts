import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { AUDIT_PHASES, AuditEvent } from '../../trail/domain/audit-event';
import { AUDIT_OPERATIONS } from '../domain/audit-operations';
import { AuditEventsPage } from '../domain/audit-events.service';

@ApiSchema({ name: 'AuditEvent' })
export class AuditEventResponseDto {
  @ApiProperty({ format: 'uuid', example: '9a7e3c1d-2b4f-4e6a-8c0d-1f2e3a4b5c6d' })
  readonly id!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:15:02.113Z' })
  readonly occurred_at!: string;

  @ApiProperty({ description: 'X-Request-Id of the request.', example: 'c0ffee00-1234-4abc-9def-000000000001' })
  readonly request_id!: string;

  @ApiProperty({ enum: AUDIT_OPERATIONS, example: 'bank_account.create' })
  readonly operation!: string;

  @ApiProperty({ enum: AUDIT_PHASES, example: 'succeeded' })
  readonly phase!: string;

  @ApiPropertyOptional({
    enum: ['partner', 'admin', 'end_user', 'staff'],
    nullable: true,
    type: String,
    example: 'partner',
    description:
      'Who called: a partner server or an admin (client tokens; an admin token is break-glass), an end user (then `client_id` is their pseudonym), ' +
      'or a staff member (then `staff_id` and `client_name` name them).',
  })
  readonly caller_kind!: string | null;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String, example: '3f2c8a9e-6a55-4bd2-9d55-1b0f3c1e2a10' })
  readonly client_id!: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'ios-app' })
  readonly client_name!: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'default' })
  readonly tenant!: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'Caller address (the forwarded one behind TRUST_PROXY).', example: '203.0.113.7' })
  readonly source_ip!: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'POST' })
  readonly http_method!: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'The route pattern, not the raw path.', example: '/api/v1/bank-accounts' })
  readonly route!: string | null;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String, example: '7d0c1f6e-5a43-4c1e-9b2a-2f6d8e0b9c11' })
  readonly reference!: string | null;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String, example: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44' })
  readonly customer_id!: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'EUR' })
  readonly currency!: string | null;

  @ApiPropertyOptional({ nullable: true, type: Number, example: 201 })
  readonly http_status!: number | null;

  @ApiPropertyOptional({ nullable: true, type: Number, example: 200 })
  readonly upstream_status!: number | null;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String, description: 'The `error.id` the caller saw.', example: null })
  readonly error_id!: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, example: null })
  readonly error_code!: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'The provider’s error id.', example: null })
  readonly upstream_error_id!: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, example: null })
  readonly error_message!: string | null;

  @ApiPropertyOptional({ nullable: true, type: Number, example: 42 })
  readonly latency_ms!: number | null;

  @ApiPropertyOptional({ nullable: true, type: Number, example: 31 })
  readonly upstream_latency_ms!: number | null;

  @ApiProperty({ description: 'Served from the idempotency store; the provider was not called.', example: false })
  readonly replayed!: boolean;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description: 'The W3C trace id of the request, when tracing is on and its trace was sampled: search the tracing backend for it.',
    example: '4bf92f3577b34da6a3ce929d0e0e4736',
  })
  readonly trace_id!: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description: 'A staff member’s stable id at the company’s OpenID provider (caller_kind `staff`; `client_name` is their display name).',
    example: null,
  })
  readonly staff_id!: string | null;

  @ApiPropertyOptional({ nullable: true, type: [String], description: 'The staff roles the request was allowed with.', example: null })
  readonly staff_roles!: string[] | null;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'Why the staff member or admin looked, as their search said.', example: null })
  readonly access_reason!: string | null;

  @ApiProperty({ description: 'Made with an admin client token: the break-glass credential (automation and emergencies).', example: false })
  readonly break_glass!: boolean;

  static from(event: AuditEvent): AuditEventResponseDto {
    return {
      id: event.id,
      occurred_at: event.occurredAt.toISOString(),
      request_id: event.requestId,
      operation: event.operation,
      phase: event.phase,
      caller_kind: event.callerKind ?? null,
      client_id: event.clientId ?? null,
      client_name: event.clientName ?? null,
      tenant: event.tenant ?? null,
      source_ip: event.sourceIp ?? null,
      http_method: event.httpMethod ?? null,
      route: event.route ?? null,
      reference: event.reference ?? null,
      customer_id: event.customerId ?? null,
      currency: event.currency ?? null,
      http_status: event.httpStatus ?? null,
      upstream_status: event.upstreamStatus ?? null,
      error_id: event.errorId ?? null,
      error_code: event.errorCode ?? null,
      upstream_error_id: event.upstreamErrorId ?? null,
      error_message: event.errorMessage ?? null,
      latency_ms: event.latencyMs ?? null,
      upstream_latency_ms: event.upstreamLatencyMs ?? null,
      replayed: event.replayed ?? false,
      trace_id: event.traceId ?? null,
      staff_id: event.staffId ?? null,
      staff_roles: event.staffRoles ? [...event.staffRoles] : null,
      access_reason: event.accessReason ?? null,
      break_glass: event.breakGlass === true,
    };
  }
}

@ApiSchema({ name: 'AuditEventPage' })
export class AuditEventsPageResponseDto {
  @ApiProperty({ type: [AuditEventResponseDto], description: 'Newest first.' })
  readonly events!: AuditEventResponseDto[];

  @ApiProperty({ nullable: true, type: String, description: 'Pass as `cursor` for the next, older page; null on the last page.', example: null })
  readonly next_cursor!: string | null;

  static from(page: AuditEventsPage): AuditEventsPageResponseDto {
    return { events: page.events.map((event) => AuditEventResponseDto.from(event)), next_cursor: page.nextCursor ?? null };
  }
}
