import { ApiProperty } from '@nestjs/swagger';
import { IsUuidField } from './field-rules';

/** The `customer_id` in a path. */
export class CustomerIdParamDto {
  @ApiProperty({
    format: 'uuid',
    description: 'A customer created through this service (or linked to your tenant).',
    example: '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44',
  })
  @IsUuidField()
  readonly customer_id!: string;
}
