import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RequestRecorder } from '../common/http/request-recorder.port';
import { AuditRetentionSchedule } from './audit-retention.schedule';
import { AuditLog } from './domain/audit-log.port';
import { AuditEventsService } from './domain/audit-events.service';
import { AuditRetention } from './domain/audit-retention.service';
import { AuditTrail } from './domain/audit-trail.service';
import { AuditEventsController } from './http/audit-events.controller';
import { AuditInterceptor } from './http/audit.interceptor';
import { RequestAuditor } from './http/request-auditor';
import { AuditEventEntity } from './persistence/audit-event.entity';
import { TypeOrmAuditLogRepository } from './persistence/typeorm-audit-log.repository';

@Module({
  imports: [TypeOrmModule.forFeature([AuditEventEntity])],
  controllers: [AuditEventsController],
  providers: [
    TypeOrmAuditLogRepository,
    { provide: AuditLog, useExisting: TypeOrmAuditLogRepository },
    AuditTrail,
    AuditEventsService,
    AuditRetention,
    AuditRetentionSchedule,
    RequestAuditor,
    { provide: RequestRecorder, useExisting: RequestAuditor },
    AuditInterceptor,
  ],
  exports: [AuditTrail, RequestRecorder, AuditInterceptor],
})
export class AuditModule {}
