import { Module } from '@nestjs/common';
import { AuditTrailModule } from '../trail/audit-trail.module';
import { UnresolvedCalls } from './domain/unresolved-calls.service';
import { UnresolvedCallsController } from './http/unresolved-calls.controller';
import { UnresolvedCallsCount } from './unresolved-calls.schedule';

/** The calls whose outcome is unknown, for support to settle (GET /api/v1/unresolved-calls; npm run audit:reconcile). */
@Module({
  imports: [AuditTrailModule],
  controllers: [UnresolvedCallsController],
  providers: [UnresolvedCalls, UnresolvedCallsCount],
})
export class AuditReconciliationModule {}
