import type { PartnerEvent } from '../../../partner-api/events/domain/partner-event';
import { EVENT_TYPE_NAMES } from '../../../partner-api/events/domain/event-types';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { ALL_ERROR_CODES, type ErrorCode } from '../../../common/domain/error-codes';
import type { UpstreamAttempt } from '../../../common/domain/upstream';
import { IsInstant } from '../../../common/http/date.validators';
import { IsUuidField, Rules, toDecimalInteger } from '../../../common/http/field-rules';
import { requestLogAddress } from '../../../common/http/request-recorder.port';
import { type AuditEvent } from '../../trail/domain/audit-event';
import { type AuditOperation } from '../../../common/domain/audit-operations';
import { AUDIT_OPERATIONS } from '../../search/domain/audit-operations';
import type { RelatedRequest, RequestTimeline } from '../domain/request-log.port';
import { MAX_REQUEST_LOG_PAGE, type RequestLogListing } from '../domain/request-log.service';

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

/** What became of a request: its terminal event's phase, or `no_outcome` while none followed its `attempted` one. */
export const REQUEST_OUTCOMES = ['succeeded', 'rejected', 'failed', 'unknown', 'no_outcome'] as const;

/** Where a request log's links point: each error code's entry in the error catalogue, as the reader's request reaches it. */
export interface RequestLogLinks {
  docUrlOf(code: string): string;
}

export class RequestLogQueryDto {
  @ApiPropertyOptional({ description: 'Requests at or after this instant (ISO 8601; a date means its midnight UTC).' })
  @IsOptional()
  @IsInstant('from')
  readonly from?: string;

  @ApiPropertyOptional({ description: 'Requests before this instant (exclusive).' })
  @IsOptional()
  @IsInstant('to')
  readonly to?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 100, maximum: 599, description: 'The HTTP status the request was answered with (504, say).' })
  @IsOptional()
  @Transform(toDecimalInteger)
  @Rules(
    IsInt({ message: 'status must be an HTTP status, 100-599' }),
    Min(100, { message: 'status must be an HTTP status, 100-599' }),
    Max(599, { message: 'status must be an HTTP status, 100-599' }),
  )
  readonly status?: number;

  @ApiPropertyOptional({ enum: STATUS_CLASSES, description: 'The class of the status: `4xx` lists every refusal.' })
  @IsOptional()
  @IsIn(STATUS_CLASSES, { message: `status_class must be one of ${STATUS_CLASSES.join(', ')}` })
  readonly status_class?: (typeof STATUS_CLASSES)[number];

  @ApiPropertyOptional({
    enum: AUDIT_OPERATIONS,
    description:
      'What the request did. Reads of this log and of proofs are left out unless named here (`request_log.list`, `request_log.read`, `receipt.proof`, `checkpoint.consistency`).',
  })
  @IsOptional()
  @IsIn(AUDIT_OPERATIONS, { message: `operation must be one of ${AUDIT_OPERATIONS.join(', ')}` })
  readonly operation?: AuditOperation;

  @ApiPropertyOptional({ enum: ALL_ERROR_CODES, enumName: 'ErrorCode', description: 'The `error.code` the request was answered with.' })
  @IsOptional()
  @IsIn(ALL_ERROR_CODES, { message: 'error_code must be one of the codes in docs/errors.md' })
  readonly error_code?: ErrorCode;

  @ApiPropertyOptional({ description: 'An `error.id` you were given, or the provider’s error id.', pattern: '^[A-Za-z0-9_.:-]{1,100}$' })
  @IsOptional()
  @Matches(/^[A-Za-z0-9_.:-]{1,100}$/, { message: 'error_id must be an error id: letters, digits and _ . : - only, at most 100' })
  readonly error_id?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Your transaction reference.' })
  @IsOptional()
  @IsUuidField('reference must be a UUID')
  readonly reference?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'The customer the requests were about.' })
  @IsOptional()
  @IsUuidField('customer_id must be a UUID')
  readonly customer_id?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_REQUEST_LOG_PAGE, default: 20, description: 'Requests per page.' })
  @IsOptional()
  @Transform(toDecimalInteger)
  @Rules(
    IsInt({ message: 'limit must be an integer' }),
    Min(1, { message: `limit must be between 1 and ${MAX_REQUEST_LOG_PAGE}` }),
    Max(MAX_REQUEST_LOG_PAGE, { message: `limit must be between 1 and ${MAX_REQUEST_LOG_PAGE}` }),
  )
  readonly limit?: number;

  @ApiPropertyOptional({ description: 'The `next_cursor` of the previous page.', maxLength: 200 })
  @IsOptional()
  @Rules(IsString(), MaxLength(200, { message: 'cursor is not one this service issued' }))
  readonly cursor?: string;
}

