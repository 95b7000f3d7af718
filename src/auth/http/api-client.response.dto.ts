import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ApiClient } from '../domain/api-client';
import { CLIENT_ROLES } from '../../common/domain/request-record';
import { API_VERSIONS, CURRENT_API_VERSION } from '../../common/domain/api-versions';

@ApiSchema({ name: 'ApiClient' })
export class ApiClientResponseDto {
  @ApiProperty({ format: 'uuid', example: '3f2c8a9e-6a55-4bd2-9d55-1b0f3c1e2a10' })
  readonly id!: string;

  @ApiProperty({ example: 'acme-backend' })
  readonly name!: string;

  @ApiProperty({ enum: CLIENT_ROLES, example: 'partner' })
  readonly role!: string;

  @ApiProperty({ example: 'default', description: 'The tenant whose customers this client sees.' })
  readonly tenant!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T08:00:00.000Z' })
  readonly created_at!: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null })
  readonly expires_at!: string | null;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null })
  readonly revoked_at!: string | null;

  @ApiProperty({
    enum: API_VERSIONS,
    example: CURRENT_API_VERSION,
    description: 'The API version its requests are answered under when they name none in `Gateway-Version`.',
  })
  readonly api_version!: string;

  static fromClient(client: ApiClient): ApiClientResponseDto {
    return {
      id: client.id,
      name: client.name,
      role: client.role,
      tenant: client.tenant,
      created_at: client.createdAt.toISOString(),
      expires_at: client.expiresAt?.toISOString() ?? null,
      revoked_at: client.revokedAt?.toISOString() ?? null,
      api_version: client.apiVersion,
    };
  }
}
