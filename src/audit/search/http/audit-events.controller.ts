import { OPERATION } from '../../../common/domain/audit-operations';
import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { Roles, Staff } from '../../../auth/http/auth.decorators';
import { EndUserIds } from '../../../auth/domain/end-user-ids';
import { AuditEventsService } from '../domain/audit-events.service';
import { AuditEventIdParamDto, AuditEventReadQueryDto, AuditEventsQueryDto, requireReason } from './audit-events.request.dto';
import { AuditEventResponseDto, AuditEventsPageResponseDto } from './audit-event.response.dto';
import { Audited } from '../../../common/http/audited.decorator';
import { currentRecord } from '../../../common/domain/request-record';

const DEFAULT_PAGE = 50;

@ApiTags('audit')
@ApiBearerAuth()
@Roles('admin')
@Staff('support', 'compliance')
@Controller({ path: 'api/v1/audit-events' })
export class AuditEventsController {
  constructor(
    private readonly events: AuditEventsService,
    private readonly endUserIds: EndUserIds,
  ) {}

  @Get()
  @Audited(OPERATION.queryAudit)
  @ApiOperation({
    operationId: 'listAuditEvents',
    summary: 'Search the audit log (support, compliance)',
    description:
      'Every partner request leaves events here. Filters combine; results are newest first, a page at a time. ' +
      'Find a partner’s screenshot by `error_id`, a transaction by `reference`. Staff say why at every search (`reason`), ' +
      'and anyone searching about a customer, an end user or a reference: the search is recorded with it, and with who made it.',
  })
  @ApiEnvelopeResponse(200, AuditEventsPageResponseDto)
  @ApiErrorResponses(ERRORS.edge, ERRORS.staff, ERRORS.query, 'AUDIT.INVALID_CURSOR', 'AUDIT.INVALID_RANGE')
  async search(@Query() query: AuditEventsQueryDto): Promise<AuditEventsPageResponseDto> {
    const record = currentRecord();
    requireReason(query, record.client?.role);
    // The search's own event says what it looked at and why: the access report reads it.
    record.noteSubject({ reference: query.reference?.toLowerCase(), customerId: query.customer_id?.toLowerCase() });
    if (query.reason !== undefined) record.noteAccessReason(query.reason.trim());
    const page = await this.events.search(
      {
        reference: query.reference,
        errorId: query.error_id,
        customerId: query.customer_id,
        operation: query.operation,
        phase: query.outcome,
        staffId: query.staff,
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
  @ApiOperation({
    operationId: 'getAuditEvent',
    summary: 'One audit event (support, compliance)',
    description: 'The event with this id, as listed by the search. Staff say why (`reason`).',
  })
  @ApiEnvelopeResponse(200, AuditEventResponseDto)
  @ApiErrorResponses(ERRORS.edge, ERRORS.staff, ERRORS.query, 'AUDIT.EVENT_NOT_FOUND')
  async get(@Param() params: AuditEventIdParamDto, @Query() query: AuditEventReadQueryDto): Promise<AuditEventResponseDto> {
    const record = currentRecord();
    requireReason(query, record.client?.role);
    if (query.reason !== undefined) record.noteAccessReason(query.reason.trim());
    const event = await this.events.get(params.id);
    // What it looked at: the event's customer and reference, for the access report.
    record.noteSubject({ reference: event.reference, customerId: event.customerId });
    return AuditEventResponseDto.from(event);
  }
}
