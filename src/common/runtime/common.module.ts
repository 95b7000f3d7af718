import { Global, Module } from '@nestjs/common';
import { Clock, SystemClock } from '../domain/clock.port';
import { PastCalendarDateConstraint } from '../http/date.validators';
import { Drain } from './drain';

@Global()
@Module({
  // Validation constraints that need the Clock are resolved from here (useContainer in bootstrap).
  providers: [{ provide: Clock, useClass: SystemClock }, PastCalendarDateConstraint, Drain],
  exports: [Clock, PastCalendarDateConstraint, Drain],
})
export class CommonModule {}
