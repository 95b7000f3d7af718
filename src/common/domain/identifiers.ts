const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Any UUID, any version, either case. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** The ids the service records of the provider's bank accounts: what their paths and cursors accept. */
export const ACCOUNT_ID = /^[A-Za-z0-9._:-]{1,100}$/;

export function isAccountId(value: unknown): value is string {
  return typeof value === 'string' && ACCOUNT_ID.test(value);
}
