import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsPrintableText } from '../../../common/http/field-rules';

/** Which end user a customer is given to: their subject at the partner's OpenID provider. */
@ApiSchema({ name: 'AssignCustomerRequest' })
export class BindCustomerRequestDto {
  @ApiProperty({
    description: 'The end user’s subject (`sub`) at your OpenID provider. The service keeps only a keyed pseudonym of it.',
    example: 'demo',
    minLength: 1,
    maxLength: 255,
  })
  @IsPrintableText(255)
  readonly subject!: string;

  @ApiPropertyOptional({
    description: 'The end user’s issuer (its URL, as OIDC_ISSUER or OIDC_ISSUERS names it); needed only when the service trusts more than one.',
  })
  @IsOptional()
  @IsPrintableText(500)
  readonly issuer?: string;
}

@ApiSchema({ name: 'CustomerAssignment' })
export class BoundCustomerResponseDto {
  @ApiProperty({ format: 'uuid', example: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44' })
  readonly customer_id!: string;

  @ApiProperty({ format: 'uuid', description: 'The end user’s pseudonym: their `id` in GET /api/v1/me.', example: '0c3e8f5a-1b2d-8e4f-9a6b-7c8d9e0f1a2b' })
  readonly end_user_id!: string;

  @ApiProperty({ enum: ['bound', 'unchanged'], description: '`unchanged`: it already was theirs.', example: 'bound' })
  readonly binding!: 'bound' | 'unchanged';
}
