import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { CustomersModule } from '../customers/customers.module';
import { BalancesService } from './domain/balances.service';
import { BalancesController } from './http/balances.controller';

@Module({
  imports: [AuditModule, CustomersModule],
  controllers: [BalancesController],
  providers: [BalancesService],
})
export class BalancesModule {}
