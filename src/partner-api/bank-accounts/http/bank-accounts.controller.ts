import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
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
import { BankAccountListDto, BankAccountListQueryDto } from './bank-account-list.dto';
import { BankAccountIdParamDto } from '../../../common/http/bank-account-id.param.dto';
import { createdRange, DEFAULT_LIST_PAGE } from '../../../common/http/list-query.dto';

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

  @Get()
  @Audited(BANK_ACCOUNT_OPERATIONS.list)
  @EndUsers(BANK_ACCOUNT_SCOPES.read)
  @ApiOperation({
    operationId: 'listBankAccounts',
    summary: 'List your bank accounts',
    description:
      'The accounts this service recorded as opened for your tenant’s customers (an end user: for their own, with the ' +
      `\`${BANK_ACCOUNT_SCOPES.read}\` scope), newest first, a page at a time: follow \`next_cursor\` until it is null. ` +
      'Identifiers are masked to their last four characters; read one account for them in full. ' +
      'A `customer_id` that is not yours is 404, never an empty list.',
  })
  @ApiEnvelopeResponse(200, BankAccountListDto, { message: 'Bank accounts listed' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'CUSTOMER.NOT_FOUND', 'AUDIT.INVALID_CURSOR', 'AUDIT.INVALID_RANGE')
  async list(@CurrentClient() client: AuthenticatedClient, @Query() query: BankAccountListQueryDto): Promise<BankAccountListDto> {
    const listing = await this.accounts.list(
      client,
      { customerId: query.customer_id?.toLowerCase(), currency: query.currency, ...createdRange(query) },
      query.limit ?? DEFAULT_LIST_PAGE,
      query.cursor,
    );
    return BankAccountListDto.from(listing);
  }

  @Get(':id')
  @Audited(BANK_ACCOUNT_OPERATIONS.read)
  @EndUsers(BANK_ACCOUNT_SCOPES.read)
  @ApiOperation({
    operationId: 'getBankAccount',
    summary: 'Read a bank account',
    description:
      'One account opened through this service, its identifiers (IBAN, or sort code and account number) in full. ' +
      `Another tenant’s account, or another end user’s, is 404. End users need the \`${BANK_ACCOUNT_SCOPES.read}\` scope.`,
  })
  @ApiEnvelopeResponse(200, BankAccountResponseDto, { message: 'Bank account retrieved' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'BANK_ACCOUNT.NOT_FOUND')
  async read(@CurrentClient() client: AuthenticatedClient, @Param() params: BankAccountIdParamDto): Promise<BankAccountResponseDto> {
    return BankAccountResponseDto.from(await this.accounts.read(client, params.id));
  }
}
