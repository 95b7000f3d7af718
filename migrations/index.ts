import { CreateApiClients1763712000000 } from './1763712000000-CreateApiClients';
import { CreateAuditEvents1763798400000 } from './1763798400000-CreateAuditEvents';
import { CreateIdempotencyAndTenancy1763884800000 } from './1763884800000-CreateIdempotencyAndTenancy';
import { ReferencesUniquePerGateway1763971200000 } from './1763971200000-ReferencesUniquePerGateway';
import { NotifyApiClientChanges1764057600000 } from './1764057600000-NotifyApiClientChanges';
import { PurgeAsOwner1764144000000 } from './1764144000000-PurgeAsOwner';
import { SealAuditEvents1764230400000 } from './1764230400000-SealAuditEvents';
import { EndUsers1764316800000 } from './1764316800000-EndUsers';
import { BrowserSessions1764403200000 } from './1764403200000-BrowserSessions';
import { AuditTraceIds1764489600000 } from './1764489600000-AuditTraceIds';
import { SessionRenewalClaims1764576000000 } from './1764576000000-SessionRenewalClaims';
import { OwnerKeepsTheAuditChain1764662400000 } from './1764662400000-OwnerKeepsTheAuditChain';
import { StaffAccess1764748800000 } from './1764748800000-StaffAccess';
import { RequestLogs1764835200000 } from './1764835200000-RequestLogs';
import { AuditReceipts1764921600000 } from './1764921600000-AuditReceipts';
import { AuditLogTree1765008000000 } from './1765008000000-AuditLogTree';
import { AuditSearchesApart1765094400000 } from './1765094400000-AuditSearchesApart';
import { DropSupersededAuditIndexes1765180800000 } from './1765180800000-DropSupersededAuditIndexes';
import { ApiClientVersion1765267200000 } from './1765267200000-ApiClientVersion';
import { PartnerResources1765353600000 } from './1765353600000-PartnerResources';
import { PartnerEvents1765440000000 } from './1765440000000-PartnerEvents';

/**
 * Every migration, oldest first. Listed rather than globbed so the same list works compiled,
 * under Jest and from the CLI. `npm run migration:generate -- Name` writes a new file: add it here.
 */
export const MIGRATIONS = [
  CreateApiClients1763712000000,
  CreateAuditEvents1763798400000,
  CreateIdempotencyAndTenancy1763884800000,
  ReferencesUniquePerGateway1763971200000,
  NotifyApiClientChanges1764057600000,
  PurgeAsOwner1764144000000,
  SealAuditEvents1764230400000,
  EndUsers1764316800000,
  BrowserSessions1764403200000,
  AuditTraceIds1764489600000,
  SessionRenewalClaims1764576000000,
  OwnerKeepsTheAuditChain1764662400000,
  StaffAccess1764748800000,
  RequestLogs1764835200000,
  AuditReceipts1764921600000,
  AuditLogTree1765008000000,
  AuditSearchesApart1765094400000,
  DropSupersededAuditIndexes1765180800000,
  ApiClientVersion1765267200000,
  PartnerResources1765353600000,
  PartnerEvents1765440000000,
];
