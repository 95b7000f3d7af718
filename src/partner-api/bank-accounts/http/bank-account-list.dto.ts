import { ApiProperty, ApiPropertyOptional, ApiSchema, PickType } from '@nestjs/swagger';
import { BankAccountResponseDto } from './bank-account.response.dto';
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

/** An account as a list shows it: the fields of a read (BankAccount) but its identifiers, and their last four. */
@ApiSchema({ name: 'BankAccountSummary' })
export class BankAccountSummaryDto extends PickType(BankAccountResponseDto, ['id', 'customer_id', 'currency', 'reference', 'status'] as const) {
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
