import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { Rules, toDecimalInteger } from '../../../common/http/field-rules';
import { parseStatement } from '../domain/audit-seal';
import { StoredCheckpoint } from '../domain/audit-seal.port';

export const MAX_CHECKPOINTS = 100;

export class AuditCheckpointsQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_CHECKPOINTS, default: 10, description: 'How many of the newest checkpoints.' })
  @IsOptional()
  @Transform(toDecimalInteger)
  @Rules(
    IsInt({ message: 'limit must be an integer' }),
    Min(1, { message: `limit must be between 1 and ${MAX_CHECKPOINTS}` }),
    Max(MAX_CHECKPOINTS, { message: `limit must be between 1 and ${MAX_CHECKPOINTS}` }),
  )
  readonly limit?: number;
}

@ApiSchema({ name: 'AuditCheckpoint' })
export class AuditCheckpointResponseDto {
  @ApiProperty({ description: 'Its place in the chain, from 1.', example: 1842 })
  readonly seq!: number;

  @ApiProperty({ enum: ['seal', 'purge'], description: '`seal` covers new events; `purge` records a retention purge.', example: 'seal' })
  readonly kind!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:15:03.004Z' })
  readonly sealed_at!: string;

  @ApiProperty({ description: 'Events it covers.', example: 312 })
  readonly events!: number;

  @ApiProperty({
    description: 'SHA-256 of `statement`, hex: the next checkpoint names it as its previous.',
    example: '5f1c0c9e4a2b7d3e8f60a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6',
  })
  readonly head!: string;

  @ApiProperty({ description: 'The previous checkpoint’s head.', example: '0d4b8e2f7a6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4938271605f4e3d2c' })
  readonly prev_head!: string;

  @ApiProperty({ description: 'Id of the Ed25519 key that signed it.', example: '8c2f1e0d9b7a6354' })
  readonly key_id!: string;

  @ApiProperty({
    description: 'Ed25519 signature of `statement`, base64.',
    example: 'q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8l9z0x1c2v3b4n5m6q7w8e9r0t1y2u3i4o5p6a7s8d9f0g1h2j3==',
  })
  readonly signature!: string;

  @ApiProperty({
    description:
      'The signed text, exactly: keep it (with `signature` and `key_id`) outside the database, and `npm run audit:verify -- --checkpoints FILE` compares.',
  })
  readonly statement!: string;

  static from(checkpoint: StoredCheckpoint): AuditCheckpointResponseDto {
    const statement = parseStatement(checkpoint.statement);
    return {
      seq: checkpoint.seq,
      kind: checkpoint.kind,
      sealed_at: statement?.sealed_at ?? '',
      events: statement?.events ?? 0,
      head: checkpoint.head,
      prev_head: statement?.prev_head ?? '',
      key_id: checkpoint.keyId,
      signature: checkpoint.signature,
      statement: checkpoint.statement,
    };
  }
}

@ApiSchema({ name: 'AuditCheckpointList' })
export class AuditCheckpointsResponseDto {
  @ApiProperty({ type: [AuditCheckpointResponseDto], description: 'Newest first.' })
  readonly checkpoints!: AuditCheckpointResponseDto[];
}
