import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { IsPastCalendarDate } from '../../common/http/date.validators';
import type { SameKeys, WireName } from '../../common/domain/field-map';
import { CUSTOMER_FIELDS } from '../domain/customer.gateway.port';
import { E164_MESSAGE, E164_PHONE, EMAIL_SHAPE, IsCountryCode, IsPrintableText, IsUuidField } from '../../common/http/field-rules';

/**
 * The gateway's customer body. The provider does not publish its own, so this is the gateway's
 * choice (docs/decisions.md): enough to identify a person, nothing more.
 */
export class CreateCustomerRequestDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Your transaction id and idempotency key. Generated and returned when absent; send it again to retry safely.',
    example: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b',
  })
  @IsOptional()
  @IsUuidField()
  readonly reference?: string;

  @ApiProperty({ description: 'Given name.', example: 'Ada', minLength: 1, maxLength: 100 })
  @IsPrintableText(100)
  readonly first_name!: string;

  @ApiProperty({ description: 'Family name.', example: 'Lovelace', minLength: 1, maxLength: 100 })
  @IsPrintableText(100)
  readonly last_name!: string;

  @ApiProperty({ description: 'Email address.', example: 'ada@example.com', maxLength: 254 })
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: '$property must be an email address' })
  @Matches(EMAIL_SHAPE, { message: '$property must be an email address' })
  readonly email!: string;

  @ApiProperty({ description: 'Digits with the country prefix (E.164), leading + optional.', example: '+447700900123' })
  @IsString()
  @Matches(E164_PHONE, { message: E164_MESSAGE })
  readonly phone_number!: string;

  @ApiPropertyOptional({ format: 'date', description: 'YYYY-MM-DD, from 1900-01-01, in the past.', example: '1990-12-10' })
  @IsOptional()
  @IsString()
  @IsPastCalendarDate()
  readonly date_of_birth?: string;

  @ApiPropertyOptional({ description: 'ISO 3166-1 alpha-2 country of residence, upper case.', example: 'GB' })
  @IsOptional()
  @IsCountryCode()
  readonly country?: string;
}

/** The DTO declares exactly the customer's fields, by their wire names: this fails to compile otherwise. */
const declaresEveryField: SameKeys<keyof CreateCustomerRequestDto, WireName<typeof CUSTOMER_FIELDS>> = true;
void declaresEveryField;
