import { ApiProperty, ApiSchema } from '@nestjs/swagger';

const CHECKS = {
  type: 'object' as const,
  additionalProperties: { type: 'object' as const, properties: { status: { type: 'string' as const, enum: ['up', 'down'] } }, additionalProperties: true },
};

const READY_EXAMPLE = {
  database: { status: 'up' },
  upstream: { status: 'up', circuit: 'closed' },
  auditLog: { status: 'up', protected: true },
  auditSealer: {
    status: 'up',
    state: 'running',
    newestCheckpoint: { seq: 1234, sealedAt: '2026-11-23T12:00:00.000Z' },
    oldestUnsealedAgeSeconds: 0.4,
    maxLagSeconds: 300,
    lagging: false,
    checkedAt: '2026-11-23T12:00:00.500Z',
  },
};

/** What /health/details reports inside the envelope's `data` (admin): each readiness check by name. */
@ApiSchema({ name: 'HealthDetails' })
export class HealthStatusResponseDto {
  @ApiProperty({ enum: ['ok', 'error', 'shutting_down'], example: 'ok' })
  readonly status!: string;

  @ApiProperty({ ...CHECKS, description: 'Checks that are up', example: READY_EXAMPLE })
  readonly info!: Record<string, unknown>;

  @ApiProperty({ ...CHECKS, description: 'Checks that are down', example: {} })
  readonly error!: Record<string, unknown>;

  @ApiProperty({ ...CHECKS, description: 'Every check', example: READY_EXAMPLE })
  readonly details!: Record<string, unknown>;
}

/** What /health/ready answers anyone: the verdict alone (a 503 says the other one). */
@ApiSchema({ name: 'Readiness' })
export class ReadinessResponseDto {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  readonly status!: string;
}

@ApiSchema({ name: 'Liveness' })
export class LivenessResponseDto {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  readonly status!: string;
}
