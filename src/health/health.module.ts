import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { AuditModule } from '../audit/audit.module';
import { AuditLogProtectionIndicator, AuditSealerIndicator, DatabaseHealthIndicator, UpstreamCircuitIndicator } from './health.indicators';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), AuditModule],
  controllers: [HealthController],
  providers: [DatabaseHealthIndicator, UpstreamCircuitIndicator, AuditLogProtectionIndicator, AuditSealerIndicator],
})
export class HealthModule {}
