import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { Public } from '../auth/http/auth.decorators';
import { ApiErrorResponses } from '../common/api-envelope.decorators';
import { DatabaseHealthIndicator, UpstreamCircuitIndicator } from './health.indicators';

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: DatabaseHealthIndicator,
    private readonly upstream: UpstreamCircuitIndicator,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness: PostgreSQL answers (the provider circuit state is reported, not checked)' })
  @ApiErrorResponses(503)
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.database.check('database', 2000), () => this.upstream.check('upstream')]);
  }
}
