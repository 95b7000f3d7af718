import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../../idempotency/idempotency.module';
import { CustomersModule } from '../customers/customers.module';
import { BankAccountGateway } from './domain/bank-account.gateway.port';
import { BankAccountsService } from './domain/bank-accounts.service';
import { BankAccountsController } from './http/bank-accounts.controller';
import { DocumentExpiryConstraint } from './http/document-expiry.validator';
import { ProviderBankAccountAdapter } from './provider/provider-bank-account.adapter';

@Module({
  imports: [CustomersModule, IdempotencyModule],
  controllers: [BankAccountsController],
  providers: [BankAccountsService, DocumentExpiryConstraint, { provide: BankAccountGateway, useClass: ProviderBankAccountAdapter }],
})
export class BankAccountsModule {}
