import { ApiProperty, ApiPropertyOptional, ApiSchema, PartialType } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsInstant } from '../../../common/http/date.validators';
import { IsPrintableText, IsUuidField, Rules } from '../../../common/http/field-rules';
import { NextCursorDto } from '../../../common/http/list-query.dto';
import { EVENT_TYPE_NAMES, type EventType } from '../../events/domain/event-types';
import type { DeliveryAttempt, WebhookEndpoint } from '../domain/webhook-endpoint';
import type { Listing, WithSecret } from '../domain/webhook-endpoints.service';

@ApiSchema({ name: 'WebhookEndpointRequest' })
export class WebhookEndpointRequestDto {
  @ApiProperty({
    description: 'Where events are POSTed. In production: https, to a public address (checked now and as each delivery connects); redirects are not followed.',
    maxLength: 2048,
    example: 'https://partner.example/webhooks/gateway',
  })
  @Rules(IsString({ message: 'url must be a URL' }), MaxLength(2048, { message: 'url must be at most 2048 characters' }))
  readonly url!: string;

  @ApiPropertyOptional({
    type: [String],
    enum: EVENT_TYPE_NAMES,
    description: 'The event types it is sent; empty or left out: every type.',
    example: ['bank_account.created'],
  })
  @IsOptional()
  @IsArray({ message: 'event_types must be an array of event types' })
  @ArrayMaxSize(EVENT_TYPE_NAMES.length * 2, { message: 'event_types names each type once at most' })
  @IsIn(EVENT_TYPE_NAMES, { each: true, message: `event_types must each be one of: ${EVENT_TYPE_NAMES.join(', ')}` })
  readonly event_types?: EventType[];

  @ApiPropertyOptional({ default: true, description: 'A disabled endpoint is sent nothing.' })
  @IsOptional()
  @IsBoolean({ message: 'enabled must be true or false' })
  readonly enabled?: boolean;

  @ApiPropertyOptional({ maxLength: 200, example: 'Ledger sync' })
  @IsOptional()
  @IsPrintableText(200)
  readonly description?: string;

  @ApiPropertyOptional({
    default: false,
    description: 'In order per resource: a resource’s next event waits until the one before was delivered (or given up on).',
  })
  @IsOptional()
  @IsBoolean({ message: 'ordered must be true or false' })
  readonly ordered?: boolean;

  @ApiPropertyOptional({ default: false, description: 'Each delivery carries the resource as it stood (`object`), not its ids alone.' })
  @IsOptional()
  @IsBoolean({ message: 'snapshot must be true or false' })
  readonly snapshot?: boolean;
}

@ApiSchema({ name: 'WebhookEndpointChanges' })
export class WebhookEndpointChangesDto extends PartialType(WebhookEndpointRequestDto) {}

@ApiSchema({ name: 'WebhookEndpoint' })
export class WebhookEndpointDto {
  @ApiProperty({ format: 'uuid' })
  readonly id!: string;

  @ApiProperty({ example: 'https://partner.example/webhooks/gateway' })
  readonly url!: string;

  @ApiProperty({ type: [String], enum: EVENT_TYPE_NAMES, description: 'Empty: every type.' })
  readonly event_types!: EventType[];

  @ApiProperty()
  readonly enabled!: boolean;

  @ApiProperty({ type: String, nullable: true })
  readonly description!: string | null;

  @ApiProperty()
  readonly ordered!: boolean;

  @ApiProperty()
  readonly snapshot!: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['gone', 'failing'],
    description: 'Why the service disabled it: it answered 410 (`gone`), or every attempt failed for 5 days (`failing`). Enable it again to clear.',
  })
  readonly disabled_reason!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Until when the secret before the last rotation still signs too.' })
  readonly previous_secret_expires_at!: string | null;

  @ApiProperty({ format: 'date-time' })
  readonly created_at!: string;

  @ApiProperty({ format: 'date-time' })
  readonly updated_at!: string;

  static from(endpoint: WebhookEndpoint): WebhookEndpointDto {
    return {
      id: endpoint.id,
      url: endpoint.url,
      event_types: [...endpoint.eventTypes],
      enabled: endpoint.enabled,
      description: endpoint.description ?? null,
      ordered: endpoint.ordered,
      snapshot: endpoint.snapshot,
      disabled_reason: endpoint.disabledReason ?? null,
      previous_secret_expires_at: endpoint.previousSecretUntil ?? null,
      created_at: endpoint.createdAt,
      updated_at: endpoint.updatedAt,
    };
  }
}

