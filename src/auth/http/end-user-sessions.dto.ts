import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { Rules } from '../../common/http/field-rules';
import type { StoredSession } from '../domain/browser-session-store.port';

/** Whose sessions: an end user by their subject at their OpenID provider, as the audit search names them. */
@ApiSchema({ name: 'EndUserRef' })
export class EndUserRefDto {
  @ApiProperty({
    example: 'demo',
    description:
      'The end user’s subject (`sub`) at their OpenID provider. The service finds them by the pseudonym it derives; the subject is never stored or logged.',
  })
  @Rules(IsString(), MaxLength(255, { message: 'end_user must be a subject of at most 255 characters' }))
  readonly end_user!: string;

  @ApiPropertyOptional({ description: 'Their issuer, when the service trusts more than one (OIDC_ISSUERS).' })
  @IsOptional()
  @Rules(IsString(), MaxLength(500, { message: 'end_user_issuer must be an issuer URL' }))
  readonly end_user_issuer?: string;
}

/** One browser session, as an operator may see it: when, and until when; never its id, cookie or tokens. */
@ApiSchema({ name: 'EndUserSession' })
export class EndUserSessionResponseDto {
  @ApiProperty({ format: 'uuid', example: '3f2c8a9e-6a55-4bd2-9d55-1b0f3c1e2a10', description: 'The end user’s pseudonym.' })
  readonly end_user_id!: string;

  @ApiProperty({ example: 'default' })
  readonly tenant!: string;

  @ApiProperty({ example: 'https://login.partner.example', description: 'The OpenID provider the session was made at.' })
  readonly issuer!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T06:00:00.000Z', description: 'When the user logged in.' })
  readonly created_at!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T06:10:00.000Z', description: 'When the session was last used (written at most once a minute).' })
  readonly last_seen_at!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T18:00:00.000Z', description: 'When it ends, however it is used.' })
  readonly expires_at!: string;

  static from(session: StoredSession): EndUserSessionResponseDto {
    return {
      end_user_id: session.endUser,
      tenant: session.tenant,
      issuer: session.issuer,
      created_at: session.createdAt.toISOString(),
      last_seen_at: session.lastSeenAt.toISOString(),
      expires_at: session.expiresAt.toISOString(),
    };
  }
}

@ApiSchema({ name: 'EndedSessions' })
export class EndedSessionsResponseDto {
  @ApiProperty({ example: 2, description: 'How many sessions ended.' })
  readonly ended!: number;
}
