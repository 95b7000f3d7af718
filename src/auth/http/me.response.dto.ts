import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { AuthenticatedClient } from '../domain/api-client';
import { EndUserProfileResponseDto } from './session.response.dto';
import { CALLER_KINDS } from '../../common/domain/request-record';

/** Who a token belongs to (GET /api/v1/me). */
@ApiSchema({ name: 'Caller' })
export class CallerResponseDto {
  @ApiProperty({
    format: 'uuid',
    example: '3f2c8a9e-6a55-4bd2-9d55-1b0f3c1e2a10',
    description: 'The client’s id; for an end user, their pseudonym: the id support finds their audit events by.',
  })
  readonly id!: string;

  @ApiProperty({ example: 'acme-backend', description: 'The client’s name; `end-user` for every end user.' })
  readonly name!: string;

  @ApiProperty({ enum: CALLER_KINDS, example: 'partner' })
  readonly role!: string;

  @ApiProperty({ example: 'default', description: 'The tenant whose customers this caller sees.' })
  readonly tenant!: string;

  @ApiPropertyOptional({
    type: EndUserProfileResponseDto,
    description: 'End users only: who they are, to themself (their subject; with a web app’s session, the ID token’s display claims).',
  })
  readonly user?: EndUserProfileResponseDto;

  @ApiPropertyOptional({ type: [String], example: ['customers:write', 'balances:read'], description: 'End users only: the scopes their access token grants.' })
  readonly scopes?: string[];

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    example: ['5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44'],
    description: 'End users only: their customers (at most 1000, oldest first).',
  })
  readonly customer_ids?: string[];

  static from(client: AuthenticatedClient, customerIds?: readonly string[]): CallerResponseDto {
    const base = { id: client.id, name: client.name, role: client.role, tenant: client.tenant };
    return client.role === 'end_user'
      ? {
          ...base,
          ...(client.profile ? { user: EndUserProfileResponseDto.from(client.profile) } : {}),
          scopes: [...(client.scopes ?? [])],
          customer_ids: [...(customerIds ?? [])],
        }
      : base;
  }
}
