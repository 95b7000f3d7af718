import { AuditEventEntity } from '../audit/persistence/audit-event.entity';
import { ApiClientEntity } from '../auth/persistence/api-client.entity';

/** Every TypeORM entity; listed so the module, the CLI and the data source agree. */
export const ENTITIES = [ApiClientEntity, AuditEventEntity];
