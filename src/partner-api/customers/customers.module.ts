import { Global, Module } from '@nestjs/common';
import { EndUserCustomers } from '../../auth/domain/end-user-customers.port';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../../audit/audit.module';
import { IdempotencyModule } from '../../idempotency/idempotency.module';
import { CustomerTenancy } from './domain/customer-tenancy.service';
import { CustomerOwnership } from './domain/customer-ownership.port';
import { CustomerGateway } from './domain/customer.gateway.port';
import { CustomersService } from './domain/customers.service';
import { UpstreamCustomerAdapter } from './upstream/upstream-customer.adapter';
import { CustomersController } from './http/customers.controller';
import { CustomerTenantEntity } from './persistence/customer-tenant.entity';
import { TypeOrmCustomerOwnershipRepository } from './persistence/typeorm-customer-ownership.repository';

/** Global: the browser session (auth) asks it for an end user's customers, without importing this feature. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([CustomerTenantEntity]), AuditModule, IdempotencyModule],
  controllers: [CustomersController],
  providers: [
    TypeOrmCustomerOwnershipRepository,
    { provide: CustomerOwnership, useExisting: TypeOrmCustomerOwnershipRepository },
    { provide: EndUserCustomers, useExisting: TypeOrmCustomerOwnershipRepository },
    CustomerTenancy,
    CustomersService,
    { provide: CustomerGateway, useClass: UpstreamCustomerAdapter },
  ],
  exports: [CustomerTenancy, EndUserCustomers],
})
export class CustomersModule {}
