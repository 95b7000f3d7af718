import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../../common/http/audited.decorator';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CurrentClient, EndUsers, Roles } from '../../../auth/http/auth.decorators';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { BALANCE_OPERATIONS, BALANCE_SCOPES, BalancesService } from '../domain/balances.service';
import { CustomerIdParamDto } from '../../../common/http/customer-id.param.dto';
import { BalanceResponseDto } from './balance.response.dto';

@ApiTags('balances')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1/customers' })
export class BalancesController {
  constructor(private readonly balances: BalancesService) {}

  @Get(':customer_id/balance')
  @Audited(BALANCE_OPERATIONS.read)
  @EndUsers(BALANCE_SCOPES.read)
  @ApiOperation({
    operationId: 'getBalance',
    summary: 'Read a customer’s balance',
    description: `Only for customers of your tenant, and for an end user only their own; anyone else’s is 404. End users need the \`${BALANCE_SCOPES.read}\` scope.`,
  })
  @ApiEnvelopeResponse(200, BalanceResponseDto, { message: 'Balance retrieved' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'CUSTOMER.NOT_FOUND', ERRORS.providerRead)
  async read(@CurrentClient() client: AuthenticatedClient, @Param() params: CustomerIdParamDto): Promise<BalanceResponseDto> {
    return BalanceResponseDto.from(await this.balances.read(client, params.customer_id));
  }
}
