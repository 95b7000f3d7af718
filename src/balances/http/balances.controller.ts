import { OPERATION } from '../../common/domain/audit-operations';
import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../common/http/audited.decorator';
import type { AuthenticatedClient } from '../../auth/domain/api-client';
import { CurrentClient, Roles } from '../../auth/http/auth.decorators';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../common/http/api-envelope.decorators';
import { BalancesService } from '../domain/balances.service';
import { BalanceResponseDto, CustomerIdParamDto } from './balance.response.dto';

@ApiTags('balances')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1/customers' })
export class BalancesController {
  constructor(private readonly balances: BalancesService) {}

  @Get(':customer_id/balance')
  @Audited(OPERATION.readBalance)
  @ApiOperation({ summary: 'Read a customer’s balance', description: 'Only for customers of your tenant; anyone else’s is 404.' })
  @ApiEnvelopeResponse(200, BalanceResponseDto, { message: 'Balance retrieved' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.query, 'CUSTOMER.NOT_FOUND', ERRORS.providerRead)
  async read(@CurrentClient() client: AuthenticatedClient, @Param() params: CustomerIdParamDto): Promise<BalanceResponseDto> {
    return BalanceResponseDto.from(await this.balances.read(client, params.customer_id));
  }
}
