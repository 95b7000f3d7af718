import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { AuthenticatedClient, EndUserProfile } from '../domain/api-client';

/** The end user as they are shown to themself: never stored by this service, never in the audit log or the logs. */
@ApiSchema({ name: 'EndUserProfile' })
export class EndUserProfileResponseDto {
  @ApiProperty({ example: 'demo', description: 'Their subject (`sub`) at their OpenID provider.' })
  readonly sub!: string;

  @ApiPropertyOptional({ example: 'Demo User', description: 'From the ID token (web apps), when the provider gives it.' })
  readonly name?: string;

  @ApiPropertyOptional({ example: 'demo', description: 'From the ID token (web apps), when the provider gives it.' })
  readonly preferred_username?: string;

  @ApiPropertyOptional({ example: 'demo@example.com', description: 'From the ID token (web apps), when the provider gives it.' })
  readonly email?: string;

  static from(profile: EndUserProfile): EndUserProfileResponseDto {
    return {
      sub: profile.subject,
      ...(profile.name !== undefined ? { name: profile.name } : {}),
      ...(profile.preferredUsername !== undefined ? { preferred_username: profile.preferredUsername } : {}),
      ...(profile.email !== undefined ? { email: profile.email } : {}),
    };
  }
}

/** A browser session, as its web app sees it (GET /api/v1/session): who and until when, never a token. */
@ApiSchema({ name: 'Session' })
export class SessionResponseDto {
  @ApiProperty({ format: 'uuid', example: '3f2c8a9e-6a55-4bd2-9d55-1b0f3c1e2a10', description: 'The end user’s pseudonym.' })
  readonly id!: string;

  @ApiProperty({ type: EndUserProfileResponseDto, description: 'Who they are, to themself: their subject and the ID token’s display claims.' })
  readonly user!: EndUserProfileResponseDto;

  @ApiProperty({ example: 'default' })
  readonly tenant!: string;

  @ApiProperty({ type: [String], example: ['customers:write', 'customers:read', 'balances:read', 'bank_accounts:write', 'bank_accounts:read'] })
  readonly scopes!: string[];

  @ApiProperty({
    type: [String],
    format: 'uuid',
    example: ['5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44'],
    description: 'Their customers (at most 1000, oldest first).',
  })
  readonly customer_ids!: string[];

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-24T18:00:00.000Z',
    description: 'The session ends then, however it is used (SESSION_ABSOLUTE_TIMEOUT_SECONDS).',
  })
  readonly expires_at!: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-24T06:30:00.000Z',
    description: 'The session ends then unless it is used before (SESSION_IDLE_TIMEOUT_SECONDS).',
  })
  readonly idle_expires_at!: string;

  static from(client: AuthenticatedClient, session: { expiresAt: Date; idleExpiresAt: Date }, customerIds: readonly string[]): SessionResponseDto {
    return {
      id: client.id,
      user: EndUserProfileResponseDto.from(client.profile ?? { subject: '' }),
      tenant: client.tenant,
      scopes: [...(client.scopes ?? [])],
      customer_ids: [...customerIds],
      expires_at: session.expiresAt.toISOString(),
      idle_expires_at: session.idleExpiresAt.toISOString(),
    };
  }
}
