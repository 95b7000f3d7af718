import { Module } from '@nestjs/common';
import { AuditReconciliationModule } from './reconciliation/audit-reconciliation.module';
import { AuditRetentionModule } from './retention/audit-retention.module';
import { AuditSealModule } from './seal/audit-seal.module';
import { AuditSearchModule } from './search/audit-search.module';
import { RequestLogModule } from './requests/request-log.module';
import { AuditTrailModule } from './trail/audit-trail.module';

/**
 * The audit log, by concern: the trail (what every request leaves), search (support's look-up),
 * partners' request logs (their own requests),
 * sealing (the signed hash chain), retention (the purge) and reconciliation (calls whose outcome
 * is unknown). The rest of the service uses the trail (AuditTrail, RequestRecorder) and the
 * sealer's status (AuditSealMonitor).
 */
@Module({
  imports: [AuditTrailModule, AuditSearchModule, RequestLogModule, AuditSealModule, AuditRetentionModule, AuditReconciliationModule],
  exports: [AuditTrailModule, AuditSealModule],
})
export class AuditModule {}
