import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { AuditLogProtectionIndicator, DatabaseHealthIndicator, UpstreamCircuitIndicator } from './health.indicators';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [DatabaseHealthIndicator, UpstreamCircuitIndicator, AuditLogProtectionIndicator],
})
export class HealthModule {}
