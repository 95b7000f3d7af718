/**
 * What requests are audited as: the vocabulary of `audit_events.operation`. Every feature's
 * controller names its operation (`@Audited`) without depending on the audit feature.
 */
export const AUDIT_OPERATIONS = [
  'customer.create',
  'customer.link',
  'balance.read',
  'bank_account.create',
  'auth.rejected',
  'audit.query',
  'client.read',
  'client.list',
  'route.unknown',
] as const;
export type AuditOperation = (typeof AUDIT_OPERATIONS)[number];
