import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { IsUuidField } from '../../../common/http/field-rules';
import { ListQueryDto, NextCursorDto } from '../../../common/http/list-query.dto';
import { BANK_ACCOUNT_CURRENCIES, type BankAccountCurrency } from '../domain/bank-account.gateway.port';
import type { ListedBankAccount } from '../domain/bank-account-records.port';
import type { BankAccountListing } from '../domain/bank-accounts.service';

export class BankAccountListQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only this customer’s accounts (404 when the customer is not yours).' })
  @IsOptional()
  @IsUuidField('customer_id must be a UUID')
  readonly customer_id?: string;

  @ApiPropertyOptional({ enum: BANK_ACCOUNT_CURRENCIES, description: 'Only accounts in this currency.' })
  @IsOptional()
  @IsIn(BANK_ACCOUNT_CURRENCIES, { message: 'currency must be EUR or GBP' })
  readonly currency?: BankAccountCurrency;
}

@ApiSchema({ name: 'BankAccountSummary' })
export class BankAccountSummaryDto {
  @ApiProperty({ description: 'The provider’s account id.', example: '0f9b5c2e-8d1a-4c3b-9e7f-6a5d4c3b2a19' })
  readonly id!: string;

  @ApiProperty({ format: 'uuid', example: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44' })
  readonly customer_id!: string;

  @ApiProperty({ enum: BANK_ACCOUNT_CURRENCIES, example: 'EUR' })
  readonly currency!: string;

  @ApiProperty({ format: 'uuid', description: 'The reference the account was opened with.', example: '7d0c1f6e-5a43-4c1e-9b2a-2f6d8e0b9c11' })
  readonly reference!: string;

  @ApiProperty({ description: 'As the provider reported it when the account was opened.', example: 'active' })
  readonly status!: string;

  @ApiProperty({ format: 'date-time', description: 'When the service recorded the account.', example: '2026-12-02T09:30:00.123456Z' })
  readonly created_at!: string;

  @ApiProperty({
    description: 'The last four characters of the IBAN (EUR) or of the account number (GBP): a list never shows more. Read the account for them in full.',
    pattern: '^[A-Za-z0-9]{0,4}$',
    example: '3000',
  })
  readonly last4!: string;

  static from(account: ListedBankAccount): BankAccountSummaryDto {
    return {
      id: account.id,
      customer_id: account.customerId,
      currency: account.currency,
      reference: account.reference,
      status: account.status,
      created_at: account.createdAt,
      last4: account.last4,
    };
  }
}

@ApiSchema({ name: 'BankAccountList' })
export class BankAccountListDto extends NextCursorDto {
  @ApiProperty({ type: [BankAccountSummaryDto], description: 'Newest first.' })
  readonly bank_accounts!: BankAccountSummaryDto[];

  static from(listing: BankAccountListing): BankAccountListDto {
    return { bank_accounts: listing.accounts.map((account) => BankAccountSummaryDto.from(account)), next_cursor: listing.nextCursor ?? null };
  }
}
