import { Module } from '@nestjs/common';
import { EventsService } from './domain/events.service';
import { PartnerEventLog } from './domain/partner-event';
import { EventsController } from './http/events.controller';
import { PostgresPartnerEventLog } from './persistence/postgres-event-log.repository';

/** The tenant's events (the outbox the other slices write with their facts), read back. */
@Module({
  controllers: [EventsController],
  providers: [EventsService, { provide: PartnerEventLog, useClass: PostgresPartnerEventLog }],
  exports: [PartnerEventLog],
})
export class EventsModule {}