/**
 * The X-Request-Id the demo customer is made with in sandbox mode (dev/demo/demo-customer.ts):
 * Swagger UI's example of a request id, which the printed partner token finds in its log.
 */
export const DEMO_REQUEST_ID = 'demo-customer';

export class RequestIdParamDto {
  @ApiProperty({
    description:
      'The request’s id: its `X-Request-Id` (yours when you sent a sane one, else the service’s UUID). The example is the demo customer’s creation, in sandbox mode.',
    example: DEMO_REQUEST_ID,
  })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, { message: 'request_id must be a request id: letters, digits and . _ : - only, at most 128' })
  readonly request_id!: string;
}

@ApiSchema({ name: 'RequestError' })
export class RequestErrorDto {
  @ApiProperty({ enum: ALL_ERROR_CODES, enumName: 'ErrorCode', example: 'UPSTREAM.TIMEOUT' })
  readonly code!: string;

  @ApiPropertyOptional({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'The `error.id` the request was answered with.',
    example: '0b5a3f5e-3f0c-4c55-9a2c-7f1d2b9a7c11',
  })
  readonly id!: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'The provider did not answer in time' })
  readonly message!: string | null;

  @ApiProperty({
    format: 'uri',
    description: 'The code’s entry in the error catalogue, served by the gateway (or at ERROR_DOCS_URL): what it means, and what to do.',
    example: 'https://gateway.partner.example/reference/errors#upstream-timeout',
  })
  readonly doc_url!: string;
}

@ApiSchema({ name: 'RequestCaller' })
export class RequestCallerDto {
  @ApiProperty({ enum: ['partner', 'end_user'], description: 'Your server (a client token), or one of your end users.', example: 'partner' })
  readonly kind!: string;

  @ApiPropertyOptional({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'The client’s id; for an end user, their pseudonym.',
    example: '3f2c8a9e-6a55-4bd2-9d55-1b0f3c1e2a10',
  })
  readonly client_id!: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'The client’s name; `end-user` for an end user.', example: 'acme-backend' })
  readonly client_name!: string | null;
}

@ApiSchema({ name: 'ProviderCall' })
export class ProviderCallDto {
  @ApiPropertyOptional({ nullable: true, type: Number, description: 'The provider’s status (its last attempt’s).', example: 200 })
  readonly status!: number | null;

  @ApiPropertyOptional({ nullable: true, type: Number, description: 'The provider call, every attempt and wait included.', example: 31 })
  readonly latency_ms!: number | null;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'The provider’s error id, when it answered with one.', example: null })
  readonly error_id!: string | null;
}

@ApiSchema({ name: 'RequestLogEntry' })
export class LoggedRequestDto {
  @ApiProperty({ description: 'X-Request-Id: the address of its timeline.', example: 'c0ffee00-1234-4abc-9def-000000000001' })
  readonly request_id!: string;

