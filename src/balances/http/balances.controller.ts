import { OPERATION } from '../../common/domain/audit-operations';
import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../common/http/audited.decorator';
import type { AuthenticatedClient } from '../../auth/domain/api-client';
import { CurrentClient, EndUsers, Roles } from '../../auth/http/auth.decorators';
import { SCOPES } from '../../auth/domain/scopes';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../common/http/api-envelope.decorators';
import { BalancesService } from '../domain/balances.service';
import { CustomerIdParamDto } from '../../common/http/customer-id.param.dto';
import { BalanceResponseDto } from './balance.response.dto';

@ApiTags('balances')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1/customers' })
export class BalancesController {
  constructor(private readonly balances: BalancesService) {}

  @Get(':customer_id/balance')
  @Audited(OPERATION.readBalance)
  @EndUsers(SCOPES.readBalance)
  @ApiOperation({
    summary: 'Read a customer’s balance',
    description: `Only for customers of your tenant, and for an end user only their own; anyone else’s is 404. End users need the \`${SCOPES.readBalance}\` scope.`,
  })
  @ApiEnvelopeResponse(200, BalanceResponseDto, { message: 'Balance retrieved' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'CUSTOMER.NOT_FOUND', ERRORS.providerRead)
  async read(@CurrentClient() client: AuthenticatedClient, @Param() params: CustomerIdParamDto): Promise<BalanceResponseDto> {
    return BalanceResponseDto.from(await this.balances.read(client, params.customer_id));
  }
}
