import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Balance } from '../domain/balance.gateway.port';

@ApiSchema({ name: 'Balance' })
export class BalanceResponseDto {
  @ApiProperty({ format: 'uuid', example: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44' })
  readonly customer_id!: string;

  @ApiProperty({ description: 'ISO 4217 currency code.', example: 'EUR' })
  readonly currency!: string;

  @ApiProperty({ description: 'Available balance as a decimal string (never a float).', example: '1250.00' })
  readonly available!: string;

  @ApiProperty({ description: 'Ledger balance as a decimal string.', example: '1300.00' })
  readonly current!: string;

  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'When the provider computed it, when it says.',
    example: '2026-11-21T09:00:00Z',
  })
  readonly as_of!: string | null;

  static from(balance: Balance): BalanceResponseDto {
    return { customer_id: balance.customerId, currency: balance.currency, available: balance.available, current: balance.current, as_of: balance.asOf };
  }
}
