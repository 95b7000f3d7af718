import { ApiProperty } from '@nestjs/swagger';

const CHECKS = {
  type: 'object' as const,
  additionalProperties: { type: 'object' as const, properties: { status: { type: 'string' as const, enum: ['up', 'down'] } }, additionalProperties: true },
};

/** What readiness reports inside the envelope's `data`: each check by name. */
export class HealthStatusResponseDto {
  @ApiProperty({ enum: ['ok', 'error', 'shutting_down'], example: 'ok' })
  readonly status!: string;

  @ApiProperty({ ...CHECKS, description: 'Checks that are up', example: { database: { status: 'up' }, upstream: { status: 'up', circuit: 'closed' }, auditLog: { status: 'up', protected: true } } })
  readonly info!: Record<string, unknown>;

  @ApiProperty({ ...CHECKS, description: 'Checks that are down', example: {} })
  readonly error!: Record<string, unknown>;

  @ApiProperty({ ...CHECKS, description: 'Every check', example: { database: { status: 'up' }, upstream: { status: 'up', circuit: 'closed' }, auditLog: { status: 'up', protected: true } } })
  readonly details!: Record<string, unknown>;
}

export class LivenessResponseDto {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  readonly status!: string;
}
