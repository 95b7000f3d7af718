import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { CustomerTenancy } from './domain/customer-tenancy.service';
import { CustomerOwnership } from './domain/customer-ownership.port';
import { CustomersService } from './domain/customers.service';
import { CustomersController } from './http/customers.controller';
import { MeController } from './http/me.controller';
import { CustomerTenantEntity } from './persistence/customer-tenant.entity';
import { TypeOrmCustomerOwnershipRepository } from './persistence/typeorm-customer-ownership.repository';

@Module({
  imports: [TypeOrmModule.forFeature([CustomerTenantEntity]), AuditModule, IdempotencyModule],
  controllers: [CustomersController, MeController],
  providers: [
    TypeOrmCustomerOwnershipRepository,
    { provide: CustomerOwnership, useExisting: TypeOrmCustomerOwnershipRepository },
    CustomerTenancy,
    CustomersService,
  ],
  exports: [CustomerTenancy],
})
export class CustomersModule {}
