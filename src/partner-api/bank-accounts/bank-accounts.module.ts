import { Module } from '@nestjs/common';
import { AuditModule } from '../../audit/audit.module';
import { IdempotencyModule } from '../../idempotency/idempotency.module';
import { CustomersModule } from '../customers/customers.module';
import { BankAccountGateway } from './domain/bank-account.gateway.port';
import { BankAccountRecords } from './domain/bank-account-records.port';
import { BankAccountsService } from './domain/bank-accounts.service';
import { BankAccountsController } from './http/bank-accounts.controller';
import { DocumentExpiryConstraint } from './http/document-expiry.validator';
import { PostgresBankAccountRepository } from './persistence/postgres-bank-account.repository';
import { BankAccountReconstruction } from './persistence/bank-account-reconstruction';
import { ProviderBankAccountAdapter } from './provider/provider-bank-account.adapter';

@Module({
  imports: [AuditModule, CustomersModule, IdempotencyModule],
  controllers: [BankAccountsController],
  providers: [
    BankAccountsService,
    DocumentExpiryConstraint,
    PostgresBankAccountRepository,
    BankAccountReconstruction,
    { provide: BankAccountRecords, useExisting: PostgresBankAccountRepository },
    { provide: BankAccountGateway, useClass: ProviderBankAccountAdapter },
  ],
  // Balances read an account's balance through its record; the customers slice lists a customer's accounts.
  exports: [BankAccountsService, BankAccountRecords],
})
export class BankAccountsModule {}
