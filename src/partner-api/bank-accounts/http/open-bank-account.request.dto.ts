import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { utcDate } from '../../../common/domain/calendar-date';
import { IsBeforeDateField, IsPastCalendarDate } from '../../../common/http/date.validators';
import { IsCountryCode, IsPhoneNumber, IsPrintableText, IsUuidField, Rules } from '../../../common/http/field-rules';
import type { SameKeys, WireName } from '../../../common/domain/field-map';
import { BANK_ACCOUNT_CURRENCIES, BANK_ACCOUNT_FIELDS } from '../domain/bank-account.gateway.port';
import type { BankAccountCurrency } from '../domain/bank-account.gateway.port';
import { earliestAcceptedExpiry } from '../domain/document-expiry.rule';
import { IsAcceptedDocumentExpiry } from './document-expiry.validator';

/** A document expiry that passes the rule for years from `now`: the Swagger example, recomputed per request. */
export function exampleDocumentExpiry(now: Date): string {
  const earliest = new Date(`${earliestAcceptedExpiry(now)}T00:00:00Z`);
  return utcDate(new Date(Date.UTC(earliest.getUTCFullYear() + 4, earliest.getUTCMonth(), 1)));
}

/** The provider's bank-account payload (its field table), in its own field names. */
@ApiSchema({ name: 'OpenBankAccountRequest' })
export class OpenBankAccountRequestDto {
  @ApiProperty({
    format: 'uuid',
    description: 'A customer created through this service (or linked to your tenant).',
    example: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44',
  })
  @IsUuidField()
  readonly customer_id!: string;

  @ApiProperty({ enum: BANK_ACCOUNT_CURRENCIES, description: 'EUR (IBAN) or GBP (sort code and account number).', example: 'EUR' })
  @IsIn(BANK_ACCOUNT_CURRENCIES, { message: '$property must be EUR or GBP' })
  readonly currency!: BankAccountCurrency;

  @ApiProperty({ description: 'Digits with the country prefix (E.164), leading + optional.', example: '+4915123456789' })
  @IsPhoneNumber()
  readonly phone_number!: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Your transaction id and idempotency key; also signs the provider request. Generated and returned when absent.',
    example: '7d0c1f6e-5a43-4c1e-9b2a-2f6d8e0b9c11',
  })
  @IsOptional()
  @IsUuidField()
  readonly reference?: string;

  @ApiProperty({ description: 'Kind of identity document (the provider does not list its values).', example: 'passport', maxLength: 50 })
  @IsPrintableText(50)
  readonly document_type!: string;

  @ApiProperty({ description: 'Number of the document. Sent to the provider encrypted; never stored or logged.', example: 'C01X00T47', maxLength: 50 })
  @IsPrintableText(50)
  readonly document_number!: string;

  @ApiProperty({ description: 'ISO 3166-1 alpha-2 code of the issuing country, upper case.', example: 'DE' })
  @IsCountryCode()
  readonly issued_country_code!: string;

  @ApiProperty({ description: 'Issuing authority.', example: 'Stadt Berlin', maxLength: 100 })
  @IsPrintableText(100)
  readonly issued_by!: string;

  @ApiProperty({ format: 'date', description: 'YYYY-MM-DD, from 1900-01-01, not in the future, and before expiration_date.', example: '2020-01-15' })
  @Rules(IsPastCalendarDate({ todayAllowed: true }), IsBeforeDateField('expiration_date'))
  readonly issued_date!: string;

  @ApiProperty({
    format: 'date',
    description:
      'YYYY-MM-DD. On or after one calendar month from today (UTC); a day the next month lacks becomes its last day ' +
      '(on 2027-01-31 the earliest is 2027-02-28). The error names the earliest accepted date.',
    example: exampleDocumentExpiry(new Date()),
  })
  @IsAcceptedDocumentExpiry()
  readonly expiration_date!: string;

  @ApiProperty({ description: 'ISO 3166-1 alpha-2 country of the address, upper case.', example: 'DE' })
  @IsCountryCode()
  readonly country!: string;

  @ApiProperty({ description: 'Postal code.', example: '10115', maxLength: 20 })
  @IsPrintableText(20)
  readonly zip_code!: string;

  @ApiProperty({ description: 'Street or locality.', example: 'Invalidenstrasse 1', maxLength: 200 })
  @IsPrintableText(200)
  readonly street!: string;

  @ApiPropertyOptional({ description: 'State or region.', example: 'Berlin', maxLength: 100 })
  @IsOptional()
  @IsPrintableText(100)
  readonly state?: string;

  @ApiProperty({ format: 'date', description: 'YYYY-MM-DD, from 1900-01-01, in the past, and before issued_date.', example: '1990-12-10' })
  @Rules(IsPastCalendarDate(), IsBeforeDateField('issued_date'))
  readonly date_of_birth!: string;
}

/** The DTO declares exactly the provider's fields, by their wire names: this fails to compile otherwise. */
const declaresEveryField: SameKeys<keyof OpenBankAccountRequestDto, WireName<typeof BANK_ACCOUNT_FIELDS>> = true;
void declaresEveryField;
