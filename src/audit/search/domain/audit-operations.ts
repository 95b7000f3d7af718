import { SERVICE_OPERATIONS } from '../../../common/domain/audit-operations';
import { PARTNER_OPERATIONS } from '../../../partner-api/domain/partner-api.vocabulary';

/** Every operation the audit log names, the partner API's first: what its filters accept and its documents list. */
export const AUDIT_OPERATIONS: readonly string[] = [...PARTNER_OPERATIONS, ...SERVICE_OPERATIONS];
