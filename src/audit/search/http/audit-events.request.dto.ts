import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInstant } from '../../../common/http/date.validators';
import { Transform } from 'class-transformer';
import { IsUuidField, Rules, toDecimalInteger } from '../../../common/http/field-rules';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { RequestValidationFailed } from '../../../common/http/validation';
import { AUDIT_PHASES } from '../../trail/domain/audit-event';
import { AUDIT_OPERATIONS } from '../domain/audit-operations';
import type { AuditPhase } from '../../trail/domain/audit-event';
import type { AuditOperation } from '../../../common/domain/audit-operations';
import { MAX_AUDIT_PAGE } from '../domain/audit-events.service';

/** A reason: 3-200 characters, none of them a control character, and not only spaces. */
const REASON = /^(?=.*\S)[^\p{Cc}\p{Cs}]{3,200}$/su;
const REASON_RULE = 'reason must be a ticket id or a few words, 3-200 characters';
/**
 * REASON as the document says it: the length, and something other than white space (a pattern
 * every client's regular expressions read alike; "no control character" stays in the description).
 */
const REASON_SCHEMA = { minLength: 3, maxLength: 200, pattern: '\\S' };

/**
 * Who must say why they look: a staff member, at every read of the audit log's events (a person
 * looks; browsing is looking too); anyone, at a search about a customer, an end user or a
 * transaction (an admin token's automation included). Refused as a field of the query otherwise
 * (once its fields passed their own rules).
 * @throws RequestValidationFailed naming `reason`.
 */
export function requireReason(query: { reason?: string; reference?: string; customer_id?: string; end_user?: string }, callerKind: string | undefined): void {
  if (query.reason !== undefined) return;
  const aboutSomeone = query.reference !== undefined || query.customer_id !== undefined || query.end_user !== undefined;
  if (callerKind === 'staff') throw new RequestValidationFailed([{ field: 'reason', message: `reason is required of staff: ${REASON_RULE}` }]);
  if (aboutSomeone)
    throw new RequestValidationFailed([{ field: 'reason', message: `reason is required with reference, customer_id or end_user: ${REASON_RULE}` }]);
}

export class AuditEventsQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'The partner’s transaction reference.' })
  @IsOptional()
  @IsUuidField('reference must be a UUID')
  readonly reference?: string;

  @ApiPropertyOptional({
    description: 'An error id: the service’s `error.id` (a UUID, as shown to the partner) or the provider’s error id.',
    pattern: '^[A-Za-z0-9_.:-]{1,100}$',
  })
  @IsOptional()
  @Matches(/^[A-Za-z0-9_.:-]{1,100}$/, { message: 'error_id must be an error id: letters, digits and _ . : - only, at most 100' })
  readonly error_id?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'The customer the events are about.' })
  @IsOptional()
  @IsUuidField('customer_id must be a UUID')
  readonly customer_id?: string;

  @ApiPropertyOptional({ enum: AUDIT_OPERATIONS, description: 'What the request did.' })
  @IsOptional()
  @IsIn(AUDIT_OPERATIONS, { message: `operation must be one of ${AUDIT_OPERATIONS.join(', ')}` })
  readonly operation?: AuditOperation;

  @ApiPropertyOptional({ enum: AUDIT_PHASES, description: 'The event’s phase.' })
  @IsOptional()
  @IsIn(AUDIT_PHASES, { message: `outcome must be one of ${AUDIT_PHASES.join(', ')}` })
  readonly outcome?: AuditPhase;

  @ApiPropertyOptional({ format: 'uuid', description: 'The API client’s id.' })
  @IsOptional()
  @IsUuidField('client must be an API client id (UUID)')
  readonly client?: string;

  @ApiPropertyOptional({
    description: 'A staff member’s stable id at the company’s OpenID provider (`staff_id` in the events): what they did and looked at; no control character.',
    minLength: 1,
    maxLength: 255,
  })
  @IsOptional()
  @Rules(IsString(), Matches(/^[^\p{Cc}\p{Cs}]{1,255}$/u, { message: 'staff must be a staff id of at most 255 characters' }))
  readonly staff?: string;

  @ApiPropertyOptional({
    description:
      'An end user’s subject (`sub`) at their OpenID provider: their events, found by the pseudonym the service derives from it. ' +
      'The subject itself is never stored, and never logged.',
    maxLength: 255,
  })
  @IsOptional()
  @Rules(IsString(), MaxLength(255, { message: 'end_user must be a subject of at most 255 characters' }))
  readonly end_user?: string;

  @ApiPropertyOptional({ description: 'The end user’s issuer, when the service trusts more than one (OIDC_ISSUERS).', maxLength: 500 })
  @IsOptional()
  @Rules(IsString(), MaxLength(500, { message: 'end_user_issuer must be an issuer URL' }))
  readonly end_user_issuer?: string;

  @ApiPropertyOptional({
    description: 'Events at or after this instant (ISO 8601, such as 2026-11-01T00:00:00Z; a date means its midnight UTC).',
  })
  @IsOptional()
  @IsInstant('from')
  readonly from?: string;

  @ApiPropertyOptional({ description: 'Events before this instant (exclusive).' })
  @IsOptional()
  @IsInstant('to')
  readonly to?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_AUDIT_PAGE, default: 50, description: 'Events per page.' })
  @IsOptional()
  @Transform(toDecimalInteger)
  @Rules(
    IsInt({ message: 'limit must be an integer' }),
    Min(1, { message: `limit must be between 1 and ${MAX_AUDIT_PAGE}` }),
    Max(MAX_AUDIT_PAGE, { message: `limit must be between 1 and ${MAX_AUDIT_PAGE}` }),
  )
  readonly limit?: number;

  @ApiPropertyOptional({
    description:
      'Why you are looking: a ticket id or a few words (3-200 characters). Required of staff at every search, and of anyone with ' +
      '`reference`, `customer_id` or `end_user`: the search is recorded with its reason, by person (the access report). ' +
      'Name the ticket, not the customer: the reason is kept in the audit log.',
    example: 'SUP-1234',
    ...REASON_SCHEMA,
  })
  @IsOptional()
  @Rules(IsString({ message: REASON_RULE }), Matches(REASON, { message: REASON_RULE }))
  readonly reason?: string;

  @ApiPropertyOptional({ description: 'The `next_cursor` of the previous page.', maxLength: 200 })
  @IsOptional()
  @Rules(IsString(), MaxLength(200, { message: 'cursor is not one this service issued' }))
  readonly cursor?: string;
}

export class AuditEventReadQueryDto {
  @ApiPropertyOptional({
    description: 'Why you are looking: a ticket id or a few words (3-200 characters). Required of staff.',
    example: 'SUP-1234',
    ...REASON_SCHEMA,
  })
  @IsOptional()
  @Rules(IsString({ message: REASON_RULE }), Matches(REASON, { message: REASON_RULE }))
  readonly reason?: string;
}

export class AuditEventIdParamDto {
  @ApiProperty({ format: 'uuid', description: 'The event’s id.' })
  @IsUuidField('id must be a UUID')
  readonly id!: string;
}
