import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { CustomersModule } from '../customers/customers.module';
import { UpstreamBalanceAdapter } from '../upstream/upstream-balance.adapter';
import { BalanceGateway } from './domain/balance.gateway.port';
import { BalancesService } from './domain/balances.service';
import { BalancesController } from './http/balances.controller';

@Module({
  imports: [AuditModule, CustomersModule],
  controllers: [BalancesController],
  providers: [{ provide: BalanceGateway, useExisting: UpstreamBalanceAdapter }, BalancesService],
})
export class BalancesModule {}
