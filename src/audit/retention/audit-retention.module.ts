import { Module } from '@nestjs/common';
import { AuditSealModule } from '../seal/audit-seal.module';
import { AuditRetentionSchedule } from './audit-retention.schedule';
import { AuditRetention } from './domain/audit-retention.service';

/** Retention: events past AUDIT_RETENTION_DAYS are purged, whole checkpoints at a time, daily (npm run audit:purge). */
@Module({
  imports: [AuditSealModule],
  providers: [AuditRetention, AuditRetentionSchedule],
})
export class AuditRetentionModule {}
