import { Module } from '@nestjs/common';
import { AuditTrailModule } from '../trail/audit-trail.module';
import { AuditEventsService } from './domain/audit-events.service';
import { AuditSearch } from './domain/audit-search.port';
import { AuditAccessController } from './http/audit-access.controller';
import { AuditEventsController } from './http/audit-events.controller';
import { PostgresAuditSearchRepository } from './persistence/postgres-audit-search.repository';

/** Support's search of the audit log (GET /api/v1/audit-events), and compliance's access report (GET /api/v1/audit-access-report). */
@Module({
  imports: [AuditTrailModule],
  controllers: [AuditEventsController, AuditAccessController],
  providers: [{ provide: AuditSearch, useClass: PostgresAuditSearchRepository }, AuditEventsService],
})
export class AuditSearchModule {}
