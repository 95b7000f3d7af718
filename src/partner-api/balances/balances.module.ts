import { Module } from '@nestjs/common';
import { AuditModule } from '../../audit/audit.module';
import { CustomersModule } from '../customers/customers.module';
import { BalanceGateway } from './domain/balance.gateway.port';
import { BalancesService } from './domain/balances.service';
import { BalancesController } from './http/balances.controller';
import { UpstreamBalanceAdapter } from './upstream/upstream-balance.adapter';

@Module({
  imports: [AuditModule, CustomersModule],
  controllers: [BalancesController],
  providers: [BalancesService, { provide: BalanceGateway, useClass: UpstreamBalanceAdapter }],
})
export class BalancesModule {}
