import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Roles, Staff } from '../../../auth/http/auth.decorators';
import { OPERATION } from '../../../common/domain/audit-operations';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { Audited } from '../../../common/http/audited.decorator';
import { AuditEventsService } from '../domain/audit-events.service';
import { AccessReportQueryDto, AccessReportResponseDto } from './audit-access.dto';

@ApiTags('audit')
@ApiBearerAuth()
@Roles('admin')
@Staff('compliance')
@Controller({ path: 'api/v1/audit-access-report' })
export class AuditAccessController {
  constructor(private readonly events: AuditEventsService) {}

  @Get()
  @Audited(OPERATION.accessReport)
  @ApiOperation({
    operationId: 'getAuditAccessReport',
    summary: 'Who looked at what: the access review’s report (compliance)',
    description:
      'Every search of the audit log answered in the period (a refused one showed nothing), by person (a staff member, or an admin token) and by customer: how many, ' +
      'how many gave a reason, which customers and references. Each search is an `audit.query` event: ' +
      '`GET /api/v1/audit-events?operation=audit.query&staff=<id>` lists one person’s, with their reasons.',
  })
  @ApiEnvelopeResponse(200, AccessReportResponseDto)
  @ApiErrorResponses(ERRORS.edge, ERRORS.staff, ERRORS.query, 'AUDIT.INVALID_RANGE')
  async report(@Query() query: AccessReportQueryDto): Promise<AccessReportResponseDto> {
    const from = new Date(query.from);
    const to = new Date(query.to);
    return AccessReportResponseDto.from(from, to, await this.events.accessReport(from, to));
  }
}
