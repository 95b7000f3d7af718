import { Injectable } from '@nestjs/common';
import { CreatedCustomer, CustomerGateway, NewCustomer } from '../customers/domain/customer.gateway.port';
import { UpstreamHttpClient } from './upstream-http.client';
import { UpstreamResponseMapper } from './upstream-response.mapper';

@Injectable()
export class UpstreamCustomerAdapter extends CustomerGateway {
  constructor(private readonly client: UpstreamHttpClient) {
    super();
  }

  async create(customer: NewCustomer): Promise<CreatedCustomer> {
    const reply = await this.client.post('customer.create', '/api/v1/customer', {
      reference: customer.reference,
      first_name: customer.firstName,
      last_name: customer.lastName,
      email: customer.email,
      phone_number: customer.phoneNumber,
      ...(customer.dateOfBirth !== undefined ? { date_of_birth: customer.dateOfBirth } : {}),
      ...(customer.country !== undefined ? { country: customer.country } : {}),
    });
    const fields = new UpstreamResponseMapper(reply, 'POST');
    return { customerId: fields.string('id', 'customer_id'), reference: customer.reference };
  }
}
