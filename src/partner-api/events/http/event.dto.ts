import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional } from 'class-validator';
import { ListQueryDto, NextCursorDto } from '../../../common/http/list-query.dto';
import { IsUuidField } from '../../../common/http/field-rules';
import { EVENT_TYPE_NAMES, type EventType } from '../domain/event-types';
import type { PartnerEvent } from '../domain/partner-event';
import { eventView, type EventView } from '../domain/event-view';
import type { EventListing } from '../domain/events.service';

@ApiSchema({ name: 'EventResource' })
export class EventResourceDto {
  @ApiProperty({ enum: ['customer', 'bank_account', 'request', 'webhook_endpoint'], example: 'bank_account' })
  readonly type!: string;

  @ApiProperty({ description: 'Its id: read it with its own GET.', example: '0f9b5c2e-8d1a-4c3b-9e7f-6a5d4c3b2a19' })
  readonly id!: string;
}

/** An event as GET /api/v1/events answers it, and as a webhook delivers it (docs/events.md). */
@ApiSchema({ name: 'Event' })
export class EventDto implements EventView {
  @ApiProperty({ format: 'uuid', description: 'The event’s id: the `webhook-id` of its deliveries, the same on every attempt.' })
  readonly id!: string;

  @ApiProperty({ enum: EVENT_TYPE_NAMES, example: 'bank_account.created' })
  readonly type!: EventType;

  @ApiProperty({ format: 'date-time', description: 'When it was written, with the fact it reports.', example: '2026-12-02T09:30:00.123456Z' })
  readonly created_at!: string;

  @ApiProperty({ type: EventResourceDto })
  readonly resource!: EventResourceDto;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'The resource’s events in order: 1 for its first. Deliveries may arrive out of it.', example: 1 })
  readonly sequence!: number;

  @ApiProperty({ type: String, nullable: true, description: 'The request that caused it (your request log’s `request_id`).' })
  readonly request_id!: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The reference of the write that caused it.' })
  readonly reference!: string | null;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The audit event that records the fact: its signed receipt (GET /api/v1/audit-receipts/{event_id}) proves this event.',
  })
  readonly audit_event_id!: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Ids and status: read the resource for the rest.',
    example: { id: '0f9b…', status: 'ACTIVE' },
  })
  readonly data!: Record<string, unknown>;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'The resource as it stood when the event was written (masked as its list shows it). In a webhook, only for an endpoint with `snapshot`.',
  })
  readonly object!: Record<string, unknown> | null;

  static from(event: PartnerEvent): EventDto {
    return eventView(event);
  }
}

@ApiSchema({ name: 'EventList' })
export class EventListDto extends NextCursorDto {
  @ApiProperty({ type: [EventDto], description: 'Newest first.' })
  readonly events!: EventDto[];

  static from(listing: EventListing): EventListDto {
    return { events: listing.events.map((event) => EventDto.from(event)), next_cursor: listing.nextCursor ?? null };
  }
}

/** `type=a,b`: one or more event types, comma-separated. */
export class EventListQueryDto extends ListQueryDto {
  @ApiPropertyOptional({
    type: String,
    description: `Only events of these types, comma-separated: ${EVENT_TYPE_NAMES.join(', ')}.`,
    example: 'bank_account.created,customer.created',
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.split(',') : value))
  @IsIn(EVENT_TYPE_NAMES, { each: true, message: `type must be a comma-separated list of: ${EVENT_TYPE_NAMES.join(', ')}` })
  readonly type?: EventType[];
}

/** The `id` of an event in a path. */
export class EventIdParamDto {
  @ApiProperty({ format: 'uuid', description: 'An event’s id.' })
  @IsUuidField('id must be a UUID')
  readonly id!: string;
}
