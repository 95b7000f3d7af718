export interface Balance {
  readonly customerId: string;
  readonly currency: string;
  /** Decimal strings, as the provider sends them: never floats. */
  readonly available: string;
  readonly current: string;
  readonly asOf: string | null;
}

export abstract class BalanceGateway {
  /**
   * The customer's balance, in `currency` when given (the provider reads balances per customer; the
   * currency is asked as a query parameter, and what it answers says its own). Throws UpstreamError;
   * kind `not_found` when the provider knows no such customer.
   */
  abstract read(customerId: string, currency?: string): Promise<Balance>;
}
