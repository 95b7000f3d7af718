import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsInstant } from './date.validators';
import { Rules, toDecimalInteger } from './field-rules';

/** Items per page of a partner's lists, unless `limit` says otherwise, and at most. */
export const DEFAULT_LIST_PAGE = 20;
export const MAX_LIST_PAGE = 100;

/** What every list of a partner's resources takes: a created range, a page size, and the cursor (common/domain/list-cursor.ts). */
export class ListQueryDto {
  @ApiPropertyOptional({ description: 'Created at or after this instant (ISO 8601; a date means its midnight UTC).', example: '2026-12-01T00:00:00Z' })
  @IsOptional()
  @IsInstant('from')
  readonly from?: string;

  @ApiPropertyOptional({ description: 'Created before this instant (exclusive).', example: '2026-12-02T00:00:00Z' })
  @IsOptional()
  @IsInstant('to')
  readonly to?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_LIST_PAGE, default: DEFAULT_LIST_PAGE, description: 'Items per page.' })
  @IsOptional()
  @Transform(toDecimalInteger)
  @Rules(
    IsInt({ message: 'limit must be an integer' }),
    Min(1, { message: `limit must be between 1 and ${MAX_LIST_PAGE}` }),
    Max(MAX_LIST_PAGE, { message: `limit must be between 1 and ${MAX_LIST_PAGE}` }),
  )
  readonly limit?: number;

  @ApiPropertyOptional({ description: 'The `next_cursor` of the previous page.', maxLength: 200 })
  @IsOptional()
  @Rules(IsString(), MaxLength(200, { message: 'cursor is not one this service issued' }))
  readonly cursor?: string;
}

/** What a page of a list ends with. */
export class NextCursorDto {
  @ApiProperty({ nullable: true, type: String, description: 'Pass as `cursor` for the next, older page; null on the last page.', example: null })
  readonly next_cursor!: string | null;
}

/** A list query's created range, as the domain takes it: the instants as sent (checked), read by PostgreSQL to the microsecond. */
export function createdRange(query: Pick<ListQueryDto, 'from' | 'to'>): { from?: string; to?: string } {
  return { ...(query.from ? { from: utcInstant(query.from) } : {}), ...(query.to ? { to: utcInstant(query.to) } : {}) };
}

/**
 * An instant in UTC, as PostgreSQL reads it whatever its session's time zone: a date alone is its
 * midnight UTC; a date-time in UTC (`Z`, as the service writes `created_at`) is kept to the
 * microsecond; one with an offset is converted (PostgreSQL refuses offsets past ±15:59, which
 * IsInstant accepts, as ISO 8601 does).
 */
function utcInstant(instant: string): string {
  if (instant.length === 10) return `${instant}T00:00:00Z`;
  return instant.endsWith('Z') ? instant : new Date(instant).toISOString();
}
