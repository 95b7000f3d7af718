/**
 * What requests are audited as (`audit_events.operation`): a name such as `customer.create`. The
 * partner API's slices each name their own (partner-api/domain/partner-api.vocabulary.ts lists
 * them); the service's own, those of the edge, the sign-in, the clients and the audit log itself,
 * are written once, here. Controllers (`@Audited`) refer to these constants without depending on
 * the audit feature.
 */
export type AuditOperation = string;

export const OPERATION = {
  rejectedAuthentication: 'auth.rejected',
  queryAudit: 'audit.query',
  accessReport: 'audit.access_report',
  listRequests: 'request_log.list',
  readRequest: 'request_log.read',
  readReceiptProof: 'receipt.proof',
  readConsistencyProof: 'checkpoint.consistency',
  readClient: 'client.read',
  listClients: 'client.list',
  startLogin: 'session.login',
  completeLogin: 'session.callback',
  readSession: 'session.read',
  logout: 'session.logout',
  backchannelLogout: 'session.backchannel_logout',
  listSessions: 'session.list',
  endSessions: 'session.end_all',
  unknownRoute: 'route.unknown',
  /** An admin path's use (docs/security.md, "Staff"): Swagger UI and the OpenAPI document, the metrics, the readiness details. */
  adminDocs: 'admin.docs',
  adminMetrics: 'admin.metrics',
  adminHealthDetails: 'admin.health_details',
} as const;

/** The service's own operations, in the order above. */
export const SERVICE_OPERATIONS: readonly AuditOperation[] = Object.values(OPERATION);
