import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CurrentClient, Roles } from '../../../auth/http/auth.decorators';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { Audited } from '../../../common/http/audited.decorator';
import { createdRange, DEFAULT_LIST_PAGE } from '../../../common/http/list-query.dto';
import { EVENT_OPERATIONS, EventsService } from '../domain/events.service';
import { EventDto, EventIdParamDto, EventListDto, EventListQueryDto } from './event.dto';

@ApiTags('events')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1/events' })
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @Audited(EVENT_OPERATIONS.list)
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'List your events',
    description:
      'What happened to your tenant’s resources, newest first, a page at a time (follow `next_cursor`): what your webhooks ' +
      'were sent, to catch up after an outage or to poll instead. Kept for at least 30 days. docs/events.md is the catalogue.',
  })
  @ApiEnvelopeResponse(200, EventListDto, { message: 'Events listed' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.query, 'AUDIT.INVALID_CURSOR', 'AUDIT.INVALID_RANGE')
  async list(@CurrentClient() client: AuthenticatedClient, @Query() query: EventListQueryDto): Promise<EventListDto> {
    const listing = await this.events.list(client, { types: query.type, ...createdRange(query) }, query.limit ?? DEFAULT_LIST_PAGE, query.cursor);
    return EventListDto.from(listing);
  }

  @Get(':id')
  @Audited(EVENT_OPERATIONS.read)
  @ApiOperation({ operationId: 'getEvent', summary: 'Read an event', description: 'One of your tenant’s events. Another tenant’s is 404.' })
  @ApiEnvelopeResponse(200, EventDto, { message: 'Event retrieved' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.query, 'EVENT.NOT_FOUND')
  async read(@CurrentClient() client: AuthenticatedClient, @Param() params: EventIdParamDto): Promise<EventDto> {
    return EventDto.from(await this.events.read(client, params.id));
  }
}
