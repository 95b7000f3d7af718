import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsPastCalendarDate } from '../../../common/http/date.validators';
import type { SameKeys, WireName } from '../../../common/domain/field-map';
import { CUSTOMER_FIELDS } from '../domain/customer.gateway.port';
import { IsCountryCode, IsEmailAddress, IsPhoneNumber, IsPrintableText, IsUuidField, MAX_EMAIL_LENGTH } from '../../../common/http/field-rules';

/**
 * The gateway's customer body. The provider does not publish its own, so this is the gateway's
 * choice (docs/decisions.md): enough to identify a person, nothing more.
 */
@ApiSchema({ name: 'CreateCustomerRequest' })
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

  @ApiProperty({ description: 'Email address.', example: 'ada@example.com', maxLength: MAX_EMAIL_LENGTH })
  @IsEmailAddress()
  readonly email!: string;

  @ApiProperty({ description: 'Digits with the country prefix (E.164), leading + optional.', example: '+447700900123' })
  @IsPhoneNumber()
  readonly phone_number!: string;

  @ApiPropertyOptional({ format: 'date', description: 'YYYY-MM-DD, from 1900-01-01, in the past.', example: '1990-12-10' })
  @IsOptional()
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
