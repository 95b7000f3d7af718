/**
 * What requests are audited as: the vocabulary of `audit_events.operation`, each name written
 * once, here. Controllers (`@Audited`), domain services and the provider adapters refer to these
 * constants without depending on the audit feature.
 */
export const OPERATION = {
  createCustomer: 'customer.create',
  linkCustomer: 'customer.link',
  bindCustomer: 'customer.bind',
  readBalance: 'balance.read',
  openBankAccount: 'bank_account.create',
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

export type AuditOperation = (typeof OPERATION)[keyof typeof OPERATION];

/** Every operation, in the order above (the OpenAPI document's enum). */
export const AUDIT_OPERATIONS: readonly AuditOperation[] = Object.values(OPERATION);

/** The operations that call the provider. */
export type ProviderOperation = typeof OPERATION.createCustomer | typeof OPERATION.readBalance | typeof OPERATION.openBankAccount;

/** The provider calls that change something there: each is made once per reference, recorded before it is made. */
export type ProviderWriteOperation = typeof OPERATION.createCustomer | typeof OPERATION.openBankAccount;
