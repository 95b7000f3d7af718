import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { BANK_ACCOUNT_CURRENCIES, BankAccount } from '../domain/bank-account.gateway.port';

@ApiSchema({ name: 'BankAccount' })
export class BankAccountResponseDto {
  @ApiProperty({ description: 'The provider’s account id.', example: '0f9b5c2e-8d1a-4c3b-9e7f-6a5d4c3b2a19' })
  readonly id!: string;

  @ApiProperty({ format: 'uuid', example: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44' })
  readonly customer_id!: string;

  @ApiProperty({ enum: BANK_ACCOUNT_CURRENCIES, example: 'EUR' })
  readonly currency!: string;

  @ApiProperty({
    format: 'uuid',
    description: 'The transaction reference (yours, or the one generated for you).',
    example: '7d0c1f6e-5a43-4c1e-9b2a-2f6d8e0b9c11',
  })
  readonly reference!: string;

  @ApiProperty({ description: 'As the provider reports it.', example: 'active' })
  readonly status!: string;

  @ApiPropertyOptional({ description: 'EUR accounts.', example: 'DE89370400440532013000' })
  readonly iban?: string;

  @ApiPropertyOptional({ description: 'GBP accounts: six digits, as the provider formats them.', example: '04-00-04' })
  readonly sort_code?: string;

  @ApiPropertyOptional({ description: 'GBP accounts: eight digits.', example: '12345678' })
  readonly account_number?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the service recorded the account: on reads (GET), not in the answer that opened it.',
    example: '2026-12-02T09:30:00.123456Z',
  })
  readonly created_at?: string;

  static from(account: BankAccount & { readonly createdAt?: string }): BankAccountResponseDto {
    return {
      id: account.id,
      customer_id: account.customerId,
      currency: account.currency,
      reference: account.reference,
      status: account.status,
      ...(account.iban ? { iban: account.iban } : {}),
      ...(account.sortCode ? { sort_code: account.sortCode } : {}),
      ...(account.accountNumber ? { account_number: account.accountNumber } : {}),
      ...(account.createdAt ? { created_at: account.createdAt } : {}),
    };
  }
}
