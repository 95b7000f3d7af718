import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { Audited } from '../../../common/http/audited.decorator';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CurrentClient, EndUsers, Roles } from '../../../auth/http/auth.decorators';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { BALANCE_OPERATIONS, BALANCE_SCOPES, BalancesService } from '../domain/balances.service';
import { CustomerIdParamDto } from '../../../common/http/customer-id.param.dto';
import { BANK_ACCOUNT_CURRENCIES, type BankAccountCurrency } from '../../bank-accounts/domain/bank-account.gateway.port';
import { BankAccountIdParamDto } from '../../../common/http/bank-account-id.param.dto';
import { BalanceResponseDto } from './balance.response.dto';

export class BalanceQueryDto {
  @ApiPropertyOptional({
    enum: BANK_ACCOUNT_CURRENCIES,
    description:
      'The balance in this currency, asked of the provider (which reads balances per customer); an answer in another currency is 404 `BALANCE.NOT_FOUND`, never shown. Unset: the currency the provider chooses, which the answer says.',
  })
  @IsOptional()
  @IsIn(BANK_ACCOUNT_CURRENCIES, { message: 'currency must be EUR or GBP' })
  readonly currency?: BankAccountCurrency;
}

@ApiTags('balances')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1' })
export class BalancesController {
  constructor(private readonly balances: BalancesService) {}

  @Get('customers/:customer_id/balance')
  @Audited(BALANCE_OPERATIONS.read)
  @EndUsers(BALANCE_SCOPES.read)
  @ApiOperation({
    operationId: 'getBalance',
    summary: 'Read a customer’s balance',
    description:
      `Only for customers of your tenant, and for an end user only their own; anyone else’s is 404. End users need the \`${BALANCE_SCOPES.read}\` scope. ` +
      'With `currency`, the balance in that currency, or 404 `BALANCE.NOT_FOUND` when the provider has none in it.',
  })
  @ApiEnvelopeResponse(200, BalanceResponseDto, { message: 'Balance retrieved' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'CUSTOMER.NOT_FOUND', 'BALANCE.NOT_FOUND', ERRORS.providerRead)
  async read(@CurrentClient() client: AuthenticatedClient, @Param() params: CustomerIdParamDto, @Query() query: BalanceQueryDto): Promise<BalanceResponseDto> {
    return BalanceResponseDto.from(await this.balances.read(client, params.customer_id, query.currency));
  }

  @Get('bank-accounts/:id/balance')
  @Audited(BALANCE_OPERATIONS.readAccount)
  @EndUsers(BALANCE_SCOPES.read)
  @ApiOperation({
    operationId: 'getBankAccountBalance',
    summary: 'Read a bank account’s balance',
    description:
      'The balance of the account’s customer in the account’s currency, as the provider reads it (per customer; 404 `BALANCE.NOT_FOUND` when its answer is in another currency). ' +
      `Another tenant’s account, or another end user’s, is 404. End users need the \`${BALANCE_SCOPES.read}\` scope.`,
  })
  @ApiEnvelopeResponse(200, BalanceResponseDto, { message: 'Balance retrieved' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'BANK_ACCOUNT.NOT_FOUND', 'BALANCE.NOT_FOUND', ERRORS.providerRead)
  async readAccount(@CurrentClient() client: AuthenticatedClient, @Param() params: BankAccountIdParamDto): Promise<BalanceResponseDto> {
    return BalanceResponseDto.from(await this.balances.readAccount(client, params.id));
  }
}
