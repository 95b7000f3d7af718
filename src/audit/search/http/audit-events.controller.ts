import { OPERATION } from '../../../common/domain/audit-operations';
import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { Roles } from '../../../auth/http/auth.decorators';
import { EndUserIds } from '../../../auth/domain/end-user-ids';
import { AuditEventsService } from '../domain/audit-events.service';
import { AuditEventIdParamDto, AuditEventsQueryDto } from './audit-events.request.dto';
import { AuditEventResponseDto, AuditEventsPageResponseDto } from './audit-event.response.dto';
import { Audited } from '../../../common/http/audited.decorator';

const DEFAULT_PAGE = 50;

@ApiTags('audit')
@ApiBearerAuth()
@Roles('admin')
@Controller({ path: 'api/v1/audit-events' })
export class AuditEventsController {
  constructor(
    private readonly events: AuditEventsService,
    private readonly endUserIds: EndUserIds,
  ) {}

  @Get()
  @Audited(OPERATION.queryAudit)
  @ApiOperation({
    summary: 'Search the audit log (admin)',
    description:
      'Every partner request leaves events here. Filters combine; results are newest first, a page at a time. ' +
      'Find a partner’s screenshot by `error_id`, a transaction by `reference`.',
  })
  @ApiEnvelopeResponse(200, AuditEventsPageResponseDto)
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.query, 'AUDIT.INVALID_CURSOR', 'AUDIT.INVALID_RANGE')
  async search(@Query() query: AuditEventsQueryDto): Promise<AuditEventsPageResponseDto> {
    const page = await this.events.search(
      {
        reference: query.reference,
        errorId: query.error_id,
        customerId: query.customer_id,
        operation: query.operation,
        phase: query.outcome,
        clientId:
          query.end_user === undefined ? query.client : this.endUserIds.pseudonymOf(query.end_user, { issuer: query.end_user_issuer, client: query.client }),
        from: query.from === undefined ? undefined : new Date(query.from),
        to: query.to === undefined ? undefined : new Date(query.to),
      },
      query.limit ?? DEFAULT_PAGE,
      query.cursor,
    );
    return AuditEventsPageResponseDto.from(page);
  }

  @Get(':id')
  @Audited(OPERATION.queryAudit)
  @ApiOperation({ summary: 'One audit event (admin)', description: 'The event with this id, as listed by the search.' })
  @ApiEnvelopeResponse(200, AuditEventResponseDto)
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.query, 'AUDIT.EVENT_NOT_FOUND')
  async get(@Param() params: AuditEventIdParamDto): Promise<AuditEventResponseDto> {
    return AuditEventResponseDto.from(await this.events.get(params.id));
  }
}
