import { ApiProperty } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { ACCOUNT_ID } from '../domain/identifiers';

/** The `id` of a bank account in a path. */
export class BankAccountIdParamDto {
  @ApiProperty({ description: 'The account’s id, as it was returned when the account was opened.', example: '0f9b5c2e-8d1a-4c3b-9e7f-6a5d4c3b2a19' })
  @Matches(ACCOUNT_ID, { message: 'id must be a bank account id: letters, digits and . _ : - only, at most 100' })
  readonly id!: string;
}
