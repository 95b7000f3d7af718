import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { EndUserIds } from '../../../auth/domain/end-user-ids';
import { CustomerIdParamDto } from '../../../common/http/customer-id.param.dto';
import { BindCustomerRequestDto, BoundCustomerResponseDto } from './bind-customer.dto';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Audited } from '../../../common/http/audited.decorator';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CurrentClient, EndUsers, Roles } from '../../../auth/http/auth.decorators';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { markReplayed } from '../../../common/http/replay-header';
import { fromWire } from '../../../common/domain/field-map';
import { CUSTOMER_FIELDS } from '../domain/customer.gateway.port';
import { CUSTOMER_OPERATIONS, CUSTOMER_SCOPES, CustomerRequest, CustomersService } from '../domain/customers.service';
import { CreateCustomerRequestDto } from './create-customer.request.dto';
import { CustomerResponseDto } from './customer.response.dto';
import { CustomerDetailsDto, CustomerListDto } from './customer-list.dto';
import { createdRange, DEFAULT_LIST_PAGE, ListQueryDto } from '../../../common/http/list-query.dto';

@ApiTags('customers')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1/customers' })
export class CustomersController {
  constructor(
    private readonly customers: CustomersService,
    private readonly endUserIds: EndUserIds,
  ) {}

  @Post()
  @HttpCode(201)
  @Audited(CUSTOMER_OPERATIONS.create, { receipt: true })
  @EndUsers(CUSTOMER_SCOPES.create)
  @ApiOperation({
    operationId: 'createCustomer',
    summary: 'Create a customer',
    description:
      'Creates the customer at the provider; it then belongs to your tenant, and when an end user creates it, to them ' +
      `(their token needs the \`${CUSTOMER_SCOPES.create}\` scope). \`reference\` is the idempotency key: ` +
      'sending the same body again returns the first result with `Idempotent-Replayed: true` and calls nothing.',
  })
  @ApiEnvelopeResponse(201, CustomerResponseDto, { message: 'Customer created', receipt: true })
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.body, ERRORS.providerRead, ERRORS.providerWrite)
  async create(
    @CurrentClient() client: AuthenticatedClient,
    @Body() body: CreateCustomerRequestDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<CustomerResponseDto> {
    const result = await this.customers.create(client, fromWire<CustomerRequest>(CUSTOMER_FIELDS, body));
    return CustomerResponseDto.from(markReplayed(reply, result));
  }
  @Post(':customer_id/end-user')
  @HttpCode(200)
  @Audited(CUSTOMER_OPERATIONS.bind, { receipt: true })
  @ApiOperation({
    operationId: 'assignCustomer',
    summary: 'Give a customer to an end user (partner servers)',
    description:
      'From then on the end user reaches this customer with their own access token (GET /api/v1/me lists it). ' +
      'A customer belongs to one end user at most: binding it to another is 409. End-user tokens cannot call this.',
  })
  @ApiEnvelopeResponse(200, BoundCustomerResponseDto, { message: 'Customer bound', receipt: true })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.body, 'CUSTOMER.NOT_FOUND', 'CUSTOMER.ALREADY_BOUND')
  async bind(
    @CurrentClient() client: AuthenticatedClient,
    @Param() params: CustomerIdParamDto,
    @Body() body: BindCustomerRequestDto,
  ): Promise<BoundCustomerResponseDto> {
    // Only an issuer of the partner's own tenant: a binding to another tenant's end user could never be used, and would block the right one.
    const endUserId = this.endUserIds.pseudonymOf(body.subject, {
      issuer: body.issuer,
      tenant: client.tenant,
      names: { subject: 'subject', issuer: 'issuer' },
    });
    const binding = await this.customers.bind(client, params.customer_id, endUserId);
    return { customer_id: params.customer_id, end_user_id: endUserId, binding };
  }

  @Get()
  @Audited(CUSTOMER_OPERATIONS.list)
  @EndUsers(CUSTOMER_SCOPES.read)
  @ApiOperation({
    operationId: 'listCustomers',
    summary: 'List your customers',
    description:
      'Your tenant’s customers (an end user: their own, with the ' +
      `\`${CUSTOMER_SCOPES.read}\` scope), newest first, a page at a time: follow \`next_cursor\` until it is null.`,
  })
  @ApiEnvelopeResponse(200, CustomerListDto, { message: 'Customers listed' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'AUDIT.INVALID_CURSOR', 'AUDIT.INVALID_RANGE')
  async list(@CurrentClient() client: AuthenticatedClient, @Query() query: ListQueryDto): Promise<CustomerListDto> {
    return CustomerListDto.from(await this.customers.list(client, createdRange(query), query.limit ?? DEFAULT_LIST_PAGE, query.cursor));
  }

  @Get(':customer_id')
  @Audited(CUSTOMER_OPERATIONS.read)
  @EndUsers(CUSTOMER_SCOPES.read)
  @ApiOperation({
    operationId: 'getCustomer',
    summary: 'Read a customer',
    description: `One of your tenant’s customers, with its accounts’ ids. Anyone else’s is 404. End users need the \`${CUSTOMER_SCOPES.read}\` scope.`,
  })
  @ApiEnvelopeResponse(200, CustomerDetailsDto, { message: 'Customer retrieved' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'CUSTOMER.NOT_FOUND')
  async read(@CurrentClient() client: AuthenticatedClient, @Param() params: CustomerIdParamDto): Promise<CustomerDetailsDto> {
    return CustomerDetailsDto.from(await this.customers.read(client, params.customer_id.toLowerCase()));
  }
}
