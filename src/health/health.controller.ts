import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { Public, Roles, Staff } from '../auth/http/auth.decorators';
import { DomainError } from '../common/domain/domain-error';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../common/http/api-envelope.decorators';
import { HealthStatusResponseDto, LivenessResponseDto, ReadinessResponseDto } from './health-status.response.dto';
import { Drain, ShuttingDown } from '../common/runtime/drain';
import { Metrics } from '../common/domain/metrics.port';
import { AuditLogProtectionIndicator, AuditSealerIndicator, DatabaseHealthIndicator, UpstreamCircuitIndicator } from './health.indicators';

/** Where an admin reads what each readiness check found (an admin path: src/auth/http/admin-paths.ts). */
const DETAILS_PATH = '/health/details';

/** Readiness failed: the answer says so and nothing else (which check, and why, is the admin's: DETAILS_PATH). */
export class NotReady extends DomainError {
  constructor() {
    super('SERVICE.NOT_READY', { details: `A readiness check failed; an admin reads which at GET ${DETAILS_PATH}` });
  }
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: DatabaseHealthIndicator,
    private readonly upstream: UpstreamCircuitIndicator,
    private readonly auditLog: AuditLogProtectionIndicator,
    private readonly auditSealer: AuditSealerIndicator,
    private readonly drain: Drain,
    private readonly metrics: Metrics,
  ) {}

  @Get('live')
  @Public()
  @ApiEnvelopeResponse(200, LivenessResponseDto)
  @ApiOperation({
    operationId: 'getLiveness',
    summary: 'Liveness: the process answers',
    description: 'For the orchestrator’s liveness probe; no dependency is checked. Never rate limited.',
  })
  @ApiErrorResponses(ERRORS.probe)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  // Load balancers probe often and from few addresses; probes are never rate limited (see isLimited),
  // and read no credentials (see the identify stage).
  @Public()
  // Documented here (inside the envelope), not by Terminus (which documents the bare result).
  @HealthCheck({ swaggerDocumentation: false })
  @ApiEnvelopeResponse(200, ReadinessResponseDto)
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Readiness: PostgreSQL answers and the instance is not shutting down',
    description:
      'For the load balancer. 503 while PostgreSQL does not answer or while the instance drains for shutdown. The answer is the verdict alone, for anyone: what each check found (the provider circuit, the audit log’s protection, the audit sealer) is for an admin, at `GET /health/details`. Never rate limited.',
  })
  @ApiErrorResponses(ERRORS.probe, 'SERVICE.NOT_READY')
  async ready(): Promise<{ status: 'ok' }> {
    try {
      // Shutting down: the load balancer stops sending new requests while those in flight finish.
      if (this.drain.isDraining) throw new ShuttingDown();
      if ((await this.check()).status !== 'ok') throw new NotReady();
      this.metrics.readiness(true);
      return { status: 'ok' };
    } catch (error) {
      this.metrics.readiness(false);
      throw error;
    }
  }

  @Get('details')
  @Roles('admin')
  @Staff('operator')
  @ApiBearerAuth()
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  @ApiEnvelopeResponse(200, HealthStatusResponseDto)
  @ApiOperation({
    operationId: 'getHealthDetails',
    summary: 'What each readiness check found (admin)',
    description:
      'The checks behind `/health/ready`, each by name: PostgreSQL (which alone, with shutting down, fails readiness), and, reported but never failing it, the provider circuit state, whether the audit log is protected from the service’s own database role (`auditLog.protected`), and the audit sealer (`auditSealer`: its state, the newest checkpoint, how long the oldest event waiting to be sealed has waited, and `lagging` past AUDIT_SEAL_MAX_LAG_SECONDS). ' +
      'Answers 200 whatever the verdict, which `status` says: `ok`, `error` (a check failed; `error` names it) or `shutting_down` (for these two, `/health/ready` answers 503). While PostgreSQL does not answer, the admin’s token cannot be checked either: 503 `DATABASE.UNAVAILABLE`.',
  })
  @ApiErrorResponses(ERRORS.staff, 'DATABASE.UNAVAILABLE')
  async details(): Promise<HealthCheckResult | (Omit<HealthCheckResult, 'status'> & { status: 'shutting_down' })> {
    const result = await this.check();
    return this.drain.isDraining ? { ...result, status: 'shutting_down' } : result;
  }

  /** Every check, failed or not: Terminus reports a failure by throwing the same result. */
  private async check(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([
        () => this.database.check('database', 2000),
        () => this.upstream.check('upstream'),
        () => this.auditLog.check('auditLog'),
        () => this.auditSealer.check('auditSealer'),
      ]);
    } catch (error) {
      if (error instanceof ServiceUnavailableException) return error.getResponse() as HealthCheckResult;
      throw error;
    }
  }
}
