import { AuditEventEntity } from './audit/trail/persistence/audit-event.entity';
import { ApiClientEntity } from './auth/persistence/api-client.entity';
import { CustomerTenantEntity } from './partner-api/customers/persistence/customer-tenant.entity';
import { IdempotencyKeyEntity } from './idempotency/persistence/idempotency-key.entity';

/**
 * Every TypeORM entity, listed here at the composition root (database/ knows no feature) so that the
 * application and the TypeORM CLI agree.
 */
export const ENTITIES = [ApiClientEntity, AuditEventEntity, IdempotencyKeyEntity, CustomerTenantEntity];
