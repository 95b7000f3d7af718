import { Global, Module } from '@nestjs/common';
import { EndUserCustomers } from '../../auth/domain/end-user-customers.port';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../../audit/audit.module';
import { IdempotencyModule } from '../../idempotency/idempotency.module';
import { CustomerTenancy } from './domain/customer-tenancy.service';
import { CustomerOwnership } from './domain/customer-ownership.port';
import { CustomerDirectory } from './domain/customer-directory.port';
import { CustomerGateway } from './domain/customer.gateway.port';
import { CustomersService } from './domain/customers.service';
import { ProviderCustomerAdapter } from './provider/provider-customer.adapter';
import { CustomersController } from './http/customers.controller';
import { CustomerTenantEntity } from './persistence/customer-tenant.entity';
import { PostgresCustomerOwnershipRepository } from './persistence/postgres-customer-ownership.repository';

/** Global: the browser session (auth) asks it for an end user's customers, without importing this feature. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([CustomerTenantEntity]), AuditModule, IdempotencyModule],
  controllers: [CustomersController],
  providers: [
    PostgresCustomerOwnershipRepository,
    { provide: CustomerOwnership, useExisting: PostgresCustomerOwnershipRepository },
    { provide: EndUserCustomers, useExisting: PostgresCustomerOwnershipRepository },
    { provide: CustomerDirectory, useExisting: PostgresCustomerOwnershipRepository },
    CustomerTenancy,
    CustomersService,
    { provide: CustomerGateway, useClass: ProviderCustomerAdapter },
  ],
  exports: [CustomerTenancy, EndUserCustomers],
})
export class CustomersModule {}