@ApiSchema({ name: 'WebhookEndpointWithSecret' })
export class WebhookEndpointWithSecretDto extends WebhookEndpointDto {
  @ApiProperty({
    description: 'The signing secret (`whsec_…`), shown this once: verify each delivery’s `v1` signature with it.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  readonly secret!: string;

  static withSecret(made: WithSecret): WebhookEndpointWithSecretDto {
    return { ...WebhookEndpointDto.from(made.endpoint), secret: made.secret };
  }
}

@ApiSchema({ name: 'WebhookEndpointList' })
export class WebhookEndpointListDto extends NextCursorDto {
  @ApiProperty({ type: [WebhookEndpointDto], description: 'Newest first.' })
  readonly endpoints!: WebhookEndpointDto[];

  static from(listing: Listing<WebhookEndpoint>): WebhookEndpointListDto {
    return { endpoints: listing.items.map((endpoint) => WebhookEndpointDto.from(endpoint)), next_cursor: listing.nextCursor ?? null };
  }
}

@ApiSchema({ name: 'RotateWebhookSecretRequest' })
export class RotateSecretRequestDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 168,
    default: 24,
    description: 'How many hours the old secret keeps signing beside the new one (both `v1` signatures are sent); 0 revokes it at once.',
  })
  @IsOptional()
  @Rules(
    IsInt({ message: 'overlap_hours must be an integer' }),
    Min(0, { message: 'overlap_hours must be between 0 and 168' }),
    Max(168, { message: 'overlap_hours must be between 0 and 168' }),
  )
  readonly overlap_hours?: number;
}

@ApiSchema({ name: 'RedeliverRequest' })
export class RedeliverRequestDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'One event to deliver again (any of your events of a type the endpoint takes, or not).' })
  @IsOptional()
  @IsUuidField('event_id must be a UUID')
  readonly event_id?: string;

  @ApiPropertyOptional({ description: 'Without `event_id`: every delivery that failed, made at or after this instant.' })
  @IsOptional()
  @IsInstant('from')
  readonly from?: string;

  @ApiPropertyOptional({ description: 'Without `event_id`: … and before this instant.' })
  @IsOptional()
  @IsInstant('to')
  readonly to?: string;
}

@ApiSchema({ name: 'Redelivery' })
export class RedeliveryDto {
  @ApiProperty({ type: 'integer', description: 'How many deliveries were asked for: each is attempted at once, on a fresh schedule.' })
  readonly redelivered!: number;
}

@ApiSchema({ name: 'DeletedWebhookEndpoint' })
export class DeletedEndpointDto {
  @ApiProperty({ format: 'uuid' })
  readonly id!: string;

  @ApiProperty({ enum: [true] })
  readonly deleted!: true;
}

@ApiSchema({ name: 'WebhookAttempt' })
export class DeliveryAttemptDto {
  @ApiProperty({ format: 'uuid' })
  readonly id!: string;

  @ApiProperty({ format: 'uuid', description: 'The event (its `webhook-id`).' })
  readonly event_id!: string;

  @ApiProperty({ format: 'uuid' })
  readonly endpoint_id!: string;

  @ApiProperty({ enum: EVENT_TYPE_NAMES })
  readonly event_type!: string;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Its place in the delivery’s schedule (a redelivery starts again at 1).' })
  readonly attempt!: number;

  @ApiProperty({ format: 'date-time' })
  readonly attempted_at!: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The endpoint’s status; null when it gave none.' })
  readonly http_status!: number | null;

  @ApiProperty({ type: 'integer' })
  readonly latency_ms!: number;

  @ApiProperty({ type: String, nullable: true, description: 'The first 1 KiB of the endpoint’s answer.' })
  readonly response!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['http_status', 'redirect', 'timeout', 'connection', 'refused_address', 'endpoint_disabled', 'event_missing'],
    description: 'Why it failed; null when it was delivered.',
  })
  readonly failure!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When the next attempt is due; null when none is.' })
  readonly next_attempt_at!: string | null;

  static from(attempt: DeliveryAttempt): DeliveryAttemptDto {
    return {
      id: attempt.id,
      event_id: attempt.eventId,
      endpoint_id: attempt.endpointId,
      event_type: attempt.eventType,
      attempt: attempt.attempt,
      attempted_at: attempt.attemptedAt,
      http_status: attempt.httpStatus ?? null,
      latency_ms: attempt.latencyMs,
      response: attempt.response ?? null,
      failure: attempt.failure ?? null,
      next_attempt_at: attempt.nextAttemptAt ?? null,
    };
  }
}

@ApiSchema({ name: 'WebhookAttemptList' })
export class DeliveryAttemptListDto extends NextCursorDto {
  @ApiProperty({ type: [DeliveryAttemptDto], description: 'Newest first.' })
  readonly attempts!: DeliveryAttemptDto[];

  static from(listing: Listing<DeliveryAttempt>): DeliveryAttemptListDto {
    return { attempts: listing.items.map((attempt) => DeliveryAttemptDto.from(attempt)), next_cursor: listing.nextCursor ?? null };
  }
}

/** The `id` of an endpoint in a path. */
export class EndpointIdParamDto {
  @ApiProperty({ format: 'uuid', description: 'A webhook endpoint’s id.' })
  @IsUuidField('id must be a UUID')
  readonly id!: string;
}
