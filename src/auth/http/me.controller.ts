import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedClient } from '../domain/api-client';
import { CallerResponseDto } from './me.response.dto';
import { CurrentClient, EndUsers } from './auth.decorators';
import { OPERATION } from '../../common/domain/audit-operations';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../common/http/api-envelope.decorators';
import { Audited } from '../../common/http/audited.decorator';
import { EndUserCustomers } from '../domain/end-user-customers.port';

@ApiTags('clients')
@ApiBearerAuth()
@Controller({ path: 'api/v1' })
export class MeController {
  constructor(private readonly customers: EndUserCustomers) {}

  @Get('me')
  @Audited(OPERATION.readClient)
  @EndUsers()
  @ApiOperation({
    operationId: 'getCaller',
    summary: 'Who the token belongs to',
    description:
      'A quick way to check a token. For an end user: their tenant, the scopes their token grants and their customers, ' +
      'so that an app finds its customer after login. Needs no scope.',
  })
  @ApiEnvelopeResponse(200, CallerResponseDto)
  @ApiErrorResponses(ERRORS.edge, 'AUTH.TOKEN_MISSING', 'AUTH.INVALID_TOKEN', 'AUTH.DPOP_REQUIRED', 'AUTH.INVALID_DPOP_PROOF', 'AUTH.ISSUER_UNAVAILABLE')
  async me(@CurrentClient() caller: AuthenticatedClient): Promise<CallerResponseDto> {
    const customers = caller.role === 'end_user' ? await this.customers.customersOf(caller.tenant, caller.id) : undefined;
    return CallerResponseDto.from(caller, customers);
  }
}
