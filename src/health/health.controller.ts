import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { Public } from '../auth/http/auth.decorators';
import { ApiEnvelopeResponse, ApiErrorResponses } from '../common/http/api-envelope.decorators';
import { HealthStatusResponseDto, LivenessResponseDto } from './health-status.response.dto';
import { Drain, ShuttingDown } from '../common/runtime/drain';
import { Metrics } from '../common/domain/metrics.port';
import { AuditLogProtectionIndicator, AuditSealerIndicator, DatabaseHealthIndicator, UpstreamCircuitIndicator } from './health.indicators';

@ApiTags('health')
@Public()
// Load balancers probe often and from few addresses; probes are never rate limited (see isLimited).
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
  @ApiEnvelopeResponse(200, LivenessResponseDto)
  @ApiOperation({
    summary: 'Liveness: the process answers',
    description: 'For the orchestrator’s liveness probe; no dependency is checked. Never rate limited.',
  })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  // Documented here (inside the envelope), not by Terminus (which documents the bare result).
  @HealthCheck({ swaggerDocumentation: false })
  @ApiEnvelopeResponse(200, HealthStatusResponseDto)
  @ApiOperation({
    summary: 'Readiness: PostgreSQL answers and the instance is not shutting down',
    description:
      'For the load balancer. 503 while PostgreSQL does not answer or while the instance drains for shutdown. Reported, not checked: the provider circuit state, whether the audit log is protected from the service’s own database role (`auditLog.protected`), and the audit sealer (`auditSealer`: its state, the newest checkpoint, how long the oldest event waiting to be sealed has waited, and `lagging` past AUDIT_SEAL_MAX_LAG_SECONDS). Never rate limited.',
  })
  @ApiErrorResponses('SERVICE.NOT_READY')
  async ready(): Promise<HealthCheckResult> {
    try {
      // Shutting down: the load balancer stops sending new requests while those in flight finish.
      if (this.drain.isDraining) throw new ShuttingDown();
      const result = await this.health.check([
        () => this.database.check('database', 2000),
        () => this.upstream.check('upstream'),
        () => this.auditLog.check('auditLog'),
        () => this.auditSealer.check('auditSealer'),
      ]);
      this.metrics.readiness(true);
      return result;
    } catch (error) {
      this.metrics.readiness(false);
      throw error;
    }
  }
}
