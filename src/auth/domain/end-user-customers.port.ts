/**
 * The customers an end user has, as their browser session shows them to the web app. The customers
 * feature provides it (it owns who owns what); the session only asks.
 */
export abstract class EndUserCustomers {
  /** The customer ids the end user (by pseudonym) owns in the tenant, oldest first (at most 1000). */
  abstract customersOf(tenant: string, endUser: string): Promise<string[]>;
}
