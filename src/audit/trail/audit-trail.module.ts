import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RequestRecorder } from '../../common/http/request-recorder.port';
import { AuditSealModule } from '../seal/audit-seal.module';
import { AuditLog } from './domain/audit-log.port';
import { AuditTrail } from './domain/audit-trail.service';
import { RequestAuditor } from './http/request-auditor';
import { AuditEventEntity } from './persistence/audit-event.entity';
import { PostgresAuditLogRepository } from './persistence/postgres-audit-log.repository';

/** The trail: every request's events, written ahead (`attempted`) and at its end, through one port each way. */
@Module({
  // The seal's module holds the audit key, which signs a write's receipt.
  imports: [TypeOrmModule.forFeature([AuditEventEntity]), AuditSealModule],
  providers: [
    PostgresAuditLogRepository,
    { provide: AuditLog, useExisting: PostgresAuditLogRepository },
    AuditTrail,
    RequestAuditor,
    { provide: RequestRecorder, useExisting: RequestAuditor },
  ],
  exports: [AuditTrail, AuditLog, RequestRecorder, TypeOrmModule],
})
export class AuditTrailModule {}
