/**
 * What an end user's access token must grant for an operation is named by the operation's slice
 * (docs/security.md, "End users"; partner-api/domain/partner-api.vocabulary.ts lists them). Partner
 * and admin client tokens are not scoped: they act for the whole tenant.
 */
export type Scope = string;

/** RFC 6749 section 3.3: `scope` is a space-delimited list; RFC 9068 carries it as the `scope` claim. */
export function scopesOf(claim: unknown): string[] {
  if (typeof claim !== 'string') return [];
  return [...new Set(claim.split(' ').filter((scope) => scope !== ''))];
}
