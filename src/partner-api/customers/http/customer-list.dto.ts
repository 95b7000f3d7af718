import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { NextCursorDto } from '../../../common/http/list-query.dto';
import type { CustomerRecord } from '../domain/customer-directory.port';
import type { CustomerListing } from '../domain/customers.service';

@ApiSchema({ name: 'CustomerDetails' })
export class CustomerDetailsDto {
  @ApiProperty({ format: 'uuid', description: 'The provider’s customer id.', example: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44' })
  readonly customer_id!: string;

  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'The reference it was created with; null for a customer linked to your tenant by an operator.',
    example: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b',
  })
  readonly reference!: string | null;

  @ApiProperty({ format: 'date-time', description: 'When it became your tenant’s.', example: '2026-12-02T09:30:00.123456Z' })
  readonly created_at!: string;

  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'The end user it belongs to (their pseudonym, the `id` of GET /api/v1/me); null: your servers only.',
    example: null,
  })
  readonly end_user_id!: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    pattern: '^[A-Z]{2}$',
    description: 'The country you sent. No other field you sent is kept: names, email, phone and date of birth go to the provider only.',
    example: 'DE',
  })
  readonly country!: string | null;

  @ApiProperty({
    type: [String],
    description:
      'Its bank accounts’ ids, oldest first, the first 1,000 (GET /api/v1/bank-accounts?customer_id= pages through all; GET /api/v1/bank-accounts/{id} reads one).',
    example: ['0f9b5c2e-8d1a-4c3b-9e7f-6a5d4c3b2a19'],
  })
  readonly bank_account_ids!: string[];

  static from(customer: CustomerRecord): CustomerDetailsDto {
    return {
      customer_id: customer.customerId,
      reference: customer.reference ?? null,
      created_at: customer.createdAt,
      end_user_id: customer.endUser ?? null,
      country: customer.country ?? null,
      bank_account_ids: [...customer.bankAccountIds],
    };
  }
}

@ApiSchema({ name: 'CustomerList' })
export class CustomerListDto extends NextCursorDto {
  @ApiProperty({ type: [CustomerDetailsDto], description: 'Newest first.' })
  readonly customers!: CustomerDetailsDto[];

  static from(listing: CustomerListing): CustomerListDto {
    return { customers: listing.customers.map((customer) => CustomerDetailsDto.from(customer)), next_cursor: listing.nextCursor ?? null };
  }
}
