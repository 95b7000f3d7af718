import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { Public } from '../auth/http/auth.decorators';
import { ApiErrorResponses } from '../common/api-envelope.decorators';
import { Drain, ShuttingDown } from '../common/drain';
import { DatabaseHealthIndicator, UpstreamCircuitIndicator } from './health.indicators';

@ApiTags('health')
@Public()
// Load balancers probe often and from few addresses; probes are never rate limited.
@SkipThrottle()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: DatabaseHealthIndicator,
    private readonly upstream: UpstreamCircuitIndicator,
    private readonly drain: Drain,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness: PostgreSQL answers and the instance is not shutting down (the provider circuit state is reported, not checked)' })
  @ApiErrorResponses(503)
  ready(): Promise<HealthCheckResult> {
    // Shutting down: the load balancer stops sending new requests while those in flight finish.
    if (this.drain.isDraining) throw new ShuttingDown();
    return this.health.check([() => this.database.check('database', 2000), () => this.upstream.check('upstream')]);
  }
}
