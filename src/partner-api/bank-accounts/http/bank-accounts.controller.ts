import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Audited } from '../../../common/http/audited.decorator';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CurrentClient, EndUsers, Roles } from '../../../auth/http/auth.decorators';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { markReplayed } from '../../../common/http/replay-header';
import { fromWire } from '../../../common/domain/field-map';
import { BANK_ACCOUNT_FIELDS } from '../domain/bank-account.gateway.port';
import { BANK_ACCOUNT_OPERATIONS, BANK_ACCOUNT_SCOPES, BankAccountRequest, BankAccountsService } from '../domain/bank-accounts.service';
import { BankAccountResponseDto } from './bank-account.response.dto';
import { OpenBankAccountRequestDto } from './open-bank-account.request.dto';

@ApiTags('bank-accounts')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1/bank-accounts' })
export class BankAccountsController {
  constructor(private readonly accounts: BankAccountsService) {}

  @Post()
  @HttpCode(201)
  @Audited(BANK_ACCOUNT_OPERATIONS.open, { receipt: true })
  @EndUsers(BANK_ACCOUNT_SCOPES.open)
  @ApiOperation({
    operationId: 'openBankAccount',
    summary: 'Open an EUR or GBP bank account',
    description:
      `For a customer of your tenant (an end user: one of their own, with the \`${BANK_ACCOUNT_SCOPES.open}\` scope). Every` +
      ' field is checked before anything is sent, the document expiry rule above all ' +
      '(`expiration_date` at least one calendar month from today, UTC). `reference` is the idempotency key: the same body ' +
      'again returns the first result with `Idempotent-Replayed: true`; a different body with a used reference is 422.',
  })
  @ApiEnvelopeResponse(201, BankAccountResponseDto, { message: 'Bank account created', receipt: true })
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.body, 'CUSTOMER.NOT_FOUND', ERRORS.providerRead, ERRORS.providerWrite)
  async open(
    @CurrentClient() client: AuthenticatedClient,
    @Body() body: OpenBankAccountRequestDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<BankAccountResponseDto> {
    const result = await this.accounts.open(client, fromWire<BankAccountRequest>(BANK_ACCOUNT_FIELDS, body));
    return BankAccountResponseDto.from(markReplayed(reply, result));
  }
}