  @ApiProperty({
    format: 'date-time',
    description: 'When it ended (or, with `no_outcome`, when its provider call was recorded as attempted).',
    example: '2026-11-21T09:15:02.113Z',
  })
  readonly occurred_at!: string;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'POST' })
  readonly method!: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description: 'The route’s pattern: never a path’s or a query’s values.',
    example: '/api/v1/bank-accounts',
  })
  readonly route!: string | null;

  @ApiProperty({ enum: AUDIT_OPERATIONS, example: 'bank_account.create' })
  readonly operation!: string;

  @ApiProperty({
    enum: REQUEST_OUTCOMES,
    description:
      '`succeeded`; `rejected` (refused: by the gateway, or by the provider, which did nothing); `failed` (the provider did not act); ' +
      '`unknown` (the provider may have acted: see `settled_by`); `no_outcome` (no answer recorded: still at work, or the gateway stopped before learning it).',
    example: 'succeeded',
  })
  readonly outcome!: string;

  @ApiPropertyOptional({ nullable: true, type: Number, description: 'The HTTP status you were answered with.', example: 201 })
  readonly status!: number | null;

  @ApiPropertyOptional({ nullable: true, type: RequestErrorDto })
  readonly error!: RequestErrorDto | null;

  @ApiProperty({ type: RequestCallerDto })
  readonly caller!: RequestCallerDto;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String, example: '7d0c1f6e-5a43-4c1e-9b2a-2f6d8e0b9c11' })
  readonly reference!: string | null;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String, example: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44' })
  readonly customer_id!: string | null;

  @ApiPropertyOptional({ nullable: true, type: Number, description: 'From arrival to answer, as the gateway measured it.', example: 42 })
  readonly latency_ms!: number | null;

  @ApiProperty({ description: 'An idempotent replay: answered from the stored result, the provider not called (`replay_of` in the timeline).', example: false })
  readonly replayed!: boolean;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'The W3C trace id, when the request was traced.', example: null })
  readonly trace_id!: string | null;

  @ApiPropertyOptional({ nullable: true, type: ProviderCallDto, description: 'The provider call, when one was made.' })
  readonly provider!: ProviderCallDto | null;

  @ApiProperty({ description: 'Its timeline (a path under the API’s base URL).', example: '/api/v1/requests/c0ffee00-1234-4abc-9def-000000000001' })
  readonly log_url!: string;

  static from(event: AuditEvent, links: RequestLogLinks): LoggedRequestDto {
    const madeCall = event.upstreamStatus !== undefined || event.upstreamLatencyMs !== undefined || event.upstreamErrorId !== undefined;
    return {
      request_id: event.requestId,
      occurred_at: event.occurredAt.toISOString(),
      method: event.httpMethod ?? null,
      route: event.route ?? null,
      operation: event.operation,
      outcome: event.phase === 'attempted' ? 'no_outcome' : event.phase,
      status: event.httpStatus ?? null,
      error:
        event.errorCode === undefined
          ? null
          : {
              code: event.errorCode,
              id: event.errorId ?? null,
              message: event.errorMessage ?? null,
              doc_url: links.docUrlOf(event.errorCode),
            },
      caller: { kind: event.callerKind ?? 'partner', client_id: event.clientId ?? null, client_name: event.clientName ?? null },
      reference: event.reference ?? null,
      customer_id: event.customerId ?? null,
      latency_ms: event.latencyMs ?? null,
      replayed: event.replayed === true,
      trace_id: event.traceId ?? null,
      provider: madeCall
        ? { status: event.upstreamStatus ?? null, latency_ms: event.upstreamLatencyMs ?? null, error_id: event.upstreamErrorId ?? null }
        : null,
      log_url: requestLogAddress(event.requestId),
    };
  }
}

@ApiSchema({ name: 'RequestLogPage' })
export class RequestLogPageDto {
  @ApiProperty({ type: [LoggedRequestDto], description: 'Newest first.' })
  readonly requests!: LoggedRequestDto[];

  @ApiProperty({ nullable: true, type: String, description: 'Pass as `cursor` for the next, older page; null on the last page.', example: null })
  readonly next_cursor!: string | null;

  static from(listing: RequestLogListing, links: RequestLogLinks): RequestLogPageDto {
    return { requests: listing.requests.map((event) => LoggedRequestDto.from(event, links)), next_cursor: listing.nextCursor ?? null };
  }
}

@ApiSchema({ name: 'RequestEvent' })
export class RequestEventDto {
  @ApiProperty({ format: 'uuid', description: 'The audit event’s id.' })
  readonly id!: string;

  @ApiProperty({ format: 'date-time' })
  readonly occurred_at!: string;

  @ApiProperty({
    enum: ['attempted', 'succeeded', 'rejected', 'failed', 'unknown'],
    description: '`attempted` is recorded before a provider write is sent; the others end the request.',
  })
  readonly phase!: string;

  @ApiPropertyOptional({ nullable: true, type: Number })
  readonly status!: number | null;

  @ApiPropertyOptional({ nullable: true, type: String })
  readonly error_code!: string | null;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String })
  readonly error_id!: string | null;
}

@ApiSchema({ name: 'ProviderAttempt' })
export class ProviderAttemptDto {
  @ApiProperty({ description: '0 for the first attempt, then each retry.', example: 0 })
  readonly retry!: number;

  @ApiPropertyOptional({ nullable: true, type: Number, description: 'The provider’s status, when it answered.', example: 503 })
  readonly status!: number | null;

  @ApiProperty({ example: 12 })
  readonly latency_ms!: number;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'The provider’s error id, when its answer had one.', example: null })
  readonly error_id!: string | null;

  @ApiPropertyOptional({
    enum: ['timeout', 'not_sent', 'connection_lost', 'circuit_open'],
    nullable: true,
    type: String,
    description: 'Why it got no answer: no answer in time, nothing sent, the connection lost after sending, the circuit open.',
    example: 'timeout',
  })
  readonly failure!: string | null;

  static from(attempt: UpstreamAttempt): ProviderAttemptDto {
    return {
      retry: attempt.retry,
      status: attempt.status ?? null,
      latency_ms: attempt.latencyMs,
      error_id: attempt.errorId ?? null,
      failure: attempt.failure ?? null,
    };
  }
}

