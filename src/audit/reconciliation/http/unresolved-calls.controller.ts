import { OPERATION } from '../../../common/domain/audit-operations';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Roles, Staff } from '../../../auth/http/auth.decorators';
import { parseDuration } from '../../../common/domain/duration';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { Audited } from '../../../common/http/audited.decorator';
import { UnresolvedCalls } from '../domain/unresolved-calls.service';
import { UnresolvedCallsQueryDto, UnresolvedCallsResponseDto } from './unresolved-calls.dto';

const DEFAULT_PAGE = 100;

@ApiTags('audit')
@ApiBearerAuth()
@Roles('admin')
@Staff('support', 'operator')
@Controller({ path: 'api/v1/unresolved-calls' })
export class UnresolvedCallsController {
  constructor(private readonly unresolved: UnresolvedCalls) {}

  @Get()
  @Audited(OPERATION.queryAudit)
  @ApiOperation({
    operationId: 'listUnresolvedCalls',
    summary: 'Calls whose outcome at the provider is unknown (admin)',
    description:
      'Customer creations and account openings that may have reached the provider without the gateway learning the answer: ' +
      'the gateway stopped mid-call (`no_outcome`), or the provider did not answer in time (`unknown`), and no later request with the ' +
      'same reference succeeded. Newest first. The same list as `npm run audit:reconcile`; docs/operations.md says how to settle each.',
  })
  @ApiEnvelopeResponse(200, UnresolvedCallsResponseDto)
  @ApiErrorResponses(ERRORS.edge, ERRORS.staff, ERRORS.query, 'AUDIT.INVALID_CURSOR', 'AUDIT.INVALID_RANGE')
  async list(@Query() query: UnresolvedCallsQueryDto): Promise<UnresolvedCallsResponseDto> {
    const page = await this.unresolved.page(
      {
        olderThanMs: query.older_than === undefined ? undefined : parseDuration(query.older_than),
        sinceMs: query.since === undefined ? undefined : parseDuration(query.since),
      },
      query.limit ?? DEFAULT_PAGE,
      query.cursor,
    );
    return UnresolvedCallsResponseDto.from(page);
  }
}
