import { CUSTOMER_OPERATIONS } from '../domain/customers.service';
import { Injectable } from '@nestjs/common';
import { toWire } from '../../../common/domain/field-map';
import { CreatedCustomer, CUSTOMER_FIELDS, CustomerGateway, NewCustomer } from '../domain/customer.gateway.port';
import { UpstreamHttpClient } from '../../../upstream/upstream-http.client';
import { UpstreamResponseMapper } from '../../../upstream/upstream-response.mapper';

/** The provider's customer body: exactly what is sealed and sent. */
export function customerPayload(customer: NewCustomer): Record<string, unknown> & { reference: string } {
  return { ...toWire(CUSTOMER_FIELDS, customer), reference: customer.reference };
}

@Injectable()
export class ProviderCustomerAdapter extends CustomerGateway {
  constructor(private readonly client: UpstreamHttpClient) {
    super();
  }

  async create(customer: NewCustomer): Promise<CreatedCustomer> {
    const reply = await this.client.post(CUSTOMER_OPERATIONS.create, '/api/v1/customer', customerPayload(customer));
    const fields = new UpstreamResponseMapper(reply, 'POST');
    return { customerId: fields.string('id', 'customer_id'), reference: customer.reference };
  }
}
