/**
 * What an end user's access token must grant for each operation (docs/security.md, "End users").
 * Partner and admin client tokens are not scoped: they act for the whole tenant.
 */
export const SCOPES = {
  createCustomer: 'customers:write',
  readBalance: 'balances:read',
  openBankAccount: 'bank_accounts:write',
} as const;

export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

export const ALL_SCOPES: readonly Scope[] = Object.values(SCOPES);

/** RFC 6749 section 3.3: `scope` is a space-delimited list; RFC 9068 carries it as the `scope` claim. */
export function scopesOf(claim: unknown): string[] {
  if (typeof claim !== 'string') return [];
  return [...new Set(claim.split(' ').filter((scope) => scope !== ''))];
}