@ApiSchema({ name: 'RelatedRequest' })
export class RelatedRequestDto {
  @ApiProperty({ example: 'a1b2c3d4-0000-4000-8000-000000000002' })
  readonly request_id!: string;

  @ApiProperty({ format: 'date-time' })
  readonly occurred_at!: string;

  @ApiProperty({ example: '/api/v1/requests/a1b2c3d4-0000-4000-8000-000000000002' })
  readonly log_url!: string;

  static from(related: RelatedRequest | undefined): RelatedRequestDto | null {
    return related ? { request_id: related.requestId, occurred_at: related.occurredAt.toISOString(), log_url: requestLogAddress(related.requestId) } : null;
  }
}

@ApiSchema({ name: 'CausedEvent' })
export class CausedEventDto {
  @ApiProperty({ format: 'uuid', description: 'The event’s id (its deliveries’ `webhook-id`).' })
  readonly id!: string;

  @ApiProperty({ enum: EVENT_TYPE_NAMES, example: 'bank_account.created' })
  readonly type!: string;

  @ApiProperty({ format: 'date-time' })
  readonly created_at!: string;

  @ApiProperty({
    type: 'object',
    required: ['type', 'id'],
    properties: { type: { type: 'string', example: 'bank_account' }, id: { type: 'string', example: '0f9b5c2e-8d1a-4c3b-9e7f-6a5d4c3b2a19' } },
    description: 'What it is about.',
  })
  readonly resource!: { type: string; id: string };
}

@ApiSchema({ name: 'RequestTimeline' })
export class RequestTimelineDto extends LoggedRequestDto {
  @ApiProperty({ type: [RequestEventDto], description: 'Its audit events, oldest first: `attempted` before a provider write, then how it ended.' })
  readonly events!: RequestEventDto[];

  @ApiProperty({
    type: [ProviderAttemptDto],
    description: 'Each attempt of its provider call, in order: one for a call answered at once, more when a read was retried (or a write that was never sent).',
  })
  readonly provider_attempts!: ProviderAttemptDto[];

  @ApiPropertyOptional({ nullable: true, type: RelatedRequestDto, description: 'For a replay: the request whose stored answer it gave back.' })
  readonly replay_of!: RelatedRequestDto | null;

  @ApiPropertyOptional({
    nullable: true,
    type: RelatedRequestDto,
    description: 'For an `unknown` or `no_outcome` write: the later request with the same reference that succeeded, which settled it. Null while unsettled.',
  })
  readonly settled_by!: RelatedRequestDto | null;

  @ApiProperty({
    description: 'More than one request was sent with this X-Request-Id: its events are all listed, the summary is the newest request’s.',
    example: false,
  })
  readonly id_reused!: boolean;

  @ApiProperty({
    type: [CausedEventDto],
    description: 'The events it caused (docs/events.md), oldest first: what your webhooks were sent of it. Read one at GET /api/v1/events/{id}.',
  })
  readonly caused_events!: CausedEventDto[];

  static fromTimeline(timeline: RequestTimeline & { readonly caused: readonly PartnerEvent[] }, links: RequestLogLinks): RequestTimelineDto {
    const events = timeline.events;
    const ends = events.filter((event) => event.phase !== 'attempted');
    const last = ends.at(-1) ?? events.at(-1)!;
    return {
      ...LoggedRequestDto.from(last, links),
      events: events.map((event) => ({
        id: event.id,
        occurred_at: event.occurredAt.toISOString(),
        phase: event.phase,
        status: event.httpStatus ?? null,
        error_code: event.errorCode ?? null,
        error_id: event.errorId ?? null,
      })),
      provider_attempts: attemptsOf(events),
      replay_of: RelatedRequestDto.from(timeline.replayOf),
      settled_by: RelatedRequestDto.from(timeline.settledBy),
      id_reused: ends.length > 1 || events.filter((event) => event.phase === 'attempted').length > 1,
      caused_events: timeline.caused.map((event) => ({
        id: event.id,
        type: event.type,
        created_at: event.createdAt,
        resource: { type: event.resourceType, id: event.resourceId },
      })),
    };
  }
}

/** Every provider attempt the request's events record: the lists of calls retried or unanswered, or a call answered at once as its one attempt. */
function attemptsOf(events: readonly AuditEvent[]): ProviderAttemptDto[] {
  return events.flatMap((event) => {
    if (event.upstreamAttempts && event.upstreamAttempts.length > 0) return event.upstreamAttempts.map((attempt) => ProviderAttemptDto.from(attempt));
    if (event.upstreamStatus === undefined) return [];
    return [ProviderAttemptDto.from({ retry: 0, status: event.upstreamStatus, latencyMs: event.upstreamLatencyMs ?? 0, errorId: event.upstreamErrorId })];
  });
}
