import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { CustomersModule } from '../customers/customers.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { UpstreamBankAccountAdapter } from '../upstream/upstream-bank-account.adapter';
import { BankAccountGateway } from './domain/bank-account.gateway.port';
import { BankAccountsService } from './domain/bank-accounts.service';
import { BankAccountsController } from './http/bank-accounts.controller';
import { DocumentExpiryConstraint } from './http/document-expiry.validator';

@Module({
  imports: [AuditModule, CustomersModule, IdempotencyModule],
  controllers: [BankAccountsController],
  providers: [{ provide: BankAccountGateway, useExisting: UpstreamBankAccountAdapter }, BankAccountsService, DocumentExpiryConstraint],
})
export class BankAccountsModule {}
