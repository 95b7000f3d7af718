import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { BankAccountsService } from './domain/bank-accounts.service';
import { BankAccountsController } from './http/bank-accounts.controller';
import { DocumentExpiryConstraint } from './http/document-expiry.validator';

@Module({
  imports: [CustomersModule, IdempotencyModule],
  controllers: [BankAccountsController],
  providers: [BankAccountsService, DocumentExpiryConstraint],
})
export class BankAccountsModule {}
