import { Module } from '@nestjs/common';
import { EventsModule } from '../../partner-api/events/events.module';
import { AuditTrailModule } from '../trail/audit-trail.module';
import { RequestLogStore } from './domain/request-log.port';
import { RequestLog } from './domain/request-log.service';
import { RequestsController } from './http/requests.controller';
import { PostgresRequestLogRepository } from './persistence/postgres-request-log.repository';

/** Partners' own request logs (GET /api/v1/requests): the audit log, as a tenant's callers left it. */
@Module({
  imports: [AuditTrailModule, EventsModule],
  controllers: [RequestsController],
  providers: [{ provide: RequestLogStore, useClass: PostgresRequestLogRepository }, RequestLog],
})
export class RequestLogModule {}
