import { AuditEventEntity } from '../audit/persistence/audit-event.entity';
import { ApiClientEntity } from '../auth/persistence/api-client.entity';
import { CustomerTenantEntity } from '../customers/persistence/customer-tenant.entity';
import { IdempotencyKeyEntity } from '../idempotency/persistence/idempotency-key.entity';

/** Every TypeORM entity; listed so the module, the CLI and the data source agree. */
export const ENTITIES = [ApiClientEntity, AuditEventEntity, IdempotencyKeyEntity, CustomerTenantEntity];
