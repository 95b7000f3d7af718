import { Module } from '@nestjs/common';
import { AuditTrailModule } from '../trail/audit-trail.module';
import { AuditEventsService } from './domain/audit-events.service';
import { AuditSearch } from './domain/audit-search.port';
import { AuditEventsController } from './http/audit-events.controller';
import { TypeOrmAuditSearchRepository } from './persistence/typeorm-audit-search.repository';

/** Support's search of the audit log (GET /api/v1/audit-events). */
@Module({
  imports: [AuditTrailModule],
  controllers: [AuditEventsController],
  providers: [{ provide: AuditSearch, useClass: TypeOrmAuditSearchRepository }, AuditEventsService],
})
export class AuditSearchModule {}
