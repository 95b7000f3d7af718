import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { CreatedCustomer } from '../domain/customer.gateway.port';

@ApiSchema({ name: 'Customer' })
export class CustomerResponseDto {
  @ApiProperty({
    format: 'uuid',
    description: 'The provider’s customer id: use it for balances and bank accounts.',
    example: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44',
  })
  readonly customer_id!: string;

  @ApiProperty({
    format: 'uuid',
    description: 'The transaction reference (yours, or the one generated for you).',
    example: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b',
  })
  readonly reference!: string;

  static from(customer: CreatedCustomer): CustomerResponseDto {
    return { customer_id: customer.customerId, reference: customer.reference };
  }
}
