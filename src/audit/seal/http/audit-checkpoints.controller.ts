import { OPERATION } from '../../../common/domain/audit-operations';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Roles, Staff } from '../../../auth/http/auth.decorators';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { Audited } from '../../../common/http/audited.decorator';
import { AuditSealStore } from '../domain/audit-seal.port';
import { AuditCheckpointResponseDto, AuditCheckpointsQueryDto, AuditCheckpointsResponseDto } from './audit-checkpoints.dto';

const DEFAULT_COUNT = 10;

@ApiTags('audit')
@ApiBearerAuth()
@Roles('admin')
@Staff('compliance')
@Controller({ path: 'api/v1/audit-checkpoints' })
export class AuditCheckpointsController {
  constructor(private readonly store: AuditSealStore) {}

  @Get()
  @Audited(OPERATION.queryAudit)
  @ApiOperation({
    operationId: 'listAuditCheckpoints',
    summary: 'The newest signed checkpoints of the audit log (admin)',
    description:
      'Every second, new audit events are bound into a signed hash chain. Each checkpoint names the previous one’s head; ' +
      'kept outside the database, they let `npm run audit:verify` prove that nothing was changed, removed or added since.',
  })
  @ApiEnvelopeResponse(200, AuditCheckpointsResponseDto)
  @ApiErrorResponses(ERRORS.edge, ERRORS.staff, ERRORS.query)
  async newest(@Query() query: AuditCheckpointsQueryDto): Promise<AuditCheckpointsResponseDto> {
    const checkpoints = await this.store.newestCheckpoints(query.limit ?? DEFAULT_COUNT);
    return { checkpoints: checkpoints.map((checkpoint) => AuditCheckpointResponseDto.from(checkpoint)) };
  }
}
