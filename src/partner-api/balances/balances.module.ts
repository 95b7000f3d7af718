import { Module } from '@nestjs/common';
import { AuditModule } from '../../audit/audit.module';
import { BankAccountsModule } from '../bank-accounts/bank-accounts.module';
import { CustomersModule } from '../customers/customers.module';
import { BalanceGateway } from './domain/balance.gateway.port';
import { BalancesService } from './domain/balances.service';
import { BalancesController } from './http/balances.controller';
import { ProviderBalanceAdapter } from './provider/provider-balance.adapter';

@Module({
  imports: [AuditModule, CustomersModule, BankAccountsModule],
  controllers: [BalancesController],
  providers: [BalancesService, { provide: BalanceGateway, useClass: ProviderBalanceAdapter }],
})
export class BalancesModule {}
