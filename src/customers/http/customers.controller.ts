import { OPERATION } from '../../common/domain/audit-operations';
import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Audited } from '../../common/http/audited.decorator';
import type { AuthenticatedClient } from '../../auth/domain/api-client';
import { CurrentClient, Roles } from '../../auth/http/auth.decorators';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../common/http/api-envelope.decorators';
import { markReplayed } from '../../common/http/replay-header';
import { fromWire } from '../../common/domain/field-map';
import { CUSTOMER_FIELDS } from '../domain/customer.gateway.port';
import { CustomerRequest, CustomersService } from '../domain/customers.service';
import { CreateCustomerRequestDto } from './create-customer.request.dto';
import { CustomerResponseDto } from './customer.response.dto';

@ApiTags('customers')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1/customers' })
export class CustomersController {
  constructor(private readonly customers: CustomersService) {}

  @Post()
  @HttpCode(201)
  @Audited(OPERATION.createCustomer)
  @ApiOperation({
    summary: 'Create a customer',
    description:
      'Creates the customer at the provider; it then belongs to your tenant. `reference` is the idempotency key: ' +
      'sending the same body again returns the first result with `Idempotent-Replayed: true` and calls nothing.',
  })
  @ApiEnvelopeResponse(201, CustomerResponseDto, { message: 'Customer created' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.body, ERRORS.providerRead, ERRORS.providerWrite)
  async create(
    @CurrentClient() client: AuthenticatedClient,
    @Body() body: CreateCustomerRequestDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<CustomerResponseDto> {
    const result = await this.customers.create(client, fromWire<CustomerRequest>(CUSTOMER_FIELDS, body));
    return CustomerResponseDto.from(markReplayed(reply, result));
  }
}
